/**
 * Bulk by filter, with a dry run (docs/design.md §6a), on the real database: what a filter
 * matches, that a dry run changes nothing and counts what the run then accepts, that the matches
 * are fixed at acceptance. The 100,000 limit: test/bulk/hundred-thousand-limit.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkRequestsOf } from '../support/bulk.js';
import { call, httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import type { SubscriptionStatus } from '../../src/subscriptions/subscriptions.rules.js';

let t: TestService;
const { completed } = httpOf(() => t);
beforeAll(async () => {
  t = await startTestService({ workers: 2, rateLimitPerSecond: 0 });
});
afterAll(() => t.close());

const subscriptions = () => t.db.collection('subscriptions');
const bulk = (operation: 'pause' | 'resume', apiKey: string, body: object) =>
  call(t.baseUrl, `/v2/subscriptions/bulk/${operation}`, { apiKey, json: body });
const seed = async (merchantId: string, count: number, status: SubscriptionStatus, planId: string, createdAt?: string) =>
  (await t.service.seeder.seed({ merchantId, count, status, planId, ...(createdAt ? { createdAt } : {}) })).map((s) => s.id);
const sorted = (ids: string[]) => [...ids].sort();

describe('which subscriptions a filter matches', () => {
  it('each field narrows the match, another merchant never matches, and a dry run changes nothing', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const other = await t.merchant();
    const [planA, planB] = [randomUUID(), randomUUID()];
    const old = '2025-01-01T00:00:00.000000Z';
    const recent = '2026-06-01T00:00:00.000000Z';
    const aOldActive = await seed(merchantId, 3, 'fulfilled', planA, old);
    const aRecentActive = await seed(merchantId, 4, 'fulfilled', planA, recent);
    const aRecentPaused = await seed(merchantId, 2, 'paused', planA, recent);
    const aCancelled = await seed(merchantId, 2, 'cancelled', planA, recent);
    const bActive = await seed(merchantId, 5, 'fulfilled', planB, recent);
    await seed(other.merchantId, 6, 'fulfilled', planA, recent);
    const before = await subscriptions().find({}).sort({ _id: 1 }).toArray();

    const cases: [string, object, string[], number][] = [
      ['everything (an empty filter)', {}, [...aOldActive, ...aRecentActive, ...aRecentPaused, ...bActive], 2],
      ['status', { status: ['fulfilled'] }, [...aOldActive, ...aRecentActive, ...bActive], 0],
      ['two statuses', { status: ['paused', 'cancelled'] }, aRecentPaused, 2],
      ['planId', { planId: [planB.toUpperCase()] }, bActive, 0],
      ['createdBefore', { createdBefore: '2026-01-01T00:00:00+01:00' }, aOldActive, 0],
      ['createdAfter', { createdAfter: '2025-01-01T00:00:00Z' }, [...aRecentActive, ...aRecentPaused, ...bActive], 2],
      [
        'every field at once',
        {
          status: ['fulfilled'],
          planId: [planA],
          createdAfter: '2026-05-31T23:59:59.999999Z',
          createdBefore: '2026-06-01T00:00:00.000001Z',
        },
        aRecentActive,
        0,
      ],
      ['a plan nobody has', { planId: [randomUUID()] }, [], 0],
    ];
    for (const [name, filter, acceptable, cancelled] of cases) {
      const dry = await bulk('pause', apiKey, { filter, dryRun: true });
      expect({ name, status: dry.status, body: dry.body }).toEqual({
        name,
        status: 200,
        body: {
          matchedCount: acceptable.length + cancelled,
          cancelledCount: cancelled,
          policyRejectedCount: 0,
          sample: sorted(acceptable).slice(0, 20),
          livemode: true,
        },
      });
    }
    expect(aCancelled).toHaveLength(2);
    expect(await subscriptions().find({}).sort({ _id: 1 }).toArray()).toEqual(before);
    expect(await bulkRequestsOf(t.db, merchantId)).toBe(0);
  });

  it("a filter with subscriptions, or neither, answers 400 0040; a bad date 0040; a dry run of ids counts the caller's own", async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [active] = await seed(merchantId, 1, 'fulfilled', randomUUID());
    const [cancelled] = await seed(merchantId, 1, 'cancelled', randomUUID());
    for (const body of [
      { subscriptions: [active], filter: {} },
      {},
      { dryRun: true },
      { filter: { createdBefore: 'yesterday' } },
      { filter: { status: [] } },
    ]) {
      const res = await bulk('resume', apiKey, body);
      expect({ body, status: res.status, code: res.body.code }).toEqual({ body, status: 400, code: '0040' });
    }
    const dry = await bulk('pause', apiKey, { subscriptions: [active, cancelled, randomUUID()], dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({ matchedCount: 2, cancelledCount: 1, policyRejectedCount: 0, sample: [active], livemode: true });
    expect(await bulkRequestsOf(t.db, merchantId)).toBe(0);
  });
});

describe('a bulk request by filter', () => {
  it(
    'accepts what its dry run counted, rejects the cancelled ones, fixes its matches at acceptance and is followed like any other',
    { timeout: 120_000 },
    async () => {
      const { merchantId, apiKey } = await t.merchant();
      const other = await t.merchant();
      const plan = randomUUID();
      const active = await seed(merchantId, 150, 'fulfilled', plan);
      const cancelled = await seed(merchantId, 3, 'cancelled', plan);
      const foreign = await seed(other.merchantId, 5, 'fulfilled', plan);
      const filter = { planId: [plan] };

      const dry = await bulk('pause', apiKey, { filter, dryRun: true });
      expect(dry.body).toMatchObject({ matchedCount: 153, cancelledCount: 3 });
      const accepted = await bulk('pause', apiKey, { filter });
      // Created after the acceptance, matching the filter: not part of the request.
      const later = await seed(merchantId, 2, 'fulfilled', plan);

      expect(accepted.status).toBe(202);
      expect(accepted.body.acceptedCount).toBe(dry.body.matchedCount - dry.body.cancelledCount);
      expect(sorted(accepted.body.rejected.map((r: { subscriptionId: string }) => r.subscriptionId))).toEqual(sorted(cancelled));
      expect(accepted.body.rejected.every((r: { reason: string }) => r.reason === 'cancelled')).toBe(true);
      const location = accepted.headers.get('location')!;
      const status = await completed(apiKey, location, 100_000, 250);
      expect(status.body.counts).toEqual({ pending: 0, applied: 150, noop: 0, skipped: 0, failed: 0 });
      const items = await call(t.baseUrl, `${location}/items?limit=100&outcome=applied`, { method: 'GET', apiKey });
      expect(items.body.data.every((i: { subscriptionId: string }) => active.includes(i.subscriptionId))).toBe(true);

      const statusOf = async (ids: string[]) =>
        (
          await subscriptions()
            .find({ _id: { $in: ids as never[] } })
            .toArray()
        ).map((d) => d.status);
      expect(new Set(await statusOf(active))).toEqual(new Set(['paused']));
      expect(await statusOf(later)).toEqual(['fulfilled', 'fulfilled']);
      expect(new Set(await statusOf(foreign))).toEqual(new Set(['fulfilled']));
      expect(new Set(await statusOf(cancelled))).toEqual(new Set(['cancelled']));
    },
  );

  it("5,100 matches, past a list's 3000: 51 chunks, stored and queued in parts, every one applied once", { timeout: 300_000 }, async () => {
    const { merchantId, apiKey } = await t.merchant();
    const plan = randomUUID();
    const ids = await seed(merchantId, 5_100, 'fulfilled', plan);

    const accepted = await bulk('pause', apiKey, { filter: { planId: [plan], status: ['fulfilled'] } });
    expect({ status: accepted.status, acceptedCount: accepted.body.acceptedCount, rejected: accepted.body.rejected }).toEqual({
      status: 202,
      acceptedCount: 5_100,
      rejected: [],
    });
    const location = accepted.headers.get('location')!;
    const status = await completed(apiKey, location, 280_000, 1_000);

    expect(status.body.counts).toEqual({ pending: 0, applied: 5_100, noop: 0, skipped: 0, failed: 0 });
    expect(await t.db.collection('bulkChunks').countDocuments({ requestId: accepted.body.requestId })).toBe(51);
    expect(await subscriptions().countDocuments({ _id: { $in: ids as never[] }, status: 'paused' })).toBe(5_100);
  });
});
