/**
 * `npm run mock` follows the spec: an edit is served without a restart, and an edit that does not
 * parse leaves the last good contract served (docs/partners.md).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canConnect, freePort } from '../../src/lib/net.js';
import { SPEC_PATH } from '../../src/lib/spec.js';
import { waitFor } from '../support/wait.js';

const EXAMPLE_PLAN = '5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d';
const EDITED_PLAN = '0e0e0e0e-1e0f-4a9b-8c7d-6e5f4a3b2c1d';

const dir = mkdtempSync(join(tmpdir(), 'mock-reload-'));
const spec = join(dir, 'openapi.yaml');
let port: number;
let output = '';
let stop: () => Promise<void>;

beforeAll(async () => {
  copyFileSync(SPEC_PATH, spec);
  port = await freePort();
  const child = spawn(join('node_modules', '.bin', 'tsx'), ['scripts/mock.ts', '--spec', spec], {
    env: { ...process.env, MOCK_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  };
  await waitFor(
    () => canConnect(port),
    Boolean,
    60_000,
    200,
    () => `the mock to start; it printed:\n${output}`,
  );
}, 90_000);

afterAll(() => stop?.());

const planOfARead = async (): Promise<string | undefined> => {
  const res = await fetch(`http://127.0.0.1:${port}/v2/subscriptions/${randomUUID()}`, { headers: { 'x-api-key': 'sk_any' } }).catch(
    () => undefined,
  );
  return res?.ok ? ((await res.json()) as { planId: string }).planId : undefined;
};

describe('npm run mock reloads the spec', () => {
  it('serves an edited example without being restarted', async () => {
    expect(await planOfARead()).toBe(EXAMPLE_PLAN);
    writeFileSync(spec, readFileSync(spec, 'utf8').replaceAll(EXAMPLE_PLAN, EDITED_PLAN));
    expect(await waitFor(planOfARead, (plan) => plan === EDITED_PLAN, 30_000, 250), output).toBe(EDITED_PLAN);
  }, 40_000);

  it('keeps serving the last good contract when an edit does not parse, and says so in one line', async () => {
    writeFileSync(spec, `${readFileSync(spec, 'utf8')}\n  : [unclosed\n`);
    const warned = await waitFor(
      async () => output,
      (o) => o.includes('not reloaded, the old contract is still served'),
      10_000,
    );
    expect(warned.match(/mock: .* not reloaded.*\n/g)).toHaveLength(1);
    expect(await planOfARead()).toBe(EDITED_PLAN);
  }, 20_000);
});
