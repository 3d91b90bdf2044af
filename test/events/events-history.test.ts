/**
 * One subscription's history and one bulk request's events (issue 46 §4): `GET /v2/events` with
 * `subscriptionId` or `requestId`, newest first, a page at a time, with `type` and each other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 1, bulkPollIntervalMs: 50 });
});
afterAll(async () => {
  await t?.close();
});

const { api } = httpOf(() => t);

/** Every page of the list at `query`, followed with its cursor, `limit` at a time. */
async function allPages(apiKey: string, query: string, limit: number): Promise<any[]> {
  const events: any[] = [];
  let cursor: string | null = null;
  do {
    const page = await api(apiKey, 'GET', `/v2/events?${query}&limit=${limit}${cursor ? `&startingAfter=${cursor}` : ''}`);
    expect(page.status).toBe(200);
    events.push(...page.body.data);
    cursor = page.body.hasMore ? page.body.nextCursor : null;
  } while (cursor);
  return events;
}

/**
 * A subscription paused and resumed by single requests, then paused with another by a bulk
 * request; a third subscription changed on its own. Waits for all seven events.
 */
async function history() {
  const { merchantId, apiKey } = await t.merchant();
  const [a, b, other] = await t.seed(merchantId, 3);
  expect((await api(apiKey, 'POST', `/v2/subscriptions/${a}/pause`)).status).toBe(200);
  expect((await api(apiKey, 'POST', `/v2/subscriptions/${a}/resume`)).status).toBe(200);
  expect((await api(apiKey, 'POST', `/v2/subscriptions/${other}/pause`)).status).toBe(200);
  const bulk = await api(apiKey, 'POST', '/v2/subscriptions/bulk/pause', { subscriptions: [a, b] });
  expect(bulk.status).toBe(202);
  const requestId: string = bulk.body.requestId;
  const everything = await waitFor(
    async () => (await api(apiKey, 'GET', '/v2/events?limit=100')).body.data as any[],
    (e) => e.length >= 6,
    30_000,
  );
  expect(everything).toHaveLength(6);
  return { merchantId, apiKey, a: a!, b: b!, other: other!, requestId, everything };
}

describe("GET /v2/events?subscriptionId=…: one subscription's history", () => {
  it("lists only that subscription's events, newest first, each with the cause that made it, page by page", async () => {
    const { apiKey, a, requestId } = await history();
    const whole = await api(apiKey, 'GET', `/v2/events?subscriptionId=${a}`);
    expect(whole.status).toBe(200);
    expect(whole.body.data.map((e: any) => [e.type, e.data.subscription.id, e.data.cause.kind])).toEqual([
      ['subscription.paused', a, 'bulk'],
      ['subscription.resumed', a, 'api'],
      ['subscription.paused', a, 'api'],
    ]);
    expect(whole.body.data[0].data.cause.requestId).toBe(requestId);
    expect(whole.body.data[1].data.cause.apiKeyId).toEqual(expect.any(String));
    expect(whole.body.hasMore).toBe(false);
    // The same three, one page at a time.
    expect((await allPages(apiKey, `subscriptionId=${a}`, 1)).map((e) => e.id)).toEqual(whole.body.data.map((e: any) => e.id));
  });

  it('combines with type, and takes the id in upper case', async () => {
    const { apiKey, a } = await history();
    const paused = await api(apiKey, 'GET', `/v2/events?subscriptionId=${a.toUpperCase()}&type=subscription.paused`);
    expect(paused.status).toBe(200);
    expect(paused.body.data.map((e: any) => [e.type, e.data.cause.kind])).toEqual([
      ['subscription.paused', 'bulk'],
      ['subscription.paused', 'api'],
    ]);
  });

  it("answers an empty page for another merchant's subscription and for one without events", async () => {
    const { a } = await history();
    const stranger = await t.merchant();
    const foreign = await api(stranger.apiKey, 'GET', `/v2/events?subscriptionId=${a}`);
    expect(foreign.status).toBe(200);
    expect(foreign.body).toEqual({ data: [], hasMore: false, nextCursor: null });
    const [quiet] = await t.seed(stranger.merchantId, 1);
    expect((await api(stranger.apiKey, 'GET', `/v2/events?subscriptionId=${quiet}`)).body.data).toEqual([]);
  });
});

describe("GET /v2/events?requestId=…: a bulk request's events", () => {
  it('lists the changes it made and its completion, newest first, and nothing else', async () => {
    const { apiKey, a, b, requestId, everything } = await history();
    const completed = await waitFor(
      async () => (await api(apiKey, 'GET', `/v2/events?requestId=${requestId}`)).body.data as any[],
      (e) => e.length >= 3,
      30_000,
    );
    expect(completed.map((e) => e.type).sort()).toEqual(['bulk_request.completed', 'subscription.paused', 'subscription.paused']);
    expect(
      completed
        .filter((e) => e.type === 'subscription.paused')
        .map((e) => e.data.subscription.id)
        .sort(),
    ).toEqual([a, b].sort());
    expect(completed.find((e) => e.type === 'bulk_request.completed').data.requestId).toBe(requestId);
    expect(completed.map((e) => e.id)).toEqual(
      completed
        .map((e) => e.id)
        .sort()
        .reverse(),
    );
    // In the order of the whole list, which has the other changes too.
    const ids = new Set(completed.map((e) => e.id));
    expect(everything.filter((e) => ids.has(e.id)).map((e) => e.id)).toEqual(completed.map((e) => e.id));
    expect((await allPages(apiKey, `requestId=${requestId}`, 2)).map((e) => e.id)).toEqual(completed.map((e) => e.id));
  });

  it('combines with subscriptionId and type (all must hold)', async () => {
    const { apiKey, a, requestId } = await history();
    await waitFor(
      async () => (await api(apiKey, 'GET', `/v2/events?requestId=${requestId}`)).body.data.length,
      (n) => n >= 3,
      30_000,
    );
    const one = await api(apiKey, 'GET', `/v2/events?requestId=${requestId}&subscriptionId=${a}`);
    expect(one.body.data.map((e: any) => [e.type, e.data.subscription.id, e.data.cause.requestId])).toEqual([
      ['subscription.paused', a, requestId],
    ]);
    const completion = await api(apiKey, 'GET', `/v2/events?requestId=${requestId}&type=bulk_request.completed`);
    expect(completion.body.data.map((e: any) => e.data.requestId)).toEqual([requestId]);
    expect((await api(apiKey, 'GET', `/v2/events?requestId=${requestId}&type=subscription.resumed`)).body.data).toEqual([]);
  });

  it("answers an empty page for another merchant's request", async () => {
    const { requestId } = await history();
    const stranger = await t.merchant();
    const foreign = await api(stranger.apiKey, 'GET', `/v2/events?requestId=${requestId}`);
    expect(foreign.status).toBe(200);
    expect(foreign.body.data).toEqual([]);
  });
});

describe('an id that is not a UUID', () => {
  it.each([
    ['subscriptionId', 'not-a-uuid'],
    ['subscriptionId', '6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f6'],
    ['requestId', 'abc'],
    ['requestId', "6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60' OR 1=1"],
  ])('answers 400 0040 for %s=%s', async (name, value) => {
    const { apiKey } = await t.merchant();
    const answer = await api(apiKey, 'GET', `/v2/events?${name}=${encodeURIComponent(value)}`);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('0040');
    expect(JSON.stringify(answer.body.errors ?? answer.body.detail)).toContain(name);
  });
});

describe('in test mode', () => {
  it("a test key reads its subscription's history, the test clock's resume included; a live subscription is an empty page to it", async () => {
    const { merchantId, apiKey, testApiKey } = await t.merchant();
    const [live] = await t.seed(merchantId, 1);
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${live}/pause`)).status).toBe(200);
    const created = await api(testApiKey, 'POST', '/v2/test-helpers/subscriptions', { count: 2 });
    const [id, other] = created.body.data.map((s: { id: string }) => s.id);
    const now = Date.parse((await api(testApiKey, 'GET', '/v2/test-helpers/clock')).body.now);
    const day = 86_400_000;
    expect(
      (await api(testApiKey, 'POST', `/v2/subscriptions/${id}/pause`, { resumeAt: new Date(now + 30 * day).toISOString() })).status,
    ).toBe(200);
    expect((await api(testApiKey, 'POST', `/v2/subscriptions/${other}/pause`)).status).toBe(200);
    expect((await api(testApiKey, 'POST', '/v2/test-helpers/clock/advance', { to: new Date(now + 31 * day).toISOString() })).status).toBe(
      200,
    );

    // The advance answers once its events are recorded: read at once.
    const own = await api(testApiKey, 'GET', `/v2/events?subscriptionId=${id}`);
    expect(own.body.data.map((e: any) => [e.type, e.data.cause.kind, e.livemode])).toEqual([
      ['subscription.resumed', 'schedule', false],
      ['subscription.resume_scheduled', 'api', false],
      ['subscription.paused', 'api', false],
    ]);
    const liveHistory = await waitFor(
      async () => (await api(apiKey, 'GET', `/v2/events?subscriptionId=${live}`)).body.data as any[],
      (e) => e.length === 1,
      30_000,
    );
    expect(liveHistory.map((e) => e.livemode)).toEqual([true]);
    expect((await api(testApiKey, 'GET', `/v2/events?subscriptionId=${live}`)).body.data).toEqual([]);
    expect((await api(apiKey, 'GET', `/v2/events?subscriptionId=${id}`)).body.data).toEqual([]);
  });
});
