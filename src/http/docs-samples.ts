/**
 * Code samples for the API reference, derived from the spec so that they cannot drift from it:
 * per operation, a curl command and a call through the generated TypeScript client, both with the
 * spec's example values. Redoc shows `x-codeSamples` next to each operation.
 */
interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly example?: unknown;
  readonly $ref?: string;
}
interface Operation {
  readonly operationId: string;
  readonly tags?: readonly string[];
  readonly parameters?: readonly Parameter[];
  readonly requestBody?: { readonly $ref?: string };
  'x-codeSamples'?: { lang: string; label: string; source: string }[];
}
interface Spec {
  readonly servers?: readonly { readonly url: string }[];
  readonly paths: Record<string, Record<string, Operation>>;
  readonly components: {
    readonly parameters: Record<string, Parameter>;
    readonly requestBodies: Record<string, { content: Record<string, { schema: { $ref: string }; examples?: Record<string, { value: unknown }> }> }>;
  };
}

const lastSegment = (ref: string) => ref.split('/').pop()!;
const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

/** The generated client's class for a tag: `Bulk requests` → `BulkRequestsApi`. */
const clientClass = (tag: string) => `${tag.split(/\s+/).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')}Api`;

/** A bulk body's example for a required body; single operations are shown without a body. */
function bodyExample(spec: Spec, operation: Operation): { param: string; value: unknown } | undefined {
  const ref = operation.requestBody?.$ref;
  if (!ref) return undefined;
  const body = spec.components.requestBodies[lastSegment(ref)]!;
  const media = body.content['application/json']!;
  const required = (body as { required?: boolean }).required === true;
  if (!required) return undefined;
  return { param: lowerFirst(lastSegment(media.schema.$ref)), value: Object.values(media.examples ?? {})[0]?.value };
}

function samples(spec: Spec, path: string, method: string, operation: Operation): Operation['x-codeSamples'] {
  const base = spec.servers?.[0]?.url ?? 'http://127.0.0.1:8080';
  const params = (operation.parameters ?? []).map((p) => (p.$ref ? spec.components.parameters[lastSegment(p.$ref)]! : p));
  const pathParams = params.filter((p) => p.in === 'path');
  const concrete = pathParams.reduce((at, p) => at.replace(`{${p.name}}`, String(p.example)), path);
  const body = bodyExample(spec, operation);
  const curl = [
    `curl -s${method === 'get' ? '' : ` -X ${method.toUpperCase()}`} '${base}${concrete}' -H "x-api-key: $API_KEY"`,
    ...(body ? [`  -H 'content-type: application/json' -d '${JSON.stringify(body.value)}'`] : []),
  ].join(' \\\n');
  const args = [...pathParams.map((p) => `${p.name}: '${String(p.example)}'`), ...(body ? [`${body.param}: ${JSON.stringify(body.value)}`] : [])];
  const api = clientClass(operation.tags?.[0] ?? 'Default');
  const typescript = [
    `import { Configuration, ${api} } from './generated/client/index.js';`,
    '',
    `const api = new ${api}(new Configuration({ basePath: '${base}', apiKey: process.env.API_KEY }));`,
    `const result = await api.${operation.operationId}(${args.length > 0 ? `{ ${args.join(', ')} }` : ''});`,
  ].join('\n');
  return [
    { lang: 'Shell', label: 'curl', source: curl },
    { lang: 'TypeScript', label: 'TypeScript (generated client)', source: typescript },
  ];
}

/** The spec with `x-codeSamples` on every operation (a copy: the argument is not changed). */
export function withCodeSamples<T>(document: T): T {
  const spec = structuredClone(document) as Spec;
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (operation && typeof operation === 'object' && 'operationId' in operation) operation['x-codeSamples'] = samples(spec, path, method, operation);
    }
  }
  return spec as T;
}
