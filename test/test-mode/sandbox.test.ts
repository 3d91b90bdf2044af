/**
 * `subsvc sandbox` (docs/sandbox.md) as a partner's CI runs it: the compiled CLI (bin/subsvc.js),
 * ready with one JSON line, served in test mode only, reset in one call, and stopped with its
 * temporary folder gone. Live keys refused: a service with TEST_KEYS_ONLY, as the sandbox runs.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, httpOf } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

interface Ready {
  url: string;
  testApiKey: string;
  subscriptionIds: string[];
  webhooks: { url: string; endpointId: string };
  dataDir: string;
}

let child: ChildProcessWithoutNullStreams;
const lines: Record<string, unknown>[] = [];
let stderr = '';
let ready: Ready;
let readyAfterMs: number;

beforeAll(async () => {
  const started = performance.now();
  // Built by the test run's global setup (tsc -p tsconfig.build.json), as `npx subsvc` runs it.
  child = spawn(process.execPath, ['bin/subsvc.js', 'sandbox', '--port', '0', '--seed', '3'], {
    env: { ...process.env, MONGODB_URI: '' },
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  createInterface({ input: child.stdout }).on('line', (line) => lines.push(JSON.parse(line)));
  await waitFor(
    async () => lines.length,
    (n) => n > 0 || child.exitCode !== null,
    60_000,
    50,
    () => `the sandbox's first line (stderr: ${stderr})`,
  );
  readyAfterMs = performance.now() - started;
  ready = lines[0] as unknown as Ready;
}, 90_000);
afterAll(() => {
  if (child.exitCode === null) child.kill('SIGKILL');
});

const http = httpOf(() => ({ baseUrl: ready.url }));
/** A request with the sandbox's printed test key. */
const sandbox = (method: string, path: string, json?: unknown) => http.api(ready.testApiKey, method, path, json);

describe('subsvc sandbox', () => {
  it('prints one JSON line with the URL, a test key, the subscriptions and the webhook listener, within 10 s', () => {
    expect(ready).toMatchObject({
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      testApiKey: expect.stringMatching(/^sk_test_/),
    });
    expect(ready.subscriptionIds).toHaveLength(3);
    expect(ready.webhooks.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(existsSync(ready.dataDir)).toBe(true);
    expect(readyAfterMs).toBeLessThan(10_000);
  });

  it('serves the test mode: a pause answers 200, and its webhook arrives at the listener, verified', async () => {
    const paused = await sandbox('POST', `/v2/subscriptions/${ready.subscriptionIds[0]}/pause`);
    expect([paused.status, paused.body.status, paused.body.livemode]).toEqual([200, 'paused', false]);
    const delivery = await waitFor(
      async () => lines.find((l) => 'webhookId' in l) as { verified: boolean; event: { type: string } } | undefined,
      (d) => d !== undefined,
    );
    expect([delivery!.verified, delivery!.event.type]).toEqual([true, 'subscription.paused']);
  });

  it('POST /v2/test-helpers/reset empties the test mode in one call', async () => {
    const reset = await sandbox('POST', '/v2/test-helpers/reset');
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ deleted: { subscriptions: 3 }, livemode: false });
    expect(reset.body.deleted.events).toBeGreaterThanOrEqual(1);
    expect((await sandbox('GET', '/v2/subscriptions')).body.data).toEqual([]);
    expect((await sandbox('GET', '/v2/events')).body.data).toEqual([]);
  });

  it('stops on SIGTERM, exiting 0, and its temporary folder is gone', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(existsSync(ready.dataDir)).toBe(false);
  }, 60_000);
});

describe('TEST_KEYS_ONLY (what the sandbox runs with)', () => {
  let t: Awaited<ReturnType<typeof startTestService>>;
  beforeAll(async () => {
    t = await startTestService({ testKeysOnly: true });
  });
  afterAll(() => t?.close());

  it('a live key answers 403 0011 on any operation; a test key is served', async () => {
    const { apiKey, testApiKey } = await t.merchant();
    const live = await call(t.baseUrl, '/v2/subscriptions', { method: 'GET', apiKey });
    expect([live.status, live.body.code]).toEqual([403, '0011']);
    const test = await call(t.baseUrl, '/v2/subscriptions', { method: 'GET', apiKey: testApiKey });
    expect(test.status).toBe(200);
  });
});
