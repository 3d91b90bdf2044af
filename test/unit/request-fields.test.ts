/**
 * `npm run check:request-fields` (scripts/check-request-fields.ts): a request field of the spec
 * that no code in src/ reads fails the check, named with its operation. That today's spec passes is
 * the check itself, a step of `npm run check` (which `npm test` runs first): not run twice here.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { projectRoot } from '../../src/lib/project-root.js';
import { loadSpec } from '../../src/lib/spec.js';

const dir = mkdtempSync(join(tmpdir(), 'request-fields-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function check(specPath: string) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/check-request-fields.ts', specPath], {
    cwd: projectRoot(),
    encoding: 'utf8',
    timeout: 180_000,
  });
  return { status: run.status, stderr: run.stderr };
}

/** The spec with fields that the service's code does not know of. */
function specWithUnreadFields(): string {
  // The loaded spec is a plain object tree of the YAML: reached into by path here.
  const spec = loadSpec() as unknown as {
    components: { schemas: Record<string, { properties: Record<string, object> }> };
    paths: Record<string, Record<string, { parameters?: object[] }>>;
  };
  spec.components.schemas.PauseRequest!.properties.note = { type: 'string', maxLength: 200 };
  spec.components.schemas.BulkFilter!.properties.country = { type: 'string', maxLength: 2 };
  const createHold = spec.paths['/v2/holds']!.post!;
  createHold.parameters = [
    ...(createHold.parameters ?? []),
    { name: 'notify', in: 'query', schema: { type: 'boolean' } },
    { name: 'X-Store-Region', in: 'header', schema: { type: 'string', maxLength: 10 } },
  ];
  const path = join(dir, 'openapi.yaml');
  writeFileSync(path, stringify(spec));
  return path;
}

describe('the request fields check', () => {
  it('fails on a copy with a field no handler reads, naming each field, its operation and its handler', { timeout: 200_000 }, () => {
    const run = check(specWithUnreadFields());

    expect(run.status).toBe(1);
    const named = run.stderr.split('\n').filter((line) => line.includes('is read by no code in src/'));
    expect(named).toEqual([
      '  pauseSubscription (POST /v2/subscriptions/{subscriptionId}/pause): body.note is read by no code in src/; its handler is in src/subscriptions/subscriptions.handlers.ts',
      ...['bulkPauseSubscriptions', 'bulkResumeSubscriptions'].map(
        (id) =>
          `  ${id} (POST /v2/subscriptions/bulk/${id.startsWith('bulkPause') ? 'pause' : 'resume'}): body.filter.country is read by no code in src/; its handler is in src/subscriptions/subscriptions.handlers.ts`,
      ),
      ...['Pause', 'Resume'].map(
        (op) =>
          `  previewBulk${op} (POST /v2/subscriptions/bulk/${op.toLowerCase()}/preview): body.filter.country is read by no code in src/; its handler is in src/bulk/bulk.handlers.ts`,
      ),
      '  createHold (POST /v2/holds): query.notify is read by no code in src/; its handler is in src/holds/holds.handlers.ts',
      '  createHold (POST /v2/holds): header.X-Store-Region is read by no code in src/; its handler is in src/holds/holds.handlers.ts',
    ]);
    expect(run.stderr).toContain('For each: make the operation use it, or take it out of the spec.');
  });
});
