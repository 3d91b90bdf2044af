/**
 * The spec as the Prism mock is served it: `openapi/openapi.yaml` without the responses a
 * stateless mock cannot mean.
 *
 * Prism answers every request that fails validation with the operation's 422 when one is declared,
 * and only otherwise with its 400 (prism-http, mocker: expected codes `[422, 400]`). The service
 * answers invalid requests with 400 (docs/design.md §7); its only 422 is code 0050, an `Idempotency-Key`
 * reused with another request, which a mock that remembers nothing can never detect. Served the
 * spec as written, the mock would answer 422 "Idempotency key reused" to a malformed UUID. So the
 * mock gets the spec without its 422s, and mock and service keep giving the same verdict
 * (`test/contract-agreement.test.ts`). Derived on every start: nothing to keep in step by hand.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { projectRoot } from '../src/lib/project-root.js';
import { loadSpec } from '../src/lib/spec.js';

/** Statuses only a stateful server can answer: dropped from every operation for the mock. */
export const STATEFUL_ONLY_STATUSES = ['422'] as const;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Writes the mock's spec under `.cache/mock/` and returns its path. */
export function writeMockSpec(): string {
  const spec = loadSpec() as { paths?: Record<string, Record<string, { responses?: Record<string, unknown> }>> };
  for (const pathItem of Object.values(spec.paths ?? {})) {
    for (const method of METHODS) {
      const responses = pathItem[method]?.responses;
      for (const status of STATEFUL_ONLY_STATUSES) if (responses) delete responses[status];
    }
  }
  const dir = join(projectRoot(), '.cache', 'mock');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'openapi.yaml');
  writeFileSync(path, `# Derived from openapi/openapi.yaml by scripts/mock-spec.ts; do not edit.\n${stringify(spec)}`);
  return path;
}
