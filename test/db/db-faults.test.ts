/**
 * Health probes, and the database going away or hanging, through the wire proxy
 * (test/support/wire-proxy.ts): requests answer 503 0910 within about DB_TIMEOUT_MS whether the
 * database refuses or hangs, /readyz fails, and when the database is back the service recovers
 * without a restart and applies the bulk commands it had accepted. A write held while the
 * database answers everything else is a slow database, not a lost one: it is waited for up to
 * DB_SLOW_CAP_MS, then answers 503 (a slow database that does answer: db-faults-slow.test.ts).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { startWireProxy, type WireProxy } from '../support/wire-proxy.js';

const DB_TIMEOUT_MS = 1_500;
/** Below its default (10 s), so that the held write's answer also comes within ANSWER_WITHIN_MS. */
const DB_SLOW_CAP_MS = 3_000;
/**
 * The bound a test allows, derived from the configured timeout: a request makes two sequential
 * operations at most, each bounded by DB_TIMEOUT_MS (a hang is seen by the driver's check of the
 * server, every 500 ms, within DB_TIMEOUT_MS); twice that again is the margin for a loaded
 * machine (2 cores shared by several test runs). What is asserted is that the answer comes from the
 * timeout, not from the database coming back or the client giving up, so the margin can be generous.
 */
const ANSWER_WITHIN_MS = 4 * DB_TIMEOUT_MS + 2_000;

let proxy: WireProxy;
let t: TestService;
beforeAll(async () => {
  proxy = await startWireProxy(inject('mongoUri'));
  t = await startTestService({ serverUri: proxy.uri('unused'), workers: 1, dbTimeoutMs: DB_TIMEOUT_MS, dbSlowCapMs: DB_SLOW_CAP_MS });
});
afterAll(async () => {
  proxy?.forward();
  proxy?.release();
  await t?.close();
  await proxy?.close();
});

const probe = async (path: string) => {
  const res = await fetch(`${t.baseUrl}${path}`);
  return { status: res.status, body: await res.json() };
};

async function timedPause(id: string, apiKey: string) {
  const started = Date.now();
  const res = await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey });
  return { ...res, ms: Date.now() - started };
}

function expectUnavailable(res: { status: number; body: unknown; ms: number }) {
  expect(res.status).toBe(503);
  expect(res.body).toMatchObject({ code: '0910', title: 'Service unavailable' });
  expect(JSON.stringify(res.body)).not.toMatch(/Mongo|ECONNREFUSED|127\.0\.0\.1/);
  expect(res.ms).toBeLessThan(ANSWER_WITHIN_MS);
}

describe('health and database faults', () => {
  it('/healthz and /readyz answer without an API key', async () => {
    expect(await probe('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await probe('/readyz')).toEqual({ status: 200, body: { status: 'ready', database: 'ok', workers: 'running' } });
  });

  it(
    'with every connection refused, answers 503 0910 quickly; once the database is back, recovers and applies the accepted bulk commands',
    { timeout: 240_000 },
    async () => {
      const { merchantId, apiKey } = await t.merchant();
      const [single] = await t.seed(merchantId, 1);
      const ids = await t.seed(merchantId, 300);
      const unusedKey = (await t.merchant()).apiKey;
      const accepted = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { apiKey, json: { subscriptions: ids } });
      expect(accepted.status).toBe(202);

      proxy.refuse();
      try {
        for (const key of [apiKey, unusedKey]) expectUnavailable(await timedPause(single!, key));
        const notReady = await probe('/readyz');
        expect(notReady.status).toBe(503);
        expect(notReady.body.code).toBe('0910');
        expect((await probe('/healthz')).status).toBe(200);
      } finally {
        proxy.forward();
      }
      expect(
        (
          await waitFor(
            () => probe('/readyz'),
            (r) => r.status === 200,
            30_000,
            250,
          )
        ).status,
      ).toBe(200);
      expect((await call(t.baseUrl, `/v2/subscriptions/${single}/pause`, { apiKey })).status).toBe(200);
      const paused = () => t.db.collection('subscriptions').countDocuments({ _id: { $in: ids as never[] }, status: 'paused' });
      expect(await waitFor(paused, (n) => n === 300, 180_000, 500)).toBe(300);
    },
  );

  it(
    'with the database hanging (connections open, nothing answered), answers 503 0910 within about DB_TIMEOUT_MS',
    { timeout: 60_000 },
    async () => {
      const { merchantId, apiKey } = await t.merchant();
      const [id] = await t.seed(merchantId, 1);
      expect((await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey })).status).toBe(200);
      proxy.hold();
      try {
        expectUnavailable(await timedPause(id!, apiKey));
      } finally {
        proxy.release();
      }
      expect(
        (
          await waitFor(
            () => probe('/readyz'),
            (r) => r.status === 200,
            30_000,
            250,
          )
        ).status,
      ).toBe(200);
    },
  );

  it(
    'with the write of a request held mid-way while the database answers, waits for it up to DB_SLOW_CAP_MS, then answers 503 0910',
    { timeout: 60_000 },
    async () => {
      const { merchantId, apiKey } = await t.merchant();
      const [id] = await t.seed(merchantId, 1);
      const rule = proxy.on(
        { collection: 'subscriptions', match: (c) => ['update', 'findAndModify'].includes(c.name) },
        { action: 'hold' },
      );
      try {
        const res = await timedPause(id!, apiKey);
        expectUnavailable(res);
        expect(res.ms).toBeGreaterThanOrEqual(DB_SLOW_CAP_MS);
        expect(rule.hits).toBeGreaterThan(0);
      } finally {
        rule.remove();
        proxy.release();
      }
    },
  );
});
