/**
 * Failures on demand (docs/sandbox.md): with a test key, `Subsvc-Test-Outcome` answers as its
 * scenario says before anything is done, with the real failure's problem; a counted scenario
 * fails that many times for one Idempotency-Key, wherever the retry lands; a live key is refused.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

const HOLD_MS = 400;
let t: TestService;
/** A second process on the same database: a retry may land on either. */
let other: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 1, bulkPollIntervalMs: 50, testOutcomeHoldMs: HOLD_MS });
  other = await startTestService({ databaseName: t.db.databaseName, testOutcomeHoldMs: HOLD_MS });
});
afterAll(async () => {
  await other?.close();
  await t?.close();
});

const send = (baseUrl: string, apiKey: string, method: string, path: string, headers: Record<string, string> = {}, json?: unknown) =>
  call(baseUrl, path, { method, apiKey, headers, ...(json === undefined ? {} : { json }) });

async function testSubscriptions(testKey: string, count: number, status = 'fulfilled'): Promise<string[]> {
  const res = await send(t.baseUrl, testKey, 'POST', '/v2/test-helpers/subscriptions', {}, { count, status });
  expect(res.status).toBe(201);
  return res.body.data.map((s: { id: string }) => s.id);
}

const statusOf = async (testKey: string, id: string) => (await send(t.baseUrl, testKey, 'GET', `/v2/subscriptions/${id}`)).body.status;

describe('Subsvc-Test-Outcome with a test key', () => {
  it('each scenario answers its status and code on a pause, and the subscription is not paused', async () => {
    const { testApiKey } = await t.merchant();
    const [id] = await testSubscriptions(testApiKey, 1);
    const expected = {
      rate_limited: [429, '0060'],
      unavailable: [503, '0910'],
      conflict: [409, '0030'],
      policy_refused: [422, '0032'],
      not_found: [404, '0020'],
    };
    for (const [scenario, [status, code]] of Object.entries(expected)) {
      const res = await send(t.baseUrl, testApiKey, 'POST', `/v2/subscriptions/${id}/pause`, { 'Subsvc-Test-Outcome': scenario });
      expect([scenario, res.status, res.body.code]).toEqual([scenario, status, code]);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
    expect(await statusOf(testApiKey, id!)).toBe('fulfilled');
  });

  it('rate_limited carries Retry-After: 1 and the RateLimit headers, as the real limit does', async () => {
    const { testApiKey } = await t.merchant();
    const res = await send(t.baseUrl, testApiKey, 'GET', '/v2/subscriptions', { 'Subsvc-Test-Outcome': 'rate_limited' });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.headers.get('ratelimit')).toBe('"merchant";r=0;t=1');
    expect(res.headers.get('ratelimit-policy')).toMatch(/^"merchant";q=\d+;w=\d+$/);
  });

  it('conflict and not_found answer the very problem the real refusal answers', async () => {
    const { testApiKey } = await t.merchant();
    const [cancelled] = await testSubscriptions(testApiKey, 1, 'cancelled');
    const real = await send(t.baseUrl, testApiKey, 'POST', `/v2/subscriptions/${cancelled}/pause`);
    const forced = await send(t.baseUrl, testApiKey, 'POST', `/v2/subscriptions/${cancelled}/pause`, { 'Subsvc-Test-Outcome': 'conflict' });
    expect([forced.status, forced.body]).toEqual([real.status, real.body]);
    const missing = randomUUID();
    const realMissing = await send(t.baseUrl, testApiKey, 'POST', `/v2/subscriptions/${missing}/resume`);
    const forcedMissing = await send(t.baseUrl, testApiKey, 'POST', `/v2/subscriptions/${missing}/resume`, {
      'Subsvc-Test-Outcome': 'not_found',
    });
    expect([forcedMissing.status, forcedMissing.body]).toEqual([realMissing.status, realMissing.body]);
  });

  it('timeout holds the answer, then answers 504 0920 with nothing done', async () => {
    const { testApiKey } = await t.merchant();
    const [id] = await testSubscriptions(testApiKey, 1);
    const started = performance.now();
    const res = await send(t.baseUrl, testApiKey, 'POST', `/v2/subscriptions/${id}/pause`, { 'Subsvc-Test-Outcome': 'timeout' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(HOLD_MS - 20);
    expect([res.status, res.body.code, res.body.type]).toEqual([504, '0920', 'urn:subsvc:problem:gateway-timeout']);
    expect(await statusOf(testApiKey, id!)).toBe('fulfilled');
  });

  it('unavailable:2 fails twice for one Idempotency-Key, across two processes, then pauses once: one event, and a retry replays', async () => {
    const { testApiKey } = await t.merchant();
    const [id] = await testSubscriptions(testApiKey, 1);
    const headers = { 'Subsvc-Test-Outcome': 'unavailable:2', 'Idempotency-Key': randomUUID() };
    const pause = (baseUrl: string) => send(baseUrl, testApiKey, 'POST', `/v2/subscriptions/${id}/pause`, headers);
    expect((await pause(t.baseUrl)).status).toBe(503);
    expect((await pause(other.baseUrl)).status).toBe(503);
    expect(await statusOf(testApiKey, id!)).toBe('fulfilled');
    const applied = await pause(t.baseUrl);
    expect([applied.status, applied.body.status]).toEqual([200, 'paused']);
    const retried = await pause(other.baseUrl);
    expect([retried.status, retried.headers.get('idempotent-replayed')]).toEqual([200, 'true']);
    const events = await waitFor(
      async () => (await send(t.baseUrl, testApiKey, 'GET', `/v2/events?subscriptionId=${id}`)).body.data as { type: string }[],
      (data) => data.length > 0,
    );
    expect(events.map((e) => e.type)).toEqual(['subscription.paused']);
  });

  it('a count is kept per Idempotency-Key: another key fails afresh', async () => {
    const { testApiKey } = await t.merchant();
    const list = (key: string) =>
      send(t.baseUrl, testApiKey, 'GET', '/v2/subscriptions', { 'Subsvc-Test-Outcome': 'rate_limited:1', 'Idempotency-Key': key });
    const [a, b] = [randomUUID(), randomUUID()];
    expect((await list(a)).status).toBe(429);
    expect((await list(a)).status).toBe(200);
    expect((await list(b)).status).toBe(429);
  });

  it('a value that is not a scenario, or a count without an Idempotency-Key, answers 400 0143 naming the header', async () => {
    const { testApiKey } = await t.merchant();
    for (const value of ['explode', 'timeout:2', 'unavailable:11', 'unavailable:2']) {
      const res = await send(t.baseUrl, testApiKey, 'GET', '/v2/subscriptions', { 'Subsvc-Test-Outcome': value });
      expect([value, res.status, res.body.code]).toEqual([value, 400, '0143']);
      expect(res.body.detail).toContain('Subsvc-Test-Outcome');
    }
  });

  it('GET /v2/test-helpers/scenarios lists every scenario with its status and code; a live key gets 403 0011', async () => {
    const { apiKey, testApiKey } = await t.merchant();
    const res = await send(t.baseUrl, testApiKey, 'GET', '/v2/test-helpers/scenarios');
    expect(res.status).toBe(200);
    expect(res.body.data.map((s: { name: string; status: number; counted: boolean }) => [s.name, s.status, s.counted])).toEqual([
      ['rate_limited', 429, true],
      ['unavailable', 503, true],
      ['timeout', 504, false],
      ['conflict', 409, false],
      ['policy_refused', 422, false],
      ['not_found', 404, false],
    ]);
    const live = await send(t.baseUrl, apiKey, 'GET', '/v2/test-helpers/scenarios');
    expect([live.status, live.body.code]).toEqual([403, '0011']);
  });
});

describe('Subsvc-Test-Outcome with a live key', () => {
  it('answers 400 0142 naming the header, and does nothing', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const res = await send(t.baseUrl, apiKey, 'POST', `/v2/subscriptions/${id}/pause`, { 'Subsvc-Test-Outcome': 'unavailable' });
    expect([res.status, res.body.code]).toEqual([400, '0142']);
    expect(res.body.detail).toContain('Subsvc-Test-Outcome');
    expect((await send(t.baseUrl, apiKey, 'GET', `/v2/subscriptions/${id}`)).body.status).toBe('fulfilled');
  });
});
