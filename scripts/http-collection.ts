/**
 * A request collection generated from the spec (by `npm run generate`, into generated/): one
 * request per operation with the spec's example values, in the `.http` format that the JetBrains
 * HTTP client and VS Code's REST Client run, and environments for the mock and the service. An
 * operation also gets one request per query parameter that has an example (a filter worth
 * showing), one per media type its 200 offers besides JSON (with that `Accept`), and, for a command
 * that takes an `Idempotency-Key`, one asking for a failure on demand with a test key
 * (`Subsvc-Test-Outcome`, docs/sandbox.md).
 */
import { exampleRequests, type ExampleRequest } from '../src/http/docs-samples.js';

export const ENVIRONMENTS = {
  mock: { baseUrl: 'http://127.0.0.1:4010', apiKey: 'sk_any-key-the-mock-accepts', testApiKey: 'sk_test_any-key-the-mock-accepts' },
  service: {
    baseUrl: 'http://127.0.0.1:8080',
    apiKey: 'paste the API key that npm start prints',
    testApiKey: 'paste the test API key that npm start prints',
  },
};

interface QueryParameter {
  readonly name: string;
  readonly in: string;
  readonly example?: unknown;
}
interface Operation {
  readonly operationId: string;
  readonly parameters?: readonly (QueryParameter & { readonly $ref?: string })[];
  readonly responses?: Record<string, { readonly content?: Record<string, unknown> }>;
}
interface Spec {
  readonly paths: Record<string, Record<string, Operation>>;
  readonly components: { readonly parameters: Record<string, QueryParameter> };
}

/** A request as the collection writes it: the operation's example, with a query or an `Accept`. */
interface Variant {
  readonly title: string;
  readonly query?: string;
  readonly accept?: string;
  /** Headers beside the key, which is then the test key. */
  readonly headers?: readonly string[];
}

const TEST_OUTCOME = 'Subsvc-Test-Outcome';

function operationsById(spec: Spec): Map<string, Operation> {
  return new Map(
    Object.values(spec.paths).flatMap((item) =>
      Object.values(item)
        .filter((op) => op && typeof op === 'object' && 'operationId' in op)
        .map((op) => [op.operationId, op] as const),
    ),
  );
}

function variantsOf(spec: Spec, operation: Operation | undefined): Variant[] {
  const parameters = (operation?.parameters ?? []).map((p) => (p.$ref ? spec.components.parameters[p.$ref.split('/').pop()!]! : p));
  const queries = parameters
    .filter((p) => p.in === 'query' && p.example !== undefined)
    .map((p) => ({ title: `by ${p.name}`, query: `${p.name}=${encodeURIComponent(String(p.example))}` }));
  const media = Object.keys(operation?.responses?.['200']?.content ?? {}).filter((type) => type !== 'application/json');
  const outcome = parameters.find((p) => p.in === 'header' && p.name === TEST_OUTCOME);
  const key = parameters.find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
  const failures =
    outcome && key
      ? [
          {
            title: `failing on demand`,
            headers: [`${TEST_OUTCOME}: ${String(outcome.example)}`, `Idempotency-Key: ${String(key.example)}`],
          },
        ]
      : [];
  return [...queries, ...media.map((type) => ({ title: `as ${type}`, accept: type })), ...failures];
}

function httpRequest({ operationId, summary, method, path, body }: ExampleRequest, variant?: Variant): string {
  return [
    `### ${summary}${variant ? `, ${variant.title}` : ''} (${operationId})`,
    `${method} {{baseUrl}}${path}${variant?.query ? `?${variant.query}` : ''}`,
    variant?.headers ? 'x-api-key: {{testApiKey}}' : 'x-api-key: {{apiKey}}',
    ...(variant?.accept ? [`accept: ${variant.accept}`] : []),
    ...(variant?.headers ?? []),
    // A file's body (an import's) is sent as it is written.
    ...(body
      ? [`content-type: ${body.mediaType}`, '', typeof body.value === 'string' ? body.value.trimEnd() : JSON.stringify(body.value, null, 2)]
      : []),
  ].join('\n');
}

export function httpCollection(spec: unknown): string {
  const operations = operationsById(spec as Spec);
  const requests = exampleRequests(spec).flatMap((request) => [
    httpRequest(request),
    ...variantsOf(spec as Spec, operations.get(request.operationId)).map((variant) => httpRequest(request, variant)),
  ]);
  return `# Generated from openapi/openapi.yaml by npm run generate; do not edit.\n# Environments (http-client.env.json): "mock" (npm run mock) and "service" (npm start).\n\n${requests.join('\n\n')}\n`;
}
