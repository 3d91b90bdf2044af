/**
 * A customer's own pause under a store-wide hold (docs/api.md "Holds"), through HTTP on the real
 * database in test mode with its clock: a pause the customer scheduled before the hold falls due
 * under it as their own and outlasts the release (which sends that customer no notice); the hold's
 * pause and release count toward no pause policy; a clock advance past the hold's resumeAt
 * resumes its subscriptions at that time and counts them. Each test has its own merchant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 2, bulkPollIntervalMs: 50 });
});
afterAll(() => t?.close());

const DAY = 24 * 3600_000;
const OFF = { maxPauseDays: null, maxPausesPerYear: null, requireResumeAt: false };
const iso = (ms: number) => new Date(ms).toISOString();
const stamp = (ms: number) => iso(ms).replace('Z', '000Z');
const { api, completed } = httpOf(() => t);
const read = async (key: string, id: string) => (await api(key, 'GET', `/v2/subscriptions/${id}`)).body;

interface Event {
  readonly type: string;
  readonly createdAt: string;
  readonly data: { subscription: { id: string; status: string; modifiedAt: string }; cause: { kind: string; holdId?: string } };
}
/** The events of the caller's mode, oldest first (`query`: more filters). */
async function events(key: string, query = ''): Promise<Event[]> {
  const page = await api(key, 'GET', `/v2/events?limit=100${query}`);
  expect(page.status).toBe(200);
  return [...page.body.data].reverse();
}

/** A test mode under `policy`, its clock's time, and how to make subscriptions, move the clock and place a hold. */
async function testMode(policy: Record<string, unknown> = {}) {
  const { testApiKey: key } = await t.merchant();
  expect((await api(key, 'PUT', '/v2/pause-policy', { ...OFF, ...policy })).status).toBe(200);
  const now = Date.parse((await api(key, 'GET', '/v2/test-helpers/clock')).body.now);
  const seed = async (count: number) => {
    const made = await api(key, 'POST', '/v2/test-helpers/subscriptions', { count, status: 'fulfilled' });
    expect(made.status).toBe(201);
    return made.body.data.map((s: { id: string }) => s.id) as string[];
  };
  const advance = async (to: number) => {
    const res = await api(key, 'POST', '/v2/test-helpers/clock/advance', { to: iso(to) });
    expect(res.status).toBe(200);
    return res.body as { appliedCount: number };
  };
  const hold = async (resumeAt: number) => {
    const res = await api(key, 'POST', '/v2/holds', { resumeAt: iso(resumeAt) });
    expect(res.status).toBe(202);
    await completed(key, res.body.requestId);
    return res.body as { id: string };
  };
  /** The hold, released, once its release request is completed. */
  const releasedHold = async (holdId: string) => {
    const after = (await api(key, 'GET', `/v2/holds/${holdId}`)).body;
    expect(after.status).toBe('released');
    return { ...after, request: (await completed(key, after.releaseRequestId)).body };
  };
  return { key, now, seed, advance, hold, releasedHold };
}

describe("a customer's scheduled pause under a hold", () => {
  it('falls due as their own pause, its own resumeAt still applies, and the release neither resumes nor notices them', async () => {
    const m = await testMode({ resumeNoticeHours: 24 });
    const [plain, noEnd, withEnd] = await m.seed(3);
    expect((await api(m.key, 'POST', `/v2/subscriptions/${noEnd}/pause`, { pauseAt: iso(m.now + DAY) })).status).toBe(200);
    const ownEnd = m.now + 10 * DAY;
    const scheduled = { pauseAt: iso(m.now + DAY), resumeAt: iso(ownEnd) };
    expect((await api(m.key, 'POST', `/v2/subscriptions/${withEnd}/pause`, scheduled)).status).toBe(200);

    const hold = await m.hold(m.now + 3 * DAY);
    // The hold keeps their schedules: nothing of theirs is removed.
    expect((await read(m.key, noEnd!)).schedule).toEqual({ pauseAt: stamp(m.now + DAY), resumeAt: null });
    expect((await read(m.key, withEnd!)).schedule).toEqual({ pauseAt: stamp(m.now + DAY), resumeAt: stamp(ownEnd) });
    expect((await events(m.key, '&type=subscription.schedule_removed')).map((e) => e.data.subscription.id)).toEqual([]);

    await m.advance(m.now + 4 * DAY);
    const released = await m.releasedHold(hold.id);
    expect(released.releasedAt).toBe(stamp(m.now + 3 * DAY));
    expect(await read(m.key, plain!)).toMatchObject({ status: 'fulfilled' });
    expect(await read(m.key, noEnd!)).toMatchObject({ status: 'paused', modifiedAt: stamp(m.now + DAY) });
    expect((await read(m.key, noEnd!)).schedule).toBeUndefined();
    expect(await read(m.key, withEnd!)).toMatchObject({ status: 'paused', schedule: { pauseAt: null, resumeAt: stamp(ownEnd) } });
    expect((await read(m.key, withEnd!)).holdIds).toBeUndefined();
    // The hold's notice went only to the subscription its release resumed.
    const holdNotices = (await events(m.key, '&type=subscription.resume_upcoming')).filter((e) => e.data.cause.kind === 'hold');
    expect(holdNotices.map((e) => e.data.subscription.id)).toEqual([plain]);

    await m.advance(ownEnd + DAY);
    expect(await read(m.key, withEnd!)).toMatchObject({ status: 'fulfilled', modifiedAt: stamp(ownEnd) });
    expect(await read(m.key, noEnd!)).toMatchObject({ status: 'paused' });
  });
});

describe('an explicit resume of a held subscription whose own pause is still to come', () => {
  it('resumes it and drops its pending pause with its end, in one schedule_removed event: never a pause without its end', async () => {
    const m = await testMode();
    const [id] = await m.seed(1);
    const scheduled = { pauseAt: iso(m.now + 2 * DAY), resumeAt: iso(m.now + 5 * DAY) };
    expect((await api(m.key, 'POST', `/v2/subscriptions/${id}/pause`, scheduled)).status).toBe(200);
    await m.hold(m.now + 10 * DAY);

    const resumed = await api(m.key, 'POST', `/v2/subscriptions/${id}/resume`);
    expect(resumed.status).toBe(200);
    expect((await read(m.key, id!)).schedule).toBeUndefined();
    const removed = await waitFor(
      () => events(m.key, '&type=subscription.schedule_removed'),
      (found) => found.length > 0,
      15_000,
    );
    expect(removed.map((e) => [e.data.subscription.id, (e.data as { removed?: string[] }).removed])).toEqual([
      [id, ['pauseAt', 'resumeAt']],
    ]);
    await m.advance(m.now + 3 * DAY);
    expect(await read(m.key, id!)).toMatchObject({ status: 'fulfilled' });
  });
});

describe("a hold under a pause policy's maxPausesPerYear and cooldownDays", () => {
  it("counts toward neither: after its release every customer's own pause passes, single, bulk and previewed", async () => {
    const m = await testMode({ maxPausesPerYear: 1, cooldownDays: 30 });
    const [single, bulk, own] = await m.seed(3);
    const hold = await m.hold(m.now + 5 * DAY);
    await m.advance(m.now + 6 * DAY);
    await m.releasedHold(hold.id);

    const preview = await api(m.key, 'POST', '/v2/subscriptions/bulk/pause/preview', { filter: { status: ['fulfilled'] } });
    expect(preview.body).toMatchObject({ matchedCount: 3, policyRejectedCount: 0 });
    expect((await api(m.key, 'POST', `/v2/subscriptions/${single}/pause`)).status).toBe(200);
    const accepted = await api(m.key, 'POST', '/v2/subscriptions/bulk/pause', { subscriptions: [bulk] });
    expect(accepted.body).toMatchObject({ acceptedCount: 1 });
    expect(accepted.body.rejected ?? []).toEqual([]);

    // Its own pause and resume do count: the end of its own pause starts the cooldown.
    expect((await api(m.key, 'POST', `/v2/subscriptions/${own}/pause`)).status).toBe(200);
    expect((await api(m.key, 'POST', `/v2/subscriptions/${own}/resume`)).status).toBe(200);
    const again = await api(m.key, 'POST', `/v2/subscriptions/${own}/pause`);
    expect(again.status).toBe(422);
    expect(again.body.code).toBe('0032');
    expect(again.body.detail).toContain(`last resumed at ${stamp(m.now + 6 * DAY)}`);
  });
});

describe('an explicit resume of a subscription paused by a hold alone', () => {
  it('ends no pause of its own, so it starts no cooldown: a pause right after is accepted', async () => {
    const m = await testMode({ cooldownDays: 30 });
    const [id] = await m.seed(1);
    await m.hold(m.now + 10 * DAY);
    expect(await read(m.key, id!)).toMatchObject({ status: 'paused' });

    const resumed = await api(m.key, 'POST', `/v2/subscriptions/${id}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ status: 'fulfilled' });
    expect(resumed.body.holdIds).toBeUndefined();
    const paused = await api(m.key, 'POST', `/v2/subscriptions/${id}/pause`);
    expect(paused.status).toBe(200);
    // Its own pause, resumed explicitly, starts the cooldown as ever.
    expect((await api(m.key, 'POST', `/v2/subscriptions/${id}/resume`)).status).toBe(200);
    const again = await api(m.key, 'POST', `/v2/subscriptions/${id}/pause`);
    expect(again.status).toBe(422);
    expect(again.body.code).toBe('0032');
  });
});

describe('a hold released by a test clock advance', () => {
  it('resumes its subscriptions at its resumeAt, with their events then, counted in the advance', async () => {
    const m = await testMode();
    const ids = await m.seed(2);
    const hold = await m.hold(m.now + 2 * DAY);
    const at = stamp(m.now + 2 * DAY);

    const advanced = await m.advance(m.now + 4 * DAY);
    expect(advanced.appliedCount).toBe(2);
    // Resumed before the advance answers, at the hold's resumeAt.
    for (const id of ids) expect(await read(m.key, id)).toMatchObject({ status: 'fulfilled', modifiedAt: at });
    const resumed = await events(m.key, '&type=subscription.resumed');
    expect(resumed.map((e) => [e.data.subscription.id, e.createdAt, e.data.subscription.modifiedAt, e.data.cause.holdId]).sort()).toEqual(
      ids.map((id) => [id, at, at, hold.id]).sort(),
    );
    const released = await m.releasedHold(hold.id);
    expect(released).toMatchObject({ releasedAt: at, request: { counts: { applied: 2, pending: 0 } } });
  });
});
