/**
 * The lists a subscription keeps stay bounded on whichever engine runs: its bulk command marks
 * (the last KEPT_COMMAND_MARKS) and its pause times (the last KEPT_PAUSE_TIMES), both kept by
 * `$push` with `$each` and `$slice` (docs/design.md §8). FerretDB v1.24.2 as released ignores
 * `$slice`, so there both lists grew with every command and every pause; the project's build
 * patches it (patches/ferretdb-v1.24.2-push-slice.patch).
 */
import { randomUUID } from 'node:crypto';
import { Double } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEPT_COMMAND_MARKS } from '../../src/subscriptions/subscription.document.js';
import { KEPT_PAUSE_TIMES } from '../../src/pause-policy/pause-policy.rules.js';
import { call, httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

let t: TestService;
const { completed } = httpOf(() => t);
beforeAll(async () => {
  t = await startTestService({ workers: 1 });
});
afterAll(() => t.close());

describe('$push with $each and $slice, on the engine the tests run on', () => {
  const lists = () => t.db.collection<{ _id: string; a?: unknown[] }>(`lists_${randomUUID().slice(0, 8)}`);
  const pushFive = async (slice: unknown) => {
    const c = lists();
    await c.insertOne({ _id: 'x', a: [1, 2] });
    for (const v of [3, 4, 5, 6, 7]) await c.updateOne({ _id: 'x' }, { $push: { a: { $each: [v], $slice: slice } } });
    return (await c.findOne({ _id: 'x' }))?.a;
  };

  it('keeps the last n for a negative $slice, the first n for a positive one, none for 0', async () => {
    expect(await pushFive(-2)).toEqual([6, 7]);
    expect(await pushFive(3)).toEqual([1, 2, 3]);
    expect(await pushFive(0)).toEqual([]);
    expect(await pushFive(-100)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // A double without a fraction counts as a whole number, as in MongoDB.
    expect(await pushFive(new Double(2))).toEqual([1, 2]);
  });

  it('slices what several elements pushed at once leave, and a field it creates', async () => {
    const c = lists();
    await c.insertOne({ _id: 'x' });
    await c.updateOne({ _id: 'x' }, { $push: { a: { $each: [1, 2, 3, 4], $slice: -3 } } });
    expect((await c.findOne({ _id: 'x' }))?.a).toEqual([2, 3, 4]);
  });

  it('refuses a $slice that is not a whole number, changing nothing', async () => {
    for (const slice of ['2', 1.5, null]) {
      const c = lists();
      await c.insertOne({ _id: 'x', a: [1] });
      await expect(c.updateOne({ _id: 'x' }, { $push: { a: { $each: [2], $slice: slice } } })).rejects.toMatchObject({ code: 2 });
      expect((await c.findOne({ _id: 'x' }))?.a).toEqual([1]);
    }
  });
});

describe('what a subscription keeps', () => {
  it(`keeps the marks of its last ${KEPT_COMMAND_MARKS} bulk commands`, async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const requestIds: string[] = [];
    for (let i = 0; i < KEPT_COMMAND_MARKS + 3; i++) {
      const res = await call(t.baseUrl, `/v2/subscriptions/bulk/${i % 2 ? 'resume' : 'pause'}`, { apiKey, json: { subscriptions: [id] } });
      expect(res.status).toBe(202);
      requestIds.push(res.body.requestId);
      // One after another, so that the marks are pushed in the order the requests were sent.
      await completed(apiKey, res.headers.get('location')!, 30_000);
    }
    const stored = await t.db.collection('subscriptions').findOne({ _id: id as never });
    expect(stored?.['bulkCommands']).toEqual(requestIds.slice(-KEPT_COMMAND_MARKS).map((r) => `${r}:applied`));
    expect(stored?.['status']).toBe('paused');
  });

  it(`keeps its last ${KEPT_PAUSE_TIMES} pause times`, async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const pausedAt: string[] = [];
    for (let i = 0; i < KEPT_PAUSE_TIMES + 2; i++) {
      const paused = await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey });
      expect(paused.status).toBe(200);
      pausedAt.push(paused.body.modifiedAt);
      expect((await call(t.baseUrl, `/v2/subscriptions/${id}/resume`, { apiKey })).status).toBe(200);
    }
    const stored = await t.db.collection('subscriptions').findOne({ _id: id as never });
    expect(stored?.['recentPauses']).toEqual(pausedAt.slice(-KEPT_PAUSE_TIMES));
  });
});
