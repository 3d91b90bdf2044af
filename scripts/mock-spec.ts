/**
 * The spec as the Prism mock is served it: `openapi/openapi.yaml` without what a stateless mock
 * would answer falsely. Derived on every start: nothing to keep in step by hand; docs/partners.md's
 * table of where the mock differs from the service says why each change is made.
 *
 * - No 422s. Prism answers every request that fails validation with the operation's 422 when one
 *   is declared, and only otherwise with its 400 (prism-http, mocker: expected codes `[422, 400]`).
 *   The service answers invalid requests with 400 (docs/design.md §7); its only 422s are code 0050,
 *   an `Idempotency-Key` reused with another request, and 0032, a pause that breaks the merchant's
 *   pause policy: a mock that remembers nothing (no key, no policy) can never decide either.
 *   Served the spec as written, the mock would answer 422 to a malformed UUID.
 * - No `Idempotent-Replayed` or `X-Request-Id` response headers: Prism would send them on every
 *   answer (`true`, and the literal `string`), though the mock never replays nor echoes an id.
 * - No 200 on the bulk operations: it is the deprecated `"dryRun": true` answer, and Prism answers
 *   an operation's lowest 2xx unless `Prefer` asks for another, so a bulk request would get the dry
 *   run's shape. Without it the mock answers the 202 a bulk request gets; a dry run is the previews'
 *   (`/bulk/pause/preview`, `/bulk/resume/preview`), whose 200 stays.
 * - Dynamic data (`Prefer: dynamic=true`) that is valid: uuids from their format (lower case)
 *   rather than from the case-insensitive pattern, and timestamps from a pattern of real dates
 *   (the spec's pattern alone produces `0205-56-62T74:72:60…Z`). Requests are validated as before:
 *   the uuid format accepts either case, and timestamps appear in responses only.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { stringify } from 'yaml';
import { projectRoot } from '../src/lib/project-root.js';
import { loadSpec, SPEC_PATH } from '../src/lib/spec.js';

/** Statuses only a stateful server can answer: dropped from every operation for the mock. */
export const STATEFUL_ONLY_STATUSES = ['422'] as const;
/**
 * Operations whose 200 answers only the deprecated `dryRun: true` (docs/design.md §6a): the mock
 * answers their 202, and the clients type them by it (scripts/openapi-generator.ts).
 */
export const DRY_RUN_200_OPERATIONS = ['bulkPauseSubscriptions', 'bulkResumeSubscriptions'] as const;
/** Response headers whose value only the service knows. */
export const STATEFUL_ONLY_HEADERS = ['Idempotent-Replayed', 'X-Request-Id'] as const;
/** Every timestamp this pattern produces is a real instant that the spec's pattern accepts. */
const VALID_TIMESTAMP = '^20[2-3]\\d-(0[1-9]|1[0-2])-(0[1-9]|1\\d|2[0-8])T([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d\\.\\d{6}Z$';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface Response {
  headers?: Record<string, unknown>;
  content?: Record<string, { examples?: Record<string, unknown> }>;
  $ref?: string;
}
interface Operation {
  operationId?: string;
  security?: unknown[];
  responses?: Record<string, Response>;
}
interface Spec {
  paths?: Record<string, Record<string, Operation>>;
  components?: { responses?: Record<string, Response>; schemas?: Record<string, Record<string, unknown>> };
}

function withoutStatefulHeaders(response: Response): void {
  for (const name of STATEFUL_ONLY_HEADERS) delete response.headers?.[name];
}

/** The spec the mock serves, as an object. */
export function mockSpec(source = SPEC_PATH): Spec {
  const spec = loadSpec(source) as Spec;
  for (const pathItem of Object.values(spec.paths ?? {})) {
    for (const method of METHODS) {
      const responses = pathItem[method]?.responses;
      if (!responses) continue;
      for (const status of STATEFUL_ONLY_STATUSES) delete responses[status];
      if ((DRY_RUN_200_OPERATIONS as readonly (string | undefined)[]).includes(pathItem[method]!.operationId)) delete responses['200'];
      Object.values(responses).forEach(withoutStatefulHeaders);
    }
  }
  Object.values(spec.components?.responses ?? {}).forEach(withoutStatefulHeaders);
  const schemas = spec.components?.schemas ?? {};
  delete schemas.Uuid!.pattern;
  schemas.Timestamp!.pattern = VALID_TIMESTAMP;
  return spec;
}

/** Where the list of operations starts on a line of `exampleList`, and how wide a line may be. */
const OPERATIONS_COLUMN = 44;
const LINE_WIDTH = 100;

/**
 * The names `Prefer: example=NAME` accepts, one entry per status and set of names with the
 * operations that have them ("every operation" when all have them, "every operation with an API key" when all of those do), wrapped to lines a reader can
 * read: printed by `npm run mock`, and docs/partners.md's list (a test keeps the two equal).
 */
export function exampleList(spec: Spec = mockSpec()): string[] {
  const resolve = (r: Response) => (r.$ref ? spec.components!.responses![r.$ref.split('/').pop()!]! : r);
  const operationsOf = new Map<string, string[]>();
  const everyOperation = new Set<string>();
  // Those that take an API key: all but one a billing system calls (`security: []`).
  const withKey = new Set<string>();
  for (const pathItem of Object.values(spec.paths ?? {})) {
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (operation?.operationId) everyOperation.add(operation.operationId);
      if (operation?.operationId && operation.security?.length !== 0) withKey.add(operation.operationId);
      for (const [status, response] of Object.entries(operation?.responses ?? {})) {
        const names = Object.values(resolve(response).content ?? {}).flatMap((media) => Object.keys(media.examples ?? {}));
        if (names.length === 0) continue;
        const key = `code=${status}  example=${names.join('|')}`;
        operationsOf.set(key, [...(operationsOf.get(key) ?? []), operation!.operationId!]);
      }
    }
  }
  return [...operationsOf]
    .sort(([a], [b]) => a.localeCompare(b))
    .flatMap(([key, operations]) =>
      exampleLines(
        key,
        operations.length === everyOperation.size
          ? ['every operation']
          : operations.length === withKey.size && operations.every((id) => withKey.has(id))
            ? ['every operation with an API key']
            : operations,
      ),
    );
}

/** One entry of `exampleList`: the key, then its operations, continued under the operations' column. */
function exampleLines(key: string, operations: string[]): string[] {
  const indent = ' '.repeat(OPERATIONS_COLUMN);
  const lines = key.length + 2 > OPERATIONS_COLUMN ? [key, indent] : [`${key}  `.padEnd(OPERATIONS_COLUMN)];
  operations.forEach((operation, i) => {
    const item = i < operations.length - 1 ? `${operation},` : operation;
    const last = lines.at(-1)!;
    if (last.length === OPERATIONS_COLUMN) lines[lines.length - 1] = last + item;
    else if (last.length + 1 + item.length <= LINE_WIDTH) lines[lines.length - 1] = `${last} ${item}`;
    else lines.push(indent + item);
  });
  return lines;
}

/**
 * Writes the mock's spec under `.cache/mock/` and returns its path. The file is rewritten only
 * when its content changes: Prism restarts whenever the file it serves changes (it watches it),
 * so a mock started elsewhere from the same spec must not be restarted by an identical write.
 */
export function writeMockSpec(source = SPEC_PATH): string {
  const dir = join(projectRoot(), '.cache', 'mock');
  mkdirSync(dir, { recursive: true });
  const name =
    resolve(source) === SPEC_PATH ? 'openapi' : `openapi-${createHash('sha256').update(resolve(source)).digest('hex').slice(0, 12)}`;
  const path = join(dir, `${name}.yaml`);
  const content = `# Derived from ${relative(projectRoot(), source)} by scripts/mock-spec.ts; do not edit.\n${stringify(mockSpec(source))}`;
  if (!existsSync(path) || readFileSync(path, 'utf8') !== content) writeFileSync(path, content);
  return path;
}
