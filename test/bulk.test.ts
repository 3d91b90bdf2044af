import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOBS_COLLECTION } from '../src/bulk/bulk.jobs.js';
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
    const { apiKey } = await t.merchant();
    const jobsBefore = await t.db.collection(JOBS_COLLECTION).countDocuments();
    const res = await bulk('pause', apiKey, makeIds());
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('0040');
    expect(res.body.errors[0].path).toBe('/subscriptions');
    expect(await t.db.collection(JOBS_COLLECTION).countDocuments()).toBe(jobsBefore);
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

  it('without an API key answers 401 and queues nothing', async () => {
    const res = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { json: { subscriptions: [randomUUID()] } });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('0010');
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
      t.logLines.filter((l) => l.requestId === requestId && l.outcome !== 'queued').map((l) => [l.subscriptionId, l.outcome, l.operation]);
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
    expect(await subscriptions().findOne({ _id: alreadyPaused as never })).toEqual(before);
  });

  it('a single pause racing a bulk resume ends paused or fulfilled, consistent with the order the log shows', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1, 'paused');
    const [bulkReply, singleReply] = await Promise.all([
      bulk('resume', apiKey, [id]),
      call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey }),
    ]);
    expect(bulkReply.status).toBe(202);
    expect(singleReply.status).toBe(200);
    const requestId = bulkReply.body.requestId;
    const [line] = await waitFor(
      async () => t.logLines.filter((l) => l.requestId === requestId && l.outcome !== 'queued'),
      (lines) => lines.length === 1,
      20_000,
    );
    const final = await subscriptions().findOne({ _id: id as never });
    // The resume applied after the pause → fulfilled; it found it already fulfilled → noop → paused stays.
    if (line!.outcome === 'applied') expect(final!.status).toBe('fulfilled');
    else expect(final!.status).toBe(singleReply.body.status);
    expect(['applied', 'noop']).toContain(line!.outcome);
  });
});
