/** Undoing a bulk request (POST /v2/bulk-requests/{requestId}/undo), through HTTP on the real database. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpOf, type Reply } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let t: TestService;
/** A service without workers: what it accepts stays queued. */
let idle: TestService;
beforeAll(async () => {
  [t, idle] = await Promise.all([startTestService({ workers: 2 }), startTestService({ workers: 0 })]);
});
afterAll(() => Promise.all([t?.close(), idle?.close()]));

const { api, completed } = httpOf(() => t);
const onIdle = httpOf(() => idle).api;
const bulk = (operation: 'pause' | 'resume', apiKey: string, ids: string[], on: TestService = t) =>
  (on === idle ? onIdle : api)(apiKey, 'POST', `/v2/subscriptions/bulk/${operation}`, { subscriptions: ids });
const undo = (apiKey: string, requestId: string, on: TestService = t) =>
  (on === idle ? onIdle : api)(apiKey, 'POST', `/v2/bulk-requests/${requestId}/undo`);
const statusOf = async (apiKey: string, id: string) => (await api(apiKey, 'GET', `/v2/subscriptions/${id}`)).body.status;
const statuses = async (apiKey: string, ids: readonly string[]) => Promise.all(ids.map((id) => statusOf(apiKey, id)));
const problem = (res: Reply, status: number, code: string) => {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  expect(res.body.code).toBe(code);
};

/** A completed bulk request over fresh subscriptions: `n` it applies, one it finds already done, one cancelled. */
async function completedBulk(apiKey: string, merchantId: string, operation: 'pause' | 'resume', n: number) {
  const [from, to] = operation === 'pause' ? (['fulfilled', 'paused'] as const) : (['paused', 'fulfilled'] as const);
  const changed = await t.seed(merchantId, n, from);
  const [already] = await t.seed(merchantId, 1, to);
  const [cancelled] = await t.seed(merchantId, 1, 'cancelled');
  const res = await bulk(operation, apiKey, [...changed, already!, cancelled!]);
  expect(res.status).toBe(202);
  await completed(apiKey, res.body.requestId);
  return { requestId: res.body.requestId as string, changed, already: already!, cancelled: cancelled! };
}

describe('undo of a bulk request', () => {
  it('undoes a completed pause: resumes exactly those it paused, and leaves the noop, cancelled and rejected ones', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const original = await completedBulk(apiKey, merchantId, 'pause', 3);

    const res = await undo(apiKey, original.requestId);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      requestId: expect.any(String),
      operation: 'RESUME',
      acceptedCount: 3,
      rejected: [],
      undoes: original.requestId,
      livemode: true,
    });
    expect(res.headers.get('location')).toBe(`/v2/bulk-requests/${res.body.requestId}`);
    expect(res.headers.get('ratelimit-policy')).toBeTruthy();

    const done = await completed(apiKey, res.body.requestId);
    expect(done.body).toMatchObject({
      operation: 'RESUME',
      acceptedCount: 3,
      counts: { pending: 0, applied: 3, noop: 0, skipped: 0, failed: 0 },
      undoes: original.requestId,
    });
    expect((await api(apiKey, 'GET', `/v2/bulk-requests/${original.requestId}`)).body.undoes).toBeUndefined();
    expect(await statuses(apiKey, original.changed)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    // The one the pause found paused already stays paused: the undo only takes back what the pause did.
    expect(await statusOf(apiKey, original.already)).toBe('paused');
    expect(await statusOf(apiKey, original.cancelled)).toBe('cancelled');

    type Event = { data: { cause: { kind: string; requestId?: string }; subscription: { id: string } } };
    const byUndo = (data: Event[]) => data.filter((e) => e.data.cause.requestId === res.body.requestId);
    const events = await waitFor(
      async () => (await api(apiKey, 'GET', '/v2/events?type=subscription.resumed')).body.data as Event[],
      (data) => byUndo(data).length === 3,
      30_000,
    );
    expect(byUndo(events).map((e) => e.data.cause.kind)).toEqual(['bulk', 'bulk', 'bulk']);
    expect(
      byUndo(events)
        .map((e) => e.data.subscription.id)
        .sort(),
    ).toEqual([...original.changed].sort());
  });

  it('undoes a completed resume by pausing what it resumed', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const original = await completedBulk(apiKey, merchantId, 'resume', 2);
    const res = await undo(apiKey, original.requestId);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ operation: 'PAUSE', acceptedCount: 2, rejected: [], undoes: original.requestId });
    await completed(apiKey, res.body.requestId);
    expect(await statuses(apiKey, original.changed)).toEqual(['paused', 'paused']);
    expect(await statusOf(apiKey, original.already)).toBe('fulfilled');
  });

  it('leaves alone, as changed_since, a subscription changed by a single call after the original applied it', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const original = await completedBulk(apiKey, merchantId, 'pause', 3);
    const [touched, ...untouched] = original.changed;
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${touched}/resume`)).status).toBe(200);
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${touched}/pause`)).status).toBe(200);

    const res = await undo(apiKey, original.requestId);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ acceptedCount: 2, rejected: [{ subscriptionId: touched, reason: 'changed_since' }] });
    await completed(apiKey, res.body.requestId);
    // Paused again by its own call after the bulk pause: the undo does not resume it.
    expect(await statusOf(apiKey, touched!)).toBe('paused');
    expect(await statuses(apiKey, untouched)).toEqual(['fulfilled', 'fulfilled']);
  });

  it('refuses a request not completed yet with 409 0033, and 404 0022 for an unknown one', async () => {
    const { merchantId, apiKey } = await idle.merchant();
    const ids = await idle.seed(merchantId, 2);
    const queued = await bulk('pause', apiKey, ids, idle);
    expect(queued.status).toBe(202);
    problem(await undo(apiKey, queued.body.requestId, idle), 409, '0033');
    expect((await onIdle(apiKey, 'GET', `/v2/bulk-requests/${queued.body.requestId}`)).body.state).toBe('queued');
    problem(await undo(apiKey, '3c9d1e2f-4a5b-4c6d-8e7f-9a0b1c2d3e4f', idle), 404, '0022');
  });

  it("answers 404 0022 for another merchant's request, and changes nothing of it", async () => {
    const owner = await t.merchant();
    const other = await t.merchant();
    const original = await completedBulk(owner.apiKey, owner.merchantId, 'pause', 1);
    problem(await undo(other.apiKey, original.requestId), 404, '0022');
    expect(await statuses(owner.apiKey, original.changed)).toEqual(['paused']);
    expect((await undo(owner.apiKey, original.requestId)).status).toBe(202);
  });

  it('refuses a second undo with 409 0034 naming the first', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const original = await completedBulk(apiKey, merchantId, 'pause', 1);
    const first = await undo(apiKey, original.requestId);
    expect(first.status).toBe(202);
    const second = await undo(apiKey, original.requestId);
    problem(second, 409, '0034');
    expect(second.body.detail).toContain(first.body.requestId);
    await completed(apiKey, first.body.requestId);
    problem(await undo(apiKey, original.requestId), 409, '0034');
  });

  it('of many undos at once, exactly one is accepted and the others answer 409 0034, round after round', async () => {
    const { merchantId, apiKey } = await t.merchant();
    for (let round = 0; round < 4; round++) {
      const original = await completedBulk(apiKey, merchantId, 'pause', 2);
      const answers = await Promise.all(Array.from({ length: 12 }, () => undo(apiKey, original.requestId)));
      const accepted = answers.filter((a) => a.status === 202);
      expect(accepted).toHaveLength(1);
      for (const a of answers.filter((x) => x.status !== 202)) problem(a, 409, '0034');
      const listed = (await api(apiKey, 'GET', '/v2/bulk-requests?limit=100')).body.data.filter(
        (r: { undoes?: string }) => r.undoes === original.requestId,
      );
      expect(listed.map((r: { requestId: string }) => r.requestId)).toEqual([accepted[0]!.body.requestId]);
      await completed(apiKey, accepted[0]!.body.requestId);
      expect(await statuses(apiKey, original.changed)).toEqual(['fulfilled', 'fulfilled']);
    }
  });

  it('works in test mode on test data, with livemode false, its test clock ahead of the real time', async () => {
    const { testApiKey } = await t.merchant();
    const made = await api(testApiKey, 'POST', '/v2/test-helpers/subscriptions', { count: 2 });
    const ids = made.body.data.map((s: { id: string }) => s.id);
    // A test clock ahead of the real time: the changes' modifiedAt is its time, which the undo compares with.
    const { now } = (await api(testApiKey, 'GET', '/v2/test-helpers/clock')).body;
    const ahead = new Date(Date.parse(now) + 24 * 60 * 60 * 1000).toISOString();
    expect((await api(testApiKey, 'POST', '/v2/test-helpers/clock/advance', { to: ahead })).status).toBe(200);
    const original = await bulk('pause', testApiKey, ids);
    await completed(testApiKey, original.body.requestId);
    const res = await undo(testApiKey, original.body.requestId);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ operation: 'RESUME', acceptedCount: 2, rejected: [], livemode: false });
    expect((await completed(testApiKey, res.body.requestId)).body).toMatchObject({ undoes: original.body.requestId, livemode: false });
    expect(await statuses(testApiKey, ids)).toEqual(['fulfilled', 'fulfilled']);
  });
});
