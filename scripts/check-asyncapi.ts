/**
 * `npm run check:asyncapi` (part of `npm run check`): generated/asyncapi.yaml is a valid AsyncAPI
 * document by the AsyncAPI parser (its own schema and Spectral rules), with a message for every
 * webhook the OpenAPI spec declares. Exits 1 with one line per problem otherwise.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Parser } from '@asyncapi/parser';
import { parse } from 'yaml';
import { projectRoot } from '../src/lib/project-root.js';
import { SPEC_PATH } from '../src/lib/spec.js';

// The parser's DiagnosticSeverity.Error, which its package exports only as a type.
const ERROR: number = 0;
const file = join(projectRoot(), 'generated', 'asyncapi.yaml');
const { document, diagnostics } = await new Parser().parse(readFileSync(file, 'utf8'), { source: file });
const errors = diagnostics.filter((d) => Number(d.severity) === ERROR);
/**
 * Hints left unsaid, each for its reason: any other warning or hint is printed, so that one a
 * change caused stands out.
 */
const QUIET: Record<string, string> = {
  // It says only that a newer AsyncAPI (3.1) exists; the document is written to 3.0, which tools read.
  'asyncapi-latest-version': 'a newer AsyncAPI version exists',
};
const said = diagnostics.filter((d) => QUIET[String(d.code)] === undefined);
const where = (d: (typeof diagnostics)[number]) => `generated/asyncapi.yaml:${d.range.start.line + 1} ${d.message} (${d.code})`;
for (const d of errors) console.error(where(d));
for (const d of said.filter((d) => Number(d.severity) !== ERROR)) console.error(`warning: ${where(d)}`);
const webhooks = Object.keys((parse(readFileSync(SPEC_PATH, 'utf8')) as { webhooks: object }).webhooks);
const messages = new Set(
  document
    ?.allMessages()
    .all()
    .map((m) => m.name()) ?? [],
);
const missing = webhooks.filter((type) => !messages.has(type));
for (const type of missing) console.error(`generated/asyncapi.yaml has no message for the webhook ${type}`);
if (!document || errors.length > 0 || missing.length > 0) process.exit(1);
console.error(
  `generated/asyncapi.yaml: a valid AsyncAPI ${document.version()} document, ${messages.size} messages, ${said.length - errors.length} warnings`,
);
