/**
 * Health probes, and the database going away: requests answer 503 0910 quickly, /readyz fails,
 * and when the server is back the service recovers without a restart and applies the bulk
 * commands it had accepted. The test stops and restarts a real server: its own FerretDB, on the
 * same port and data directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CACHE_DIR } from '../src/db/embedded.js';
import { ensureFerretdbBinary, startFerretdb, type RunningFerretdb } from '../src/db/ferretdb.js';
import { createLogger } from '../src/logger.js';
import { call } from './support/http.js';
import { startTestService, type TestService } from './support/service.js';
import { waitFor } from './support/wait.js';

const restartable = inject('dbEngine') === 'ferretdb';
if (!restartable) {
  console.log(`skipping the database-fault tests: they stop and restart an embedded FerretDB, and this run uses ${inject('dbEngine')}`);
}

const log = createLogger('warn');
const dataDir = mkdtempSync(join(tmpdir(), 'subsvc-fault-'));
let binary: string;
let server: RunningFerretdb;
let t: TestService;
beforeAll(async () => {
  if (!restartable) return;
  binary = await ensureFerretdbBinary(CACHE_DIR, log);
  server = await startFerretdb(binary, log, { dataDir });
  t = await startTestService({ serverUri: server.uri, workers: 1 });
});
afterAll(async () => {
  await t?.close();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const probe = async (path: string) => {
  const res = await fetch(`${t.baseUrl}${path}`);
  return { status: res.status, body: await res.json() };
};

describe.skipIf(!restartable)('health and database faults', () => {
  it('/healthz and /readyz answer without an API key', async () => {
    expect(await probe('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await probe('/readyz')).toEqual({ status: 200, body: { status: 'ready', database: 'ok', workers: 'running' } });
  });

  it('with the database stopped, answers 503 0910 within 2 s; once it is back, recovers and applies the accepted bulk commands', { timeout: 240_000 }, async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [single] = await t.seed(merchantId, 1);
    const ids = await t.seed(merchantId, 300);
    const unusedKey = (await t.merchant()).apiKey;
    const accepted = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { apiKey, json: { subscriptions: ids } });
    expect(accepted.status).toBe(202);

    await server.stop();
    for (const key of [apiKey, unusedKey]) {
      const started = Date.now();
      const res = await call(t.baseUrl, `/v2/subscriptions/${single}/pause`, { apiKey: key });
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: '0910', title: 'Service unavailable' });
      expect(JSON.stringify(res.body)).not.toMatch(/Mongo|ECONNREFUSED|127\.0\.0\.1/);
    }
    const notReady = await probe('/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body.code).toBe('0910');
    expect((await probe('/healthz')).status).toBe(200);

    server = await startFerretdb(binary, log, { dataDir, port: server.port });
    expect((await waitFor(() => probe('/readyz'), (r) => r.status === 200, 30_000, 250)).status).toBe(200);
    const again = await call(t.baseUrl, `/v2/subscriptions/${single}/pause`, { apiKey });
    expect(again.status).toBe(200);
    const paused = () => t.db.collection('subscriptions').countDocuments({ _id: { $in: ids as never[] }, status: 'paused' });
    expect(await waitFor(paused, (n) => n === 300, 180_000, 500)).toBe(300);
  });
});
