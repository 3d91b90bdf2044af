/**
 * A request collection generated from the spec (by `npm run generate`, into generated/): one
 * request per operation with the spec's example values, in the `.http` format that the JetBrains
 * HTTP client and VS Code's REST Client run, and environments for the mock and the service.
 */
import { exampleRequests } from '../src/http/docs-samples.js';

export const ENVIRONMENTS = {
  mock: { baseUrl: 'http://127.0.0.1:4010', apiKey: 'sk_any-key-the-mock-accepts' },
  service: { baseUrl: 'http://127.0.0.1:8080', apiKey: 'paste the API key that npm start prints' },
};

export function httpCollection(spec: unknown): string {
  const requests = exampleRequests(spec).map(({ operationId, summary, method, path, body }) =>
    [
      `### ${summary} (${operationId})`,
      `${method} {{baseUrl}}${path}`,
      'x-api-key: {{apiKey}}',
      ...(body ? ['content-type: application/json', '', JSON.stringify(body.value, null, 2)] : []),
    ].join('\n'),
  );
  return `# Generated from openapi/openapi.yaml by npm run generate; do not edit.\n# Environments (http-client.env.json): "mock" (npm run mock) and "service" (npm start).\n\n${requests.join('\n\n')}\n`;
}
