/**
 * `npm run check:request-fields` (part of `npm run check`): every request field of the spec (each
 * operation's body properties, at any depth, and its path, query and header parameters) is read by
 * some code in src/. A field no code reads passes validation and is dropped without a word: the
 * client believes it was taken. How a read is recognised: scripts/request-fields.ts.
 * Exits 1 naming each such field, its operation and what to do.
 *   tsx scripts/check-request-fields.ts [spec]   the spec: openapi/openapi.yaml unless given
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { projectRoot } from '../src/lib/project-root.js';
import { loadSpec, SPEC_PATH } from '../src/lib/spec.js';
import { unreadRequestFields, type UnreadField } from './request-fields.js';

/** The handlers file that registers each operation, where one does. */
function handlerFiles(root: string): Map<string, string> {
  const found = new Map<string, string>();
  const src = join(root, 'src');
  for (const entry of readdirSync(src, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.handlers.ts')) continue;
    const path = join(entry.parentPath, entry.name);
    for (const [, id] of readFileSync(path, 'utf8').matchAll(/^\s*(\w+): (?:async )?\(/gm)) found.set(id!, relative(root, path));
  }
  return found;
}

/** What the check prints for the fields no code reads: each one, then what to do about it. */
function unreadReport(unread: readonly UnreadField[], handlers: ReadonlyMap<string, string>, specName: string): string {
  const lines = unread.map(({ operationId, route, field }) => {
    const where = handlers.get(operationId);
    return `  ${operationId} (${route}): ${field} is read by no code in src/${where ? `; its handler is in ${where}` : '; no src/**/*.handlers.ts registers it yet'}`;
  });
  return [
    `${specName}: ${unread.length} request field${unread.length === 1 ? '' : 's'} that the service would accept and drop:`,
    ...lines,
    'For each: make the operation use it, or take it out of the spec.',
    "  - Use it in the operation's handler (typed `Request<'operationId'>`, src/request-context/request-context.ts):",
    '    `request.body.field`, `request.query.name`, `request.params.name`, or in the service function the handler hands the',
    "    body to, through the spec's type (`components['schemas'][…]`). A header is read by its name (`header('Name')`).",
    '  - A new operation: add its handler (docs/changing-the-api.md, step 3); its fields count once the handler reads them.',
    "  - A handler typed for two operations (`Request<'a' | 'b'>`): type it `Request<'a'> | Request<'b'>`, so that the",
    "    compiler does not merge one operation's fields away.",
    '  - A field accepted on purpose and ignored: read it where it is dropped, with a comment saying why',
    '    (`const { field: _ignored, ...rest } = request.body`).',
    'How reads are recognised: docs/changing-the-api.md#every-request-field-is-read.',
  ].join('\n');
}

const root = projectRoot();
const specPath = process.argv[2] ?? SPEC_PATH;
const unread = await unreadRequestFields(loadSpec(specPath), root);
if (unread.length > 0) {
  console.error(unreadReport(unread, handlerFiles(root), relative(root, specPath)));
  process.exit(1);
}
console.error(`${relative(root, specPath)}: every request field is read by src/`);
