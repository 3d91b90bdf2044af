/**
 * Timestamps a request gives (docs/design.md §5): whatever its offset, one whose UTC form leaves
 * 0000-01-01T00:00:00Z..9999-12-31T23:59:59.999999Z answers 400 0040 wherever times are taken
 * (fixtures, schedules, bulk filters, the test clock), and nothing is stored; the bounds themselves
 * are taken and stored in the spec's pattern.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.close());

/** Each is within 0000-9999 as written, and outside it in UTC (or, for the leap second, once carried over). */
const OUT_OF_RANGE = [
  '9999-12-31T23:59:59.999999-23:59',
  '9999-12-31T23:59:60Z',
  '0000-01-01T00:00:00+00:01',
  '0000-01-01T23:58:59.999999+23:59',
];
const RANGE_MESSAGE = /0000-01-01T00:00:00Z.*9999-12-31T23:59:59\.999999Z/;

function expectOutOfRange(res: { status: number; body: any }, path: string): void {
  expect(res.status).toBe(400);
  expect(res.body.code).toBe('0040');
  expect(res.body.errors).toEqual([{ path, message: expect.stringMatching(RANGE_MESSAGE) }]);
}

describe('a timestamp outside years 0000-9999 in UTC answers 400 0040, changing nothing', () => {
  it.each(OUT_OF_RANGE)('a fixture createdAt of %s', async (createdAt) => {
    const m = await t.merchant();
    const res = await call(t.baseUrl, '/v2/test-helpers/subscriptions', { apiKey: m.testApiKey, json: { count: 1, createdAt } });
    expectOutOfRange(res, '/createdAt');
    const list = await call(t.baseUrl, '/v2/subscriptions', { method: 'GET', apiKey: m.testApiKey });
    expect(list.body.data).toEqual([]);
  });

  it.each(OUT_OF_RANGE)('a schedule pauseAt or resumeAt of %s', async (at) => {
    const m = await t.merchant();
    const [id] = await t.seed(m.merchantId, 1);
    for (const field of ['pauseAt', 'resumeAt']) {
      const res = await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey: m.apiKey, json: { [field]: at } });
      expectOutOfRange(res, `/${field}`);
    }
    const read = await call(t.baseUrl, `/v2/subscriptions/${id}`, { method: 'GET', apiKey: m.apiKey });
    expect(read.body.status).toBe('fulfilled');
    expect(read.body.schedule).toBeUndefined();
  });

  it.each(OUT_OF_RANGE)('a bulk filter createdBefore or createdAfter of %s', async (at) => {
    const m = await t.merchant();
    await t.seed(m.merchantId, 2);
    for (const field of ['createdBefore', 'createdAfter']) {
      const res = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { apiKey: m.apiKey, json: { filter: { [field]: at } } });
      expectOutOfRange(res, `/filter/${field}`);
    }
    expect((await call(t.baseUrl, '/v2/bulk-requests', { method: 'GET', apiKey: m.apiKey })).body.data).toEqual([]);
  });

  it.each(OUT_OF_RANGE)('a test clock advance to %s', async (to) => {
    const m = await t.merchant();
    const before = (await call(t.baseUrl, '/v2/test-helpers/clock', { method: 'GET', apiKey: m.testApiKey })).body.now;
    const res = await call(t.baseUrl, '/v2/test-helpers/clock/advance', { apiKey: m.testApiKey, json: { to } });
    expectOutOfRange(res, '/to');
    const after = (await call(t.baseUrl, '/v2/test-helpers/clock', { method: 'GET', apiKey: m.testApiKey })).body.now;
    expect(after >= before).toBe(true);
    expect(after.startsWith(before.slice(0, 4))).toBe(true);
  });
});

describe('the bounds themselves are taken', () => {
  it('fixtures made at 0000-01-01T00:00:00Z and at 9999-12-31T23:59:59.999999Z (written with any offset) are stored and shown in the spec’s pattern, and filter as their instants', async () => {
    const m = await t.merchant();
    const first = await call(t.baseUrl, '/v2/test-helpers/subscriptions', {
      apiKey: m.testApiKey,
      json: { count: 1, createdAt: '0000-01-01T01:00:00+01:00' },
    });
    const last = await call(t.baseUrl, '/v2/test-helpers/subscriptions', {
      apiKey: m.testApiKey,
      json: { count: 1, createdAt: '9999-12-31T00:00:59.999999-23:59' },
    });
    expect([first.status, last.status]).toEqual([201, 201]);
    expect(first.body.data[0].createdAt).toBe('0000-01-01T00:00:00.000000Z');
    expect(last.body.data[0].createdAt).toBe('9999-12-31T23:59:59.999999Z');
    const old = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', {
      apiKey: m.testApiKey,
      json: { filter: { createdBefore: '2000-01-01T00:00:00Z' }, dryRun: true },
    });
    expect(old.status).toBe(200);
    expect(old.body.matchedCount).toBe(1);
  });
});
