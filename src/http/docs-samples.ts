/**
 * Code samples for the API reference, derived from the spec so that they cannot drift from it:
 * per operation, a curl command and a call through the generated TypeScript client, both with the
 * spec's example values. The reference (Scalar) shows `x-codeSamples` beside each operation.
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
    readonly requestBodies: Record<
      string,
      { content: Record<string, { schema: { $ref?: string }; examples?: Record<string, { value: unknown }> }> }
    >;
  };
}

const lastSegment = (ref: string) => ref.split('/').pop()!;
const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

/** The generated client's class for a tag: `Bulk requests` → `BulkRequestsApi`. */
const clientClass = (tag: string) =>
  `${tag
    .split(/\s+/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('')}Api`;

/** A bulk body's example for a required body; single operations are shown without a body. */
function bodyExample(spec: Spec, operation: Operation): { param: string; value: unknown; mediaType: string } | undefined {
  const ref = operation.requestBody?.$ref;
  if (!ref) return undefined;
  const body = spec.components.requestBodies[lastSegment(ref)]!;
  // The body's first media type: JSON, or a PATCH's merge patch.
  const mediaType = Object.keys(body.content)[0]!;
  const media = body.content[mediaType]!;
  const required = (body as { required?: boolean }).required === true;
  if (!required) return undefined;
  // A body without a schema of its own (an import's file) is the generated clients' `body`.
  const param = media.schema.$ref ? lowerFirst(lastSegment(media.schema.$ref)) : 'body';
  return { param, value: Object.values(media.examples ?? {})[0]?.value, mediaType };
}

/** One operation's request with the spec's example values, as a sample shows it. */
export interface ExampleRequest {
  readonly operationId: string;
  readonly summary: string;
  readonly method: string;
  /** The path with its parameters filled in from their examples. */
  readonly path: string;
  readonly pathParams: readonly { readonly name: string; readonly value: string }[];
  readonly body: { readonly param: string; readonly value: unknown; readonly mediaType: string } | undefined;
  readonly clientClass: string;
}

function exampleRequest(spec: Spec, path: string, method: string, operation: Operation): ExampleRequest {
  const params = (operation.parameters ?? []).map((p) => (p.$ref ? spec.components.parameters[lastSegment(p.$ref)]! : p));
  const pathParams = params.filter((p) => p.in === 'path').map((p) => ({ name: p.name, value: String(p.example) }));
  return {
    operationId: operation.operationId,
    summary: (operation as { summary?: string }).summary ?? operation.operationId,
    method: method.toUpperCase(),
    path: pathParams.reduce((at, p) => at.replace(`{${p.name}}`, p.value), path),
    pathParams,
    body: bodyExample(spec, operation),
    clientClass: clientClass(operation.tags?.[0] ?? 'Default'),
  };
}

/** Every operation's example request, in the spec's order. */
export function exampleRequests(document: unknown): ExampleRequest[] {
  const spec = document as Spec;
  return Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([, operation]) => operation && typeof operation === 'object' && 'operationId' in operation)
      .map(([method, operation]) => exampleRequest(spec, path, method, operation)),
  );
}

function samples(base: string, request: ExampleRequest): Operation['x-codeSamples'] {
  const { method, path, body, pathParams, clientClass: api, operationId } = request;
  const curl = [
    `curl -s${method === 'GET' ? '' : ` -X ${method}`} '${base}${path}' -H "x-api-key: $API_KEY"`,
    ...(body
      ? [
          `  -H 'content-type: ${body.mediaType}' ${typeof body.value === 'string' ? `--data-binary '${body.value.trimEnd()}'` : `-d '${JSON.stringify(body.value)}'`}`,
        ]
      : []),
  ].join(' \\\n');
  const args = [...pathParams.map((p) => `${p.name}: '${p.value}'`), ...(body ? [`${body.param}: ${JSON.stringify(body.value)}`] : [])];
  const typescript = [
    `import { Configuration, ${api} } from '@subsvc/client';`,
    '',
    `const api = new ${api}(new Configuration({ basePath: '${base}', apiKey: process.env.API_KEY }));`,
    `const result = await api.${operationId}(${args.length > 0 ? `{ ${args.join(', ')} }` : ''});`,
  ].join('\n');
  return [
    { lang: 'Shell', label: 'curl', source: curl },
    { lang: 'TypeScript', label: 'TypeScript (generated client)', source: typescript },
  ];
}

/** The spec with `x-codeSamples` on every operation (a copy: the argument is not changed). */
export function withCodeSamples<T>(document: T): T {
  const spec = structuredClone(document) as Spec;
  const base = spec.servers?.[0]?.url ?? 'http://127.0.0.1:8080';
  const requests = new Map(exampleRequests(spec).map((r) => [r.operationId, r]));
  for (const item of Object.values(spec.paths)) {
    for (const operation of Object.values(item)) {
      const request = operation && typeof operation === 'object' ? requests.get(operation.operationId) : undefined;
      if (request) operation['x-codeSamples'] = samples(base, request);
    }
  }
  return spec as T;
}
