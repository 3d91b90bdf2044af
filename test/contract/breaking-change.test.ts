/**
 * The designer's safety net: `npm run check:breaking` compares the spec with the last released one
 * (openapi/released/) and fails on a break that accepted-breaking-changes.txt does not list.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { SPEC_PATH } from '../../src/lib/spec.js';

const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'subsvc-breaking-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Exit code and printed text of the check on a spec file. */
async function checkBreaking(spec: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'scripts/check-breaking.ts', '--spec', spec]);
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, output: e.stdout + e.stderr };
  }
}

// The first run builds oasdiff from the Go module proxy (README.md's first-run table says how long).
describe('the breaking-change check', { timeout: 300_000 }, () => {
  it('passes on the committed spec (its intentional breaks are listed as accepted)', async () => {
    const { code, output } = await checkBreaking(SPEC_PATH);
    expect(output).toContain('no breaking change against openapi/released/openapi-2.0.0.yaml');
    expect(code).toBe(0);
  });

  it('fails on a copy of the spec without the pause answer’s merchantId, naming the change', async () => {
    const spec = readFileSync(SPEC_PATH, 'utf8');
    const field =
      "      required: [id, merchantId, planId, status, cycle, createdAt, modifiedAt, livemode]\n      properties:\n        id:\n          $ref: '#/components/schemas/Uuid'\n        merchantId:\n          $ref: '#/components/schemas/Uuid'\n";
    const pausedAt = spec.indexOf('    PausedSubscription:');
    const removed =
      spec.slice(0, pausedAt) +
      spec
        .slice(pausedAt)
        .replace(
          field,
          "      required: [id, planId, status, cycle, createdAt, modifiedAt, livemode]\n      properties:\n        id:\n          $ref: '#/components/schemas/Uuid'\n",
        );
    expect(removed).not.toBe(spec);
    writeFileSync(join(work, 'openapi.yaml'), removed);
    const { code, output } = await checkBreaking(join(work, 'openapi.yaml'));
    expect(code).toBe(1);
    expect(output).toContain(
      'POST /v2/subscriptions/{subscriptionId}/pause removed the required property `merchantId` from the response with the `200` status',
    );
    expect(output).toContain('accepted-breaking-changes.txt');
  });
});
