import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkRequestsOf } from './support/bulk.js';
import { call } from './support/http.js';
import { startTestService, type TestService } from './support/service.js';
import { waitFor } from './support/wait.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 4 });
});
afterAll(() => t.close());

const subscriptions = () => t.db.collection('subscriptions');
const countWith = (ids: string[], status: string) => subscriptions().countDocuments({ _id: { $in: ids as never[] }, status });
/** The log lines of a request's commands once applied (not the 'queued' ones, nor the request's own lines). */
const appliedLines = (requestId: string) => t.logLines.filter((l) => l.requestId === requestId && l.outcome !== undefined && l.outcome !== 'queued');
const bulk = (operation: 'pause' | 'resume', apiKey: string, ids: unknown, segment = 'bulk') =>
  call(t.baseUrl, `/v2/subscriptions/${segment}/${operation}`, { apiKey, json: { subscriptions: ids } });

/** FerretDB v1 writes about 50 documents a second here (DESIGN.md §8); MongoDB is far faster. */
const DRAIN_3000_MS = 240_000;

describe('bulk pause and resume of 3000 subscriptions', () => {
  it('applies every command after the 202, then resumes them all likewise', { timeout: 2 * DRAIN_3000_MS }, async () => {
    const { merchantId, apiKey } = await t.merchant();
    const ids = await t.seed(merchantId, 3000);
    const before = new Map((await subscriptions().find({ _id: { $in: ids as never[] } }).toArray()).map((d) => [d._id, d.modifiedAt]));

    const paused = await bulk('pause', apiKey, ids);
    expect(paused.status).toBe(202);
    expect(paused.body).toMatchObject({ operation: 'PAUSE', acceptedCount: 3000, rejected: [] });
    expect(paused.body.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await waitFor(() => countWith(ids, 'paused'), (n) => n === 3000, DRAIN_3000_MS, 500)).toBe(3000);
    const afterPause = await subscriptions().find({ _id: { $in: ids as never[] } }).toArray();
    expect(afterPause.every((d) => d.modifiedAt > before.get(d._id)!)).toBe(true);

    const resumed = await bulk('resume', apiKey, ids);
    expect(resumed.status).toBe(202);
    expect(resumed.body).toMatchObject({ operation: 'RESUME', acceptedCount: 3000 });
    expect(await waitFor(() => countWith(ids, 'fulfilled'), (n) => n === 3000, DRAIN_3000_MS, 500)).toBe(3000);
  });
});

describe('bulk acceptance', () => {
  it.each([
    ['3001 ids', () => Array.from({ length: 3001 }, () => randomUUID())],
    ['an empty list', () => []],
    ['a list that is not an array', () => 'not-a-list'],
  ])('%s answers 400 0040 and queues nothing', async (_case, makeIds) => {
    const { merchantId, apiKey } = await t.merchant();
    const res = await bulk('pause', apiKey, makeIds());
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('0040');
    expect(res.body.errors[0].path).toBe('/subscriptions');
    expect(await bulkRequestsOf(t.db, merchantId)).toBe(0);
  });

  it('one invalid UUID among valid ones answers 400 naming its position, and nothing is applied', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const ids = await t.seed(merchantId, 3);
    const res = await bulk('pause', apiKey, [ids[0], 'not-a-uuid', ids[1], ids[2]]);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(['/subscriptions/1', '/subscriptions/1']);
    await new Promise((r) => setTimeout(r, 500));
    expect(await countWith(ids, 'fulfilled')).toBe(3);
  });

  it('collapses duplicates, accepts upper case, and reports unknown and foreign ids as rejected without touching them', async () => {
    const mine = await t.merchant();
    const other = await t.merchant();
    const [a, b] = await t.seed(mine.merchantId, 2);
    const [foreign] = await t.seed(other.merchantId, 1);
    const unknown = randomUUID();
    const res = await bulk('pause', mine.apiKey, [a, a!.toUpperCase(), b, foreign, unknown, unknown]);
    expect(res.status).toBe(202);
    expect(res.body.acceptedCount).toBe(2);
    expect(res.body.rejected).toEqual([
      { subscriptionId: foreign, reason: 'not_found' },
      { subscriptionId: unknown, reason: 'not_found' },
    ]);
    expect(await waitFor(() => countWith([a!, b!], 'paused'), (n) => n === 2)).toBe(2);
    await new Promise((r) => setTimeout(r, 300));
    expect(await subscriptions().findOne({ _id: foreign as never })).toMatchObject({ status: 'fulfilled', merchantId: other.merchantId });
  });

  it.each(['%7BsubscriptionId%7D', '{subscriptionId}', 'bulk', '6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60'])(
    'the path segment %s is ignored by a bulk request',
    async (segment) => {
      const { merchantId, apiKey } = await t.merchant();
      const ids = await t.seed(merchantId, 2, 'paused');
      const res = await bulk('resume', apiKey, ids, segment);
      expect(res.status).toBe(202);
      expect(res.body.acceptedCount).toBe(2);
      expect(await waitFor(() => countWith(ids, 'fulfilled'), (n) => n === 2)).toBe(2);
    },
  );

  it('without an API key answers 401, queues nothing and changes nothing', async () => {
    const { merchantId } = await t.merchant();
    const ids = await t.seed(merchantId, 2);
    const res = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { json: { subscriptions: ids } });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('0010');
    expect(await t.db.collection('bulkRequests').countDocuments({ subscriptionIds: { $in: ids } })).toBe(0);
    await new Promise((r) => setTimeout(r, 500));
    expect(await countWith(ids, 'fulfilled')).toBe(2);
  });
});

describe('bulk processing', () => {
  it('skips cancelled subscriptions, leaves no-ops unchanged, and logs every outcome with its requestId', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [cancelled] = await t.seed(merchantId, 1, 'cancelled');
    const [alreadyPaused] = await t.seed(merchantId, 1, 'paused');
    const [fulfilled] = await t.seed(merchantId, 1, 'fulfilled');
    const before = await subscriptions().findOne({ _id: alreadyPaused as never });
    const res = await bulk('pause', apiKey, [cancelled, alreadyPaused, fulfilled]);
    expect(res.body.acceptedCount).toBe(3);
    const { requestId } = res.body;
    const outcomes = () =>
      appliedLines(requestId).map((l) => [l.subscriptionId, l.outcome, l.operation]);
    const seen = await waitFor(async () => outcomes(), (o) => o.length === 3, 20_000);
    expect(seen).toEqual(
      expect.arrayContaining([
        [cancelled, 'skipped', 'PAUSE'],
        [alreadyPaused, 'noop', 'PAUSE'],
        [fulfilled, 'applied', 'PAUSE'],
      ]),
    );
    expect(t.logLines.filter((l) => l.requestId === requestId && l.outcome === 'queued')).toHaveLength(3);
    expect(await subscriptions().findOne({ _id: cancelled as never })).toMatchObject({ status: 'cancelled' });
    expect(await subscriptions().findOne({ _id: alreadyPaused as never })).toMatchObject({ status: 'paused', modifiedAt: before!.modifiedAt });
  });

  it('a single pause racing a bulk resume of a fulfilled subscription: each order ends as that order says', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1, 'fulfilled');
    const [bulkReply, singleReply] = await Promise.all([
      bulk('resume', apiKey, [id]),
      call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey }),
    ]);
    expect(bulkReply.status).toBe(202);
    expect(singleReply.status).toBe(200);
    expect(singleReply.body.status).toBe('paused');
    const requestId = bulkReply.body.requestId;
    const [line] = await waitFor(
      async () => appliedLines(requestId),
      (lines) => lines.length === 1,
      20_000,
    );
    const final = await subscriptions().findOne({ _id: id as never });
    if (line!.outcome === 'applied') {
      // The pause came first; the resume found it paused and resumed it, after the pause's change.
      expect(final).toMatchObject({ status: 'fulfilled' });
      expect(final!.modifiedAt > singleReply.body.modifiedAt).toBe(true);
    } else {
      // The resume came first and found it fulfilled (nothing to do); the pause then paused it.
      expect(line!.outcome).toBe('noop');
      expect(final).toMatchObject({ status: 'paused', modifiedAt: singleReply.body.modifiedAt });
    }
  });

  it('a bulk resume racing single resumes of the same 300 subscriptions changes each exactly once, and no 200 is overwritten', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const ids = await t.seed(merchantId, 300, 'paused');
    const seeded = new Map((await subscriptions().find({ _id: { $in: ids as never[] } }).toArray()).map((d) => [d._id, d.modifiedAt]));
    const [bulkReply, ...singles] = await Promise.all([
      bulk('resume', apiKey, ids),
      ...ids.map((id) => call(t.baseUrl, `/v2/subscriptions/${id}/resume`, { apiKey })),
    ]);
    expect(bulkReply.status).toBe(202);
    const requestId = bulkReply.body.requestId;
    const outcomes = await waitFor(
      async () => appliedLines(requestId),
      (lines) => lines.length >= 300,
      60_000,
    );
    const byBulk = new Set(outcomes.filter((l) => l.outcome === 'applied').map((l) => l.subscriptionId));
    const bySingle = singles.filter((r) => r.status === 200 && r.body.modifiedAt !== seeded.get(r.body.id)).map((r) => r.body);
    expect(byBulk.size + bySingle.length).toBe(300);
    for (const single of bySingle) expect(byBulk.has(single.id)).toBe(false);
    const stored = new Map((await subscriptions().find({ _id: { $in: ids as never[] } }).toArray()).map((d) => [d._id, d]));
    expect([...stored.values()].every((d) => d.status === 'fulfilled')).toBe(true);
    for (const single of bySingle) expect(stored.get(single.id)!.modifiedAt).toBe(single.modifiedAt);
  });
});
