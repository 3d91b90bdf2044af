/** Following a bulk request from its 202 to each command's outcome (GET /v2/bulk-requests…). */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 2 });
});
afterAll(() => t.close());

const { api, completed } = httpOf(() => t);
const get = (apiKey: string, path: string) => api(apiKey, 'GET', path);
const bulk = (operation: 'pause' | 'resume', apiKey: string, ids: string[]) =>
  api(apiKey, 'POST', `/v2/subscriptions/bulk/${operation}`, { subscriptions: ids });

describe('a bulk request as a resource', () => {
  it('the 202 points to the status, which ends completed with counts that match the items and the database', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const fulfilled = await t.seed(merchantId, 3);
    const [paused] = await t.seed(merchantId, 1, 'paused');
    const [cancelled] = await t.seed(merchantId, 1, 'cancelled');
    const res = await bulk('pause', apiKey, [...fulfilled, paused!, cancelled!, randomUUID()]);
    expect(res.status).toBe(202);
    const location = res.headers.get('location');
    expect(location).toBe(`/v2/bulk-requests/${res.body.requestId}`);

    const status = await completed(apiKey, location!);
    expect(status.status).toBe(200);
    expect(res.body.rejected).toEqual(expect.arrayContaining([{ subscriptionId: cancelled, reason: 'cancelled' }]));
    expect(status.body).toMatchObject({
      requestId: res.body.requestId,
      operation: 'PAUSE',
      state: 'completed',
      acceptedCount: 4,
      counts: { pending: 0, applied: 3, noop: 1, skipped: 0, failed: 0 },
    });
    expect(status.body.completedAt >= status.body.createdAt).toBe(true);

    const items = await get(apiKey, `${location}/items`);
    const byId = Object.fromEntries(items.body.data.map((i: { subscriptionId: string }) => [i.subscriptionId, i]));
    expect(Object.keys(byId).sort()).toEqual([...fulfilled, paused].sort());
    for (const id of fulfilled) expect(byId[id]).toMatchObject({ outcome: 'applied', reason: null });
    expect(byId[paused!]).toMatchObject({ outcome: 'noop', reason: null });
    const stored = await t.db
      .collection('subscriptions')
      .find({ _id: { $in: fulfilled as never[] } })
      .toArray();
    expect(stored.map((s) => s.status)).toEqual(['paused', 'paused', 'paused']);
  });

  it('a request whose every command finds its target status reports each one noop, with its mark, and changes nothing', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const paused = await t.seed(merchantId, 5, 'paused');
    const before = await t.db
      .collection('subscriptions')
      .find({ _id: { $in: paused as never[] } })
      .sort({ _id: 1 })
      .toArray();
    const res = await bulk('pause', apiKey, paused);
    const status = await completed(apiKey, res.headers.get('location')!);
    expect(status.body.counts).toEqual({ pending: 0, applied: 0, noop: 5, skipped: 0, failed: 0 });
    const items = await get(apiKey, `${res.headers.get('location')}/items`);
    expect(items.body.data.map((i: { subscriptionId: string; outcome: string }) => `${i.subscriptionId} ${i.outcome}`).sort()).toEqual(
      [...paused].sort().map((id) => `${id} noop`),
    );
    const after = await t.db
      .collection('subscriptions')
      .find({ _id: { $in: paused as never[] } })
      .sort({ _id: 1 })
      .toArray();
    expect(after.map((s) => [s.status, s['modifiedAt']])).toEqual(before.map((s) => ['paused', s['modifiedAt']]));
    for (const s of after) expect(s['bulkCommands']).toContain(`${res.body.requestId}:noop`);
  });

  it('before any worker runs, every accepted command is pending and the request is queued', async () => {
    const httpOnly = await startTestService({ workers: 0 });
    try {
      const { merchantId, apiKey } = await httpOnly.merchant();
      const ids = await httpOnly.seed(merchantId, 3);
      const res = await call(httpOnly.baseUrl, '/v2/subscriptions/bulk/resume', { apiKey, json: { subscriptions: ids } });
      const status = await call(httpOnly.baseUrl, res.headers.get('location')!, { method: 'GET', apiKey });
      expect(status.body).toMatchObject({
        state: 'queued',
        completedAt: null,
        counts: { pending: 3, applied: 0, noop: 0, skipped: 0, failed: 0 },
      });
      const items = await call(httpOnly.baseUrl, `${res.headers.get('location')}/items?outcome=pending`, { method: 'GET', apiKey });
      expect(items.body.data.map((i: { subscriptionId: string }) => i.subscriptionId)).toEqual([...ids].sort());
      expect(items.body.data.every((i: { at: unknown }) => i.at === null)).toBe(true);
    } finally {
      await httpOnly.close();
    }
  });

  it('a request with no id of the caller’s is completed at once', async () => {
    const { apiKey } = await t.merchant();
    const res = await bulk('pause', apiKey, [randomUUID()]);
    const status = await get(apiKey, res.headers.get('location')!);
    expect(status.body).toMatchObject({ state: 'completed', acceptedCount: 0, counts: { pending: 0 }, completedAt: status.body.createdAt });
  });

  it('items filter by outcome and page by subscription id', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const ids = await t.seed(merchantId, 7);
    const alreadyPaused = await t.seed(merchantId, 2, 'paused');
    const res = await bulk('pause', apiKey, [...ids, ...alreadyPaused]);
    await completed(apiKey, res.headers.get('location')!);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await get(
        apiKey,
        `${res.headers.get('location')}/items?outcome=applied&limit=3${cursor ? `&startingAfter=${cursor}` : ''}`,
      );
      seen.push(...page.body.data.map((i: { subscriptionId: string }) => i.subscriptionId));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].sort());
    const noop = await get(apiKey, `${res.headers.get('location')}/items?outcome=noop`);
    expect(noop.body.data.map((i: { subscriptionId: string }) => i.subscriptionId)).toEqual([...alreadyPaused].sort());
  });

  it('another merchant’s, an unknown and a malformed request id answer 404 0022', async () => {
    const owner = await t.merchant();
    const [id] = await t.seed(owner.merchantId, 1);
    const { body } = await bulk('pause', owner.apiKey, [id!]);
    const { apiKey } = await t.merchant();
    for (const requestId of [body.requestId, randomUUID(), 'nope']) {
      for (const path of [`/v2/bulk-requests/${requestId}`, `/v2/bulk-requests/${requestId}/items`]) {
        const res = await get(apiKey, path);
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ code: '0022', detail: `Bulk request ${requestId} not found` });
      }
    }
  });

  it('the list (listBulkRequests) shows the caller’s requests newest first, a page at a time', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const accepted: string[] = [];
    for (let i = 0; i < 5; i++) accepted.push((await bulk(i % 2 ? 'resume' : 'pause', apiKey, [id!])).body.requestId);
    await bulk('pause', (await t.merchant()).apiKey, [randomUUID()]);
    const first = await get(apiKey, '/v2/bulk-requests?limit=3');
    const second = await get(apiKey, `/v2/bulk-requests?limit=3&startingAfter=${first.body.nextCursor}`);
    const listed = [...first.body.data, ...second.body.data].map((r: { requestId: string }) => r.requestId);
    expect(listed).toEqual([...accepted].reverse());
    expect(second.body).toMatchObject({ hasMore: false, nextCursor: null });
  });

  it('requests past their retention are removed', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const res = await bulk('pause', apiKey, [id!]);
    await completed(apiKey, res.headers.get('location')!);
    const past = { $set: { expiresAt: new Date(Date.now() - 1000) } };
    await t.db.collection('bulkRequests').updateOne({ _id: res.body.requestId }, past);
    await t.db.collection('bulkChunks').updateMany({ requestId: res.body.requestId }, past);
    expect(await t.service.bulkRequests.deleteExpired()).toBeGreaterThanOrEqual(1);
    expect((await get(apiKey, res.headers.get('location')!)).status).toBe(404);
    expect(await t.db.collection('bulkChunks').countDocuments({ requestId: res.body.requestId })).toBe(0);
  });
});
