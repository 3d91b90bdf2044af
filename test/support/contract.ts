/**
 * Checks every response a test receives against the spec: its status must be one the operation
 * declares, its media type the one declared, and its body must match that schema (JSON Schema
 * 2020-12, as OpenAPI 3.1 says). Responses outside the spec's paths must be problem+json bodies.
 */
import addFormats from 'ajv-formats';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { OpenApi31Backend } from '../../src/http/openapi.js';
import { loadSpec } from '../../src/lib/spec.js';

export interface ReceivedResponse {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly contentType: string;
  readonly body: unknown;
}

interface RawResponse {
  $ref?: string;
  content?: Record<string, { schema?: unknown }>;
}

const spec = loadSpec() as any;
const router = new OpenApi31Backend({ definition: loadSpec(), quick: true, validate: false });
const ready = router.init();
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema({ $id: 'spec', paths: spec.paths, components: spec.components });
const compiled = new Map<string, ValidateFunction>();

/** The compiled schema at a JSON Pointer into the spec, compiled once. */
function validatorFor(ref: string): ValidateFunction {
  let validate = compiled.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: `spec#${ref}` });
    compiled.set(ref, validate);
  }
  return validate;
}

/** The declared response of (path, method, status), following a $ref to components/responses. */
function declaredResponse(path: string, method: string, status: number): { pointer: string; response: RawResponse } | undefined {
  const operation = spec.paths[path]?.[method.toLowerCase()];
  let response: RawResponse | undefined = operation?.responses?.[String(status)];
  if (!response) return undefined;
  let pointer = `/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}/${method.toLowerCase()}/responses/${status}`;
  if (response.$ref) {
    pointer = response.$ref.slice(1);
    response = spec.components.responses[response.$ref.split('/').pop()!];
  }
  return response ? { pointer, response } : undefined;
}

export async function contractViolations(res: ReceivedResponse): Promise<string[]> {
  await ready;
  const operation = router.router.matchOperation({ method: res.method, path: res.path.split('?')[0]!, headers: {} });
  const problems: string[] = [];
  const mediaType = res.contentType.split(';')[0]!.trim();
  if (!operation) {
    const validate = validatorFor('/components/schemas/Problem');
    if (mediaType !== 'application/problem+json') problems.push(`outside the spec's paths: media type ${mediaType}`);
    if (!validate(res.body)) problems.push(`outside the spec's paths, not a problem: ${ajv.errorsText(validate.errors)}`);
    return problems;
  }
  const declared = declaredResponse(operation.path, res.method, res.status);
  if (!declared) return [`status ${res.status} is not declared for ${operation.operationId}`];
  // A response declared without content (204) must come without one.
  if (!declared.response.content)
    return mediaType === '' ? [] : [`${operation.operationId} ${res.status} declares no content, got ${mediaType}`];
  const content = declared.response.content[mediaType];
  if (!content?.schema) {
    return [`media type ${mediaType} is not declared for ${operation.operationId} ${res.status}`];
  }
  const pointer = `${declared.pointer}/content/${mediaType.replace('/', '~1')}/schema`;
  const validate = validatorFor(pointer);
  if (!validate(res.body)) problems.push(ajv.errorsText(validate.errors));
  return problems;
}
