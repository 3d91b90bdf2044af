import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkRequestsOf } from '../support/bulk.js';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.close());

const keys = () => t.db.collection('idempotencyKeys');

describe('Idempotency-Key', () => {
  it('the same key and request replays the stored response, marked, and does nothing again', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const headers = { 'idempotency-key': 'pause-once-1' };
    const first = await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey, headers });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    await call(t.baseUrl, `/v2/subscriptions/${id}/resume`, { apiKey });
    const replay = await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey, headers });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(await t.db.collection('subscriptions').findOne({ _id: id as never })).toMatchObject({ status: 'fulfilled' });
  });

  it('a replayed bulk request is not queued a second time', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const ids = await t.seed(merchantId, 3);
    const request = { apiKey, headers: { 'idempotency-key': 'bulk-once-1' }, json: { subscriptions: ids } };
    const first = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', request);
    const replay = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', request);
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await bulkRequestsOf(t.db, merchantId)).toBe(1);
  });

  it('a bulk retry sent to another path form of the same operation is the same request', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const ids = await t.seed(merchantId, 2);
    const request = { apiKey, headers: { 'idempotency-key': 'bulk-path-forms-1' }, json: { subscriptions: ids } };
    const first = await call(t.baseUrl, '/v2/subscriptions/bulk/resume', request);
    const retry = await call(t.baseUrl, '/v2/subscriptions/%7BsubscriptionId%7D/resume', request);
    expect(retry.status).toBe(202);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.requestId).toBe(first.body.requestId);
    const other = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', request);
    expect(other.status).toBe(422);
  });

  it('the same key with a different request answers 422 0050', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [a, b] = await t.seed(merchantId, 2);
    const headers = { 'idempotency-key': 'reused-1' };
    expect((await call(t.baseUrl, `/v2/subscriptions/${a}/pause`, { apiKey, headers })).status).toBe(200);
    const other = await call(t.baseUrl, `/v2/subscriptions/${b}/pause`, { apiKey, headers });
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ code: '0050', title: 'Idempotency key reused' });
    expect(await t.db.collection('subscriptions').findOne({ _id: b as never })).toMatchObject({ status: 'fulfilled' });
  });

  it('the same key while the first request is being served answers 409 0051', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    // The first request holds its claim until it is answered; take that claim as it would.
    expect(await t.service.idempotency.claim(merchantId, 'in-flight-1', 'the first request')).toEqual({ kind: 'new' });
    const res = await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey, headers: { 'idempotency-key': 'in-flight-1' } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('0051');
  });

  it('keys are scoped per merchant', async () => {
    const a = await t.merchant();
    const b = await t.merchant();
    const [idA] = await t.seed(a.merchantId, 1);
    const [idB] = await t.seed(b.merchantId, 1);
    const headers = { 'idempotency-key': 'shared-name' };
    expect((await call(t.baseUrl, `/v2/subscriptions/${idA}/pause`, { apiKey: a.apiKey, headers })).status).toBe(200);
    const res = await call(t.baseUrl, `/v2/subscriptions/${idB}/pause`, { apiKey: b.apiKey, headers });
    expect(res.status).toBe(200);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect(res.body.id).toBe(idB);
  });

  it('after an error the key is released, so a corrected retry with it runs', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const [cancelled] = await t.seed(merchantId, 1, 'cancelled');
    const headers = { 'idempotency-key': 'after-error-1' };
    // Each failed request took the key, then released it: the next, a different request, runs instead of answering 422.
    expect((await call(t.baseUrl, `/v2/subscriptions/${randomUUID()}/pause`, { apiKey, headers })).status).toBe(404);
    expect((await call(t.baseUrl, `/v2/subscriptions/${cancelled}/pause`, { apiKey, headers })).status).toBe(409);
    expect(await keys().countDocuments({ _id: `${merchantId}:after-error-1` as never })).toBe(0);
    const corrected = await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey, headers });
    expect(corrected.status).toBe(200);
    expect(corrected.body.status).toBe('paused');
  });

  it('expired keys are forgotten: the request runs again, and the sweep deletes them', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const headers = { 'idempotency-key': 'expiring-1' };
    await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey, headers });
    await keys().updateOne({ _id: `${merchantId}:expiring-1` as never }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
    await call(t.baseUrl, `/v2/subscriptions/${id}/resume`, { apiKey });
    const again = await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey, headers });
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body.status).toBe('paused');
    await keys().updateOne({ _id: `${merchantId}:expiring-1` as never }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
    expect(await t.service.idempotency.deleteExpired()).toBeGreaterThanOrEqual(1);
    expect(await keys().countDocuments({ _id: `${merchantId}:expiring-1` as never })).toBe(0);
  });

  it('an invalid key (too long) answers 400 0040', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const res = await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey, headers: { 'idempotency-key': 'k'.repeat(256) } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('0040');
  });
});
