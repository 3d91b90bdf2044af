import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TIMESTAMP_PATTERN } from '../../src/lib/clock.js';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { cannotHoldWithout } from '../support/workarounds.js';

let t: TestService;
let apiKey: string;
let merchantId: string;
beforeAll(async () => {
  t = await startTestService();
  ({ apiKey, merchantId } = await t.merchant());
});
afterAll(() => t.close());

const stored = (id: string) => t.db.collection('subscriptions').findOne({ _id: id as never });
const pause = (id: string, options = {}) => call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey, ...options });
const resume = (id: string, options = {}) => call(t.baseUrl, `/v2/subscriptions/${id}/resume`, { apiKey, ...options });

describe('the state table (docs/design.md §4)', () => {
  it('pausing a fulfilled subscription answers 200 paused with a new modifiedAt and the same cycle', async () => {
    const [id] = await t.seed(merchantId, 1);
    const before = await stored(id!);
    const res = await pause(id!);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['createdAt', 'cycle', 'id', 'livemode', 'merchantId', 'modifiedAt', 'planId', 'status']);
    expect(res.body).toMatchObject({
      id,
      merchantId,
      planId: before!.planId,
      status: 'paused',
      cycle: before!.cycle,
      createdAt: before!.createdAt,
    });
    expect(res.body.modifiedAt > before!.modifiedAt).toBe(true);
    expect(await stored(id!)).toMatchObject({ status: 'paused', modifiedAt: res.body.modifiedAt, cycle: before!.cycle });
  });

  it('resuming a paused subscription answers 200 fulfilled without merchantId', async () => {
    const [id] = await t.seed(merchantId, 1, 'paused');
    const before = await stored(id!);
    const res = await resume(id!);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['createdAt', 'cycle', 'id', 'livemode', 'modifiedAt', 'planId', 'status']);
    expect(res.body).toMatchObject({ id, status: 'fulfilled', cycle: before!.cycle });
    expect(res.body.modifiedAt > before!.modifiedAt).toBe(true);
  });

  it('pausing a paused subscription changes nothing and answers 200 with it', async () => {
    const [id] = await t.seed(merchantId, 1, 'paused');
    const before = await stored(id!);
    const res = await pause(id!);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'paused', modifiedAt: before!.modifiedAt });
    expect(await stored(id!)).toEqual(before);
  });

  it('resuming a fulfilled subscription changes nothing and answers 200 with it', async () => {
    const [id] = await t.seed(merchantId, 1, 'fulfilled');
    const before = await stored(id!);
    const res = await resume(id!);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'fulfilled', modifiedAt: before!.modifiedAt });
    expect(await stored(id!)).toEqual(before);
  });

  it.each([
    ['pause', pause, 'paused'],
    ['resume', resume, 'resumed'],
  ] as const)('when the subscription is cancelled, %s answers 409 0030 and changes nothing', async (_name, operation, verb) => {
    const [id] = await t.seed(merchantId, 1, 'cancelled');
    const before = await stored(id!);
    const res = await operation(id!);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      code: '0030',
      title: 'Invalid status transition',
      detail: `Subscription ${id} is cancelled and cannot be ${verb}`,
    });
    expect(await stored(id!)).toEqual(before);
  });

  it('a pause then a resume round-trips, each with a later modifiedAt', async () => {
    const [id] = await t.seed(merchantId, 1);
    const paused = await pause(id!);
    const resumed = await resume(id!);
    expect(resumed.body.status).toBe('fulfilled');
    expect(resumed.body.modifiedAt > paused.body.modifiedAt).toBe(true);
  });
});

describe('timestamps (docs/design.md §5)', () => {
  it('carry exactly six fractional digits and round-trip exactly through storage', async () => {
    const [id] = await t.seed(merchantId, 1);
    const res = await pause(id!);
    expect(res.body.createdAt).toMatch(TIMESTAMP_PATTERN);
    expect(res.body.modifiedAt).toMatch(TIMESTAMP_PATTERN);
    const again = await pause(id!);
    expect(again.body.modifiedAt).toBe(res.body.modifiedAt);
    expect(new Date(res.body.modifiedAt).getTime()).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe('ids', () => {
  it('an unknown id answers 404 0020 whose detail names it', async () => {
    const id = '0b0e6f3c-1d2a-4c5b-8e9f-0a1b2c3d4e5f';
    const res = await pause(id);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: '0020', title: 'Subscription not found', detail: `Subscription ${id} not found` });
  });

  it('an id that is not a UUID is simply not found', async () => {
    const res = await resume('not-a-uuid');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: '0020', detail: 'Subscription not-a-uuid not found' });
  });

  it('an upper-case id finds the subscription', async () => {
    const [id] = await t.seed(merchantId, 1);
    const res = await pause(id!.toUpperCase());
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(id);
  });
});

describe('concurrency', () => {
  const name = '50 concurrent pauses of one subscription all answer 200 with one modifiedAt';
  it.skipIf(cannotHoldWithout('keyedMutex', name))(name, async () => {
    const [id] = await t.seed(merchantId, 1);
    const replies = await Promise.all(Array.from({ length: 50 }, () => pause(id!)));
    expect(replies.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(new Set(replies.map((r) => r.body.modifiedAt)).size).toBe(1);
    expect(new Set(replies.map((r) => r.body.status))).toEqual(new Set(['paused']));
    expect((await stored(id!))!.modifiedAt).toBe(replies[0]!.body.modifiedAt);
  });
});
