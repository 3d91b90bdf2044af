import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkRequestsOf } from '../support/bulk.js';
import { call, httpOf, type Reply } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { cannotHoldWithout } from '../support/workarounds.js';

let t: TestService;
const { completed } = httpOf(() => t);
beforeAll(async () => {
  // No rate limit: the race test sends 301 requests of one merchant at once, past the default burst of 200.
  t = await startTestService({ workers: 4, rateLimitPerSecond: 0 });
});
afterAll(() => t.close());

const subscriptions = () => t.db.collection('subscriptions');
const countWith = (ids: string[], status: string) => subscriptions().countDocuments({ _id: { $in: ids as never[] }, status });
/** The log lines of a request's commands once applied (not the 'queued' ones, nor the request's own lines). */
const appliedLines = (requestId: string) =>
  t.logLines.filter((l) => l.requestId === requestId && l.outcome !== undefined && l.outcome !== 'queued');
const bulk = (operation: 'pause' | 'resume', apiKey: string, ids: unknown, segment = 'bulk') =>
  call(t.baseUrl, `/v2/subscriptions/${segment}/${operation}`, { apiKey, json: { subscriptions: ids } });

/** FerretDB v1 writes about 50 documents a second here (docs/design.md §8); MongoDB is far faster. */
const DRAIN_3000_MS = 240_000;

describe('bulk pause and resume of 3000 subscriptions', () => {
  it(
    'applies every command after the 202, with counts that match the items and the database, then resumes them all likewise',
    { timeout: 2 * DRAIN_3000_MS },
    async () => {
      const { merchantId, apiKey } = await t.merchant();
      const fulfilled = await t.seed(merchantId, 2900);
      const alreadyPaused = await t.seed(merchantId, 60, 'paused');
      const cancelled = await t.seed(merchantId, 40, 'cancelled');
      const ids = [...fulfilled, ...alreadyPaused, ...cancelled];
      const before = new Map(
        (
          await subscriptions()
            .find({ _id: { $in: ids as never[] } })
            .toArray()
        ).map((d) => [String(d._id), d.modifiedAt]),
      );

      const paused = await bulk('pause', apiKey, ids);
      expect(paused.status).toBe(202);
      expect(paused.body).toMatchObject({ operation: 'PAUSE', acceptedCount: 2960 });
      expect(paused.body.rejected).toEqual(cancelled.map((subscriptionId) => ({ subscriptionId, reason: 'cancelled' })));
      const location = paused.headers.get('location')!;
      const status = await completed(apiKey, location, DRAIN_3000_MS, 500);
      expect(status.body.counts).toEqual({ pending: 0, applied: 2900, noop: 60, skipped: 0, failed: 0 });
      const items: { subscriptionId: string; outcome: string }[] = [];
      for (let cursor: string | null = ''; cursor !== null;) {
        const page: Reply = await call(t.baseUrl, `${location}/items?limit=100${cursor ? `&startingAfter=${cursor}` : ''}`, {
          method: 'GET',
          apiKey,
        });
        items.push(...page.body.data);
        cursor = page.body.nextCursor;
      }
      expect(items).toHaveLength(2960);
      expect(await countWith(cancelled, 'cancelled')).toBe(40);
      const stored = new Map(
        (
          await subscriptions()
            .find({ _id: { $in: ids as never[] } })
            .toArray()
        ).map((d) => [String(d._id), d]),
      );
      for (const item of items) {
        const doc = stored.get(item.subscriptionId)!;
        expect(doc.status).toBe('paused');
        expect(doc.modifiedAt > before.get(item.subscriptionId)!).toBe(item.outcome === 'applied');
      }

      const resumed = await bulk('resume', apiKey, fulfilled);
      expect(resumed.status).toBe(202);
      expect(resumed.body).toMatchObject({ operation: 'RESUME', acceptedCount: 2900 });
      expect(
        await waitFor(
          () => countWith(fulfilled, 'fulfilled'),
          (n) => n === 2900,
          DRAIN_3000_MS,
          500,
        ),
      ).toBe(2900);
    },
  );
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

  it.each([
    ['no body', {}],
    ['an empty object', { json: {} }],
  ])('POST /v2/subscriptions/bulk/pause with %s answers 400 0040 and queues nothing', async (_case, body) => {
    const { merchantId, apiKey } = await t.merchant();
    const res = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { apiKey, ...body });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('0040');
    expect(await bulkRequestsOf(t.db, merchantId)).toBe(0);
  });

  it('one invalid UUID among valid ones answers 400 naming its position, and nothing is applied', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const ids = await t.seed(merchantId, 3);
    const res = await bulk('pause', apiKey, [ids[0], 'not-a-uuid', ids[1], ids[2]]);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(['/subscriptions/1']);
    // Nothing was queued, so nothing can be applied later: no bulk request was recorded.
    expect(await bulkRequestsOf(t.db, merchantId)).toBe(0);
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
    // Once the request has completed, every command it holds has been applied: the foreign id is not among them.
    const done = await completed(mine.apiKey, res.headers.get('location')!, 20_000);
    expect(done.body.counts).toMatchObject({ pending: 0, applied: 2 });
    expect(await countWith([a!, b!], 'paused')).toBe(2);
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
      expect(
        await waitFor(
          () => countWith(ids, 'fulfilled'),
          (n) => n === 2,
        ),
      ).toBe(2);
    },
  );

  it('without an API key answers 401, queues nothing and changes nothing', async () => {
    const { merchantId } = await t.merchant();
    const ids = await t.seed(merchantId, 2);
    const res = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { json: { subscriptions: ids } });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('0010');
    // Nothing was queued, so nothing can be applied later.
    expect(await t.db.collection('bulkRequests').countDocuments({ subscriptionIds: { $in: ids } })).toBe(0);
    expect(await countWith(ids, 'fulfilled')).toBe(2);
  });
});

describe('bulk processing', () => {
  it('rejects cancelled subscriptions at acceptance, leaves no-ops unchanged, and logs every outcome with its requestId', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [cancelled] = await t.seed(merchantId, 1, 'cancelled');
    const [alreadyPaused] = await t.seed(merchantId, 1, 'paused');
    const [fulfilled] = await t.seed(merchantId, 1, 'fulfilled');
    const before = await subscriptions().findOne({ _id: alreadyPaused as never });
    const res = await bulk('pause', apiKey, [cancelled, alreadyPaused, fulfilled]);
    expect(res.body).toMatchObject({ acceptedCount: 2, rejected: [{ subscriptionId: cancelled, reason: 'cancelled' }] });
    const { requestId } = res.body;
    const outcomes = () => appliedLines(requestId).map((l) => [l.subscriptionId, l.outcome, l.operation]);
    const seen = await waitFor(
      async () => outcomes(),
      (o) => o.length === 2,
      20_000,
    );
    expect(seen).toEqual(
      expect.arrayContaining([
        [alreadyPaused, 'noop', 'PAUSE'],
        [fulfilled, 'applied', 'PAUSE'],
      ]),
    );
    expect(t.logLines.filter((l) => l.requestId === requestId && l.outcome === 'queued')).toHaveLength(2);
    expect(t.logLines.some((l) => l.subscriptionId === cancelled)).toBe(false);
    expect(await subscriptions().findOne({ _id: cancelled as never })).toMatchObject({ status: 'cancelled' });
    expect(await subscriptions().findOne({ _id: alreadyPaused as never })).toMatchObject({
      status: 'paused',
      modifiedAt: before!.modifiedAt,
    });
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

  const racing = 'a bulk resume racing single resumes of the same 300 subscriptions changes each exactly once, and no 200 is overwritten';
  it.skipIf(cannotHoldWithout('keyedMutex', racing))(racing, async () => {
    const { merchantId, apiKey } = await t.merchant();
    const ids = await t.seed(merchantId, 300, 'paused');
    const seeded = new Map(
      (
        await subscriptions()
          .find({ _id: { $in: ids as never[] } })
          .toArray()
      ).map((d) => [d._id, d.modifiedAt]),
    );
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
    expect(outcomes.map((l) => l.outcome).filter((o) => o !== 'applied' && o !== 'noop')).toEqual([]);
    // Each subscription changed once: by the bulk command (the single then found it resumed) or by
    // the single call (the command then found nothing to do). Either way the last change is the
    // one every 200 reported: no answer was overwritten by a second change.
    const stored = new Map(
      (
        await subscriptions()
          .find({ _id: { $in: ids as never[] } })
          .toArray()
      ).map((d) => [d._id, d]),
    );
    for (const single of singles) {
      expect(single.status).toBe(200);
      const doc = stored.get(single.body.id)!;
      expect(doc.status).toBe('fulfilled');
      expect(single.body.modifiedAt).toBe(doc.modifiedAt);
      expect(doc.modifiedAt > seeded.get(single.body.id)!).toBe(true);
    }
  });
});
