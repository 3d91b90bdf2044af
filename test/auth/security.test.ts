import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 1 });
});
afterAll(() => t.close());

// Without the events outbox, which the relay of an earlier change empties in the background.
const snapshot = (ids: string[]) =>
  t.db
    .collection('subscriptions')
    .find({ _id: { $in: ids as never[] } }, { projection: { outbox: 0 } })
    .sort({ _id: 1 })
    .toArray();

describe("merchant B's key on merchant A's subscriptions", () => {
  it.each(['pause', 'resume'])('single %s answers 404 and changes nothing', async (operation) => {
    const a = await t.merchant();
    const b = await t.merchant();
    const ids = [...(await t.seed(a.merchantId, 1, 'fulfilled')), ...(await t.seed(a.merchantId, 1, 'paused'))];
    const before = await snapshot(ids);
    for (const id of ids) {
      const res = await call(t.baseUrl, `/v2/subscriptions/${id}/${operation}`, { apiKey: b.apiKey });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: '0020', detail: `Subscription ${id} not found` });
    }
    expect(await snapshot(ids)).toEqual(before);
  });

  it.each(['pause', 'resume'])('bulk %s queues nothing for them and changes nothing', async (operation) => {
    const a = await t.merchant();
    const b = await t.merchant();
    const ids = [...(await t.seed(a.merchantId, 2, 'fulfilled')), ...(await t.seed(a.merchantId, 2, 'paused'))];
    const before = await snapshot(ids);
    const res = await call(t.baseUrl, `/v2/subscriptions/bulk/${operation}`, { apiKey: b.apiKey, json: { subscriptions: ids } });
    expect(res.status).toBe(202);
    expect(res.body.acceptedCount).toBe(0);
    expect(res.body.rejected.map((r: { subscriptionId: string }) => r.subscriptionId).sort()).toEqual([...ids].sort());
    // Let a worker run: a control bulk of B's own subscription is applied, A's are still untouched.
    const [own] = await t.seed(b.merchantId, 1, operation === 'pause' ? 'fulfilled' : 'paused');
    await call(t.baseUrl, `/v2/subscriptions/bulk/${operation}`, { apiKey: b.apiKey, json: { subscriptions: [own] } });
    const target = operation === 'pause' ? 'paused' : 'fulfilled';
    await waitFor(
      () => t.db.collection('subscriptions').findOne({ _id: own as never }),
      (d) => d?.status === target,
      30_000,
    );
    expect(await snapshot(ids)).toEqual(before);
  });
});

describe('mass assignment', () => {
  it.each([
    { status: 'cancelled' },
    { merchantId: '0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a' },
    { subscriptions: ['0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a'], merchantId: 'x' },
  ])('a body with %o answers 400 0040 and changes nothing', async (body) => {
    const { merchantId, apiKey } = await t.merchant();
    const ids = await t.seed(merchantId, 1);
    const before = await snapshot(ids);
    const res = await call(t.baseUrl, `/v2/subscriptions/${ids[0]}/pause`, { apiKey, json: body });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('0040');
    expect(await snapshot(ids)).toEqual(before);
  });
});

describe('secrets', () => {
  it('API keys, valid or not, never appear in the logs', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const wrongKey = 'sk_a-wrong-key-that-must-not-be-logged';
    await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey });
    await call(t.baseUrl, `/v2/subscriptions/${id}/resume`, { headers: { x_api_key: apiKey } });
    await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey: wrongKey });
    await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, {
      apiKey,
      headers: { 'content-type': 'application/json' },
      rawBody: '{"broken',
    });
    const logged = JSON.stringify(t.logLines);
    expect(t.logLines.filter((l) => l.msg === 'request completed').length).toBeGreaterThanOrEqual(4);
    expect(logged).not.toContain(apiKey);
    expect(logged).not.toContain(wrongKey);
  });
});
