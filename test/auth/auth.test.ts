import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/auth.service.js';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.close());

describe('authentication', () => {
  it('with no API key, pause answers 401 0010', async () => {
    const { merchantId } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const res = await call(t.baseUrl, `/v2/subscriptions/${id}/pause`);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ status: 401, code: '0010', title: 'Unauthorized' });
  });

  it('with an unknown API key, resume answers 401 0010', async () => {
    const { merchantId } = await t.merchant();
    const [id] = await t.seed(merchantId, 1, 'paused');
    const res = await call(t.baseUrl, `/v2/subscriptions/${id}/resume`, { apiKey: 'sk_not-a-key-anyone-was-given' });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('0010');
  });

  it('accepts the key under the x_api_key header too', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const res = await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { headers: { x_api_key: apiKey } });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('paused');
  });

  it('two different keys in x-api-key and x_api_key answer 401 0010 and change nothing, whichever is valid', async () => {
    const a = await t.merchant();
    const b = await t.merchant();
    const [id] = await t.seed(a.merchantId, 1);
    const before = await t.db.collection('subscriptions').findOne({ _id: id as never }, { projection: { outbox: 0 } });
    for (const other of [b.apiKey, 'sk_not-a-key-anyone-was-given']) {
      for (const headers of [
        { 'x-api-key': a.apiKey, x_api_key: other },
        { 'x-api-key': other, x_api_key: a.apiKey },
      ]) {
        const res = await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { headers });
        expect(res.status).toBe(401);
        expect(res.body).toMatchObject({ code: '0010', detail: 'x-api-key and x_api_key carry different keys; send one.' });
      }
    }
    expect(await t.db.collection('subscriptions').findOne({ _id: id as never }, { projection: { outbox: 0 } })).toEqual(before);
  });

  it('the same key in both x-api-key and x_api_key is accepted', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const res = await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { headers: { 'x-api-key': apiKey, x_api_key: apiKey } });
    expect(res.status).toBe(200);
  });

  it('an unknown key is remembered as unknown for AUTH_CACHE_TTL_MS: a key stored after it was refused is still refused', async () => {
    const { merchantId } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const key = `sk_${randomUUID()}`;
    expect((await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey: key })).status).toBe(401);
    // Stored behind the service's back: only a database lookup could find it now.
    const stored = { id: randomUUID(), hash: hashApiKey(key), prefix: 'sk_', createdAt: '2026-01-01T00:00:00.000000Z', expiresAt: null };
    await t.db.collection('merchants').updateOne({ _id: merchantId as never }, { $push: { keys: stored as never } });
    expect((await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey: key })).status).toBe(401);
  });

  it("with merchant B's key, merchant A's subscription is not found and stays unchanged", async () => {
    const a = await t.merchant();
    const b = await t.merchant();
    const [id] = await t.seed(a.merchantId, 1);
    const before = await t.db.collection('subscriptions').findOne({ _id: id as never }, { projection: { outbox: 0 } });
    const res = await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey: b.apiKey });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: '0020', detail: `Subscription ${id} not found` });
    expect(await t.db.collection('subscriptions').findOne({ _id: id as never }, { projection: { outbox: 0 } })).toEqual(before);
  });

  it('stores only a hash of the API key', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const stored = await t.db.collection('merchants').findOne({ _id: merchantId as never });
    expect(JSON.stringify(stored)).not.toContain(apiKey);
    expect(stored?.keys.map((k: { hash: string }) => k.hash)).toEqual([hashApiKey(apiKey)]);
  });
});
