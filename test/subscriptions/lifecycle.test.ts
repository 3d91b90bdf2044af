/**
 * A subscription's lifecycle through HTTP (src/subscriptions/lifecycle.ts): created from the
 * merchant's billing system, found by its externalId, updated by a merge patch, cancelled; and
 * the events of each.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let t: TestService;
let apiKey: string;
let testApiKey: string;
let merchantId: string;
beforeAll(async () => {
  t = await startTestService({ workers: 1 });
  ({ apiKey, testApiKey, merchantId } = await t.merchant());
});
afterAll(() => t.close());

const { api } = httpOf(() => t);
const patch = (key: string, id: string, body: unknown) =>
  call(t.baseUrl, `/v2/subscriptions/${id}`, {
    method: 'PATCH',
    apiKey: key,
    rawBody: JSON.stringify(body),
    headers: { 'content-type': 'application/merge-patch+json' },
  });
const create = (key: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  api(key, 'POST', '/v2/subscriptions', { externalId: `sub_${randomUUID()}`, planId: randomUUID(), ...body }, headers);

/** The subscription's events, oldest first, once there are `count` of them. */
async function eventsOf(key: string, id: string, count: number): Promise<any[]> {
  const page = await waitFor(
    () => api(key, 'GET', `/v2/events?subscriptionId=${id}&limit=100`),
    (res) => res.status === 200 && res.body.data.length >= count,
    20_000,
  );
  return [...page.body.data].reverse();
}

describe('POST /v2/subscriptions', () => {
  it('creates it: 201 with Location, its externalId and metadata; a read and a find by externalId show it', async () => {
    const planId = randomUUID();
    const externalId = `sub_${randomUUID()}`;
    const res = await create(apiKey, { externalId, planId, cycle: 7, metadata: { crm: 'A-1' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      merchantId,
      planId,
      status: 'fulfilled',
      cycle: 7,
      externalId,
      metadata: { crm: 'A-1' },
      livemode: true,
    });
    expect(res.headers.get('location')).toBe(`/v2/subscriptions/${res.body.id}`);
    expect((await api(apiKey, 'GET', `/v2/subscriptions/${res.body.id}`)).body).toEqual(res.body);
    const found = await api(apiKey, 'GET', `/v2/subscriptions?externalId=${encodeURIComponent(externalId)}`);
    expect(found.body).toEqual({ data: [res.body], hasMore: false, nextCursor: null });
    const [created] = await eventsOf(apiKey, res.body.id, 1);
    expect(created).toMatchObject({ type: 'subscription.created', data: { subscription: res.body, cause: { kind: 'api' } } });
  });

  it('defaults to fulfilled and cycle 0; a paused one starts paused', async () => {
    expect((await create(apiKey)).body).toMatchObject({ status: 'fulfilled', cycle: 0 });
    const paused = await create(apiKey, { status: 'paused' });
    expect(paused.body.status).toBe('paused');
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${paused.body.id}/resume`)).body.status).toBe('fulfilled');
  });

  it('an externalId already used answers 409 0037 naming the subscription that has it; another merchant may use it', async () => {
    const first = await create(apiKey);
    const again = await create(apiKey, { externalId: first.body.externalId });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      code: '0037',
      detail: `Subscription ${first.body.id} already has externalId ${first.body.externalId}`,
    });
    const other = await t.merchant();
    expect((await create(other.apiKey, { externalId: first.body.externalId })).status).toBe(201);
    expect((await create(testApiKey, { externalId: first.body.externalId })).status).toBe(201);
  });

  it('a retry with the same Idempotency-Key answers the first answer and creates nothing more', async () => {
    const body = { externalId: `sub_${randomUUID()}`, planId: randomUUID() };
    const key = { 'Idempotency-Key': randomUUID() };
    const first = await create(apiKey, body, key);
    const replay = await create(apiKey, body, key);
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('unknown fields, a bad planId, more than 20 metadata keys or a status of cancelled answer 400 0040', async () => {
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']));
    for (const body of [{ status: 'cancelled' }, { planId: 'nope' }, { metadata: many }, { id: randomUUID() }]) {
      const res = await create(apiKey, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('0040');
    }
  });

  it('under a test key it is a test subscription (livemode false), unseen by the live mode', async () => {
    const res = await create(testApiKey);
    expect(res.body.livemode).toBe(false);
    expect((await api(apiKey, 'GET', `/v2/subscriptions/${res.body.id}`)).status).toBe(404);
  });
});

describe('PATCH /v2/subscriptions/{id} (merge patch)', () => {
  it('sets plan and cycle, sets and removes metadata keys, and sends subscription.updated naming what changed', async () => {
    const made = (await create(apiKey, { metadata: { a: '1', b: '2' } })).body;
    const planId = randomUUID();
    const res = await patch(apiKey, made.id, { planId, cycle: 4, metadata: { a: null, c: '3' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ planId, cycle: 4, metadata: { b: '2', c: '3' }, externalId: made.externalId });
    expect(res.body.modifiedAt > made.modifiedAt).toBe(true);
    const [, updated] = await eventsOf(apiKey, made.id, 2);
    expect(updated).toMatchObject({
      type: 'subscription.updated',
      data: { subscription: res.body, changed: ['planId', 'cycle', 'metadata'] },
    });
  });

  it('a patch that changes nothing answers the subscription as it is, with no event', async () => {
    const made = (await create(apiKey, { cycle: 2 })).body;
    const res = await patch(apiKey, made.id, { cycle: 2 });
    expect(res.body).toEqual(made);
    // Its next change's event comes right after its created one: none came between.
    await api(apiKey, 'POST', `/v2/subscriptions/${made.id}/pause`);
    expect((await eventsOf(apiKey, made.id, 2)).map((e) => e.type)).toEqual(['subscription.created', 'subscription.paused']);
  });

  it('moves its externalId: the old one is free again, a taken one answers 409 0037', async () => {
    const a = (await create(apiKey)).body;
    const b = (await create(apiKey)).body;
    const taken = await patch(apiKey, a.id, { externalId: b.externalId });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ code: '0037', detail: `Subscription ${b.id} already has externalId ${b.externalId}` });
    const moved = await patch(apiKey, a.id, { externalId: `${a.externalId}-moved` });
    expect(moved.body.externalId).toBe(`${a.externalId}-moved`);
    expect((await create(apiKey, { externalId: a.externalId })).status).toBe(201);
    expect((await api(apiKey, 'GET', `/v2/subscriptions?externalId=${a.externalId}-moved`)).body.data[0].id).toBe(a.id);
  });

  it('status is not patchable: 400 0047 naming pause, resume and cancel; nothing changes', async () => {
    const made = (await create(apiKey)).body;
    const res = await patch(apiKey, made.id, { status: 'paused', cycle: 9 });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: '0047', errors: [{ path: '/status' }] });
    expect(res.body.detail).toMatch(/pause, resume and cancel/);
    expect((await api(apiKey, 'GET', `/v2/subscriptions/${made.id}`)).body).toEqual(made);
  });

  it('a patch that breaks the schema answers 400 0040, one of another media type 415 0041; nothing changes', async () => {
    const made = (await create(apiKey)).body;
    for (const body of [{ cycle: 'x' }, { planId: 'nope' }, { id: randomUUID() }, {}]) {
      const res = await patch(apiKey, made.id, body);
      expect([res.status, res.body.code], JSON.stringify(body)).toEqual([400, '0040']);
    }
    const text = await call(t.baseUrl, `/v2/subscriptions/${made.id}`, {
      method: 'PATCH',
      apiKey,
      rawBody: 'cycle=2',
      headers: { 'content-type': 'text/plain' },
    });
    expect([text.status, text.body.code]).toEqual([415, '0041']);
    expect((await api(apiKey, 'GET', `/v2/subscriptions/${made.id}`)).body).toEqual(made);
  });

  it('another merchant’s subscription is not found (404 0020)', async () => {
    const made = (await create(apiKey)).body;
    const other = await t.merchant();
    expect((await patch(other.apiKey, made.id, { cycle: 1 })).body.code).toBe('0020');
  });
});

describe('POST /v2/subscriptions/{id}/cancel', () => {
  it('cancels, drops its scheduled pause, sends subscription.cancelled with the reason; pause then answers 409 0030', async () => {
    const made = (await create(apiKey)).body;
    const pauseAt = new Date(Date.now() + 86_400_000).toISOString();
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${made.id}/pause`, { pauseAt })).body.schedule).toBeTruthy();
    const res = await api(apiKey, 'POST', `/v2/subscriptions/${made.id}/cancel`, { reason: 'closed in billing' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: made.id, status: 'cancelled', externalId: made.externalId });
    expect(res.body.schedule).toBeUndefined();
    const stored = await t.db.collection('subscriptions').findOne({ _id: made.id as never });
    expect(stored).not.toHaveProperty('nextScheduledAt');
    const events = await eventsOf(apiKey, made.id, 3);
    expect(events.map((e) => e.type)).toEqual(['subscription.created', 'subscription.pause_scheduled', 'subscription.cancelled']);
    expect(events[2].data).toMatchObject({ previousStatus: 'fulfilled', reason: 'closed in billing', subscription: res.body });
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${made.id}/pause`)).body.code).toBe('0030');
  });

  it('cancelling a cancelled subscription answers 200 unchanged and sends nothing', async () => {
    const made = (await create(apiKey, { status: 'paused' })).body;
    const first = await api(apiKey, 'POST', `/v2/subscriptions/${made.id}/cancel`);
    const again = await api(apiKey, 'POST', `/v2/subscriptions/${made.id}/cancel`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    // A renewal after it is its next event: the second cancel sent none.
    await patch(apiKey, made.id, { cycle: 5 });
    const types = (await eventsOf(apiKey, made.id, 3)).map((e) => e.type);
    expect(types).toEqual(['subscription.created', 'subscription.cancelled', 'subscription.updated']);
  });

  it('drops a hold’s cover: the hold’s release leaves it cancelled', async () => {
    const merchant = await t.merchant();
    const made = (await create(merchant.apiKey)).body;
    const hold = await api(merchant.apiKey, 'POST', '/v2/holds', {});
    expect(hold.status).toBe(202);
    await waitFor(
      () => api(merchant.apiKey, 'GET', `/v2/subscriptions/${made.id}`),
      (res) => res.body.holdIds?.length === 1,
      30_000,
    );
    const cancelled = await api(merchant.apiKey, 'POST', `/v2/subscriptions/${made.id}/cancel`);
    expect(cancelled.body).toMatchObject({ status: 'cancelled' });
    expect(cancelled.body.holdIds).toBeUndefined();
    const release = await api(merchant.apiKey, 'POST', `/v2/holds/${hold.body.id}/release`);
    await waitFor(
      () => api(merchant.apiKey, 'GET', `/v2/bulk-requests/${release.body.releaseRequestId}`),
      (res) => res.body.state === 'completed',
      30_000,
    );
    expect((await api(merchant.apiKey, 'GET', `/v2/subscriptions/${made.id}`)).body.status).toBe('cancelled');
  });
});
