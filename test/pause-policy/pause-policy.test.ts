/**
 * Pause policies (issue 27 item 1, docs/design.md §11): GET and PUT /v2/pause-policy, and each rule
 * (maxPauseDays, maxPausesPerYear, requireResumeAt) on single, bulk (by ids and by filter, dry run
 * included) and scheduled pauses, with the real database. Past pauses are seeded into the
 * subscription documents with the driver; each test has its own merchant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 1, schedulePollMs: 200 });
});
afterAll(() => t.close());

const DAY = 24 * 3600_000;
const OFF = { maxPauseDays: null, maxPausesPerYear: null, requireResumeAt: false };
/** A policy as GET and PUT answer it to a live key: every rule (those left out of a PUT are null) and `livemode`. */
const shown = (policy: Record<string, unknown>) => ({
  cooldownDays: null,
  allowedPauseDays: null,
  resumeNoticeHours: null,
  ...policy,
  livemode: true,
});
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();
const daysAgo = (days: number) => new Date(Date.now() - days * DAY).toISOString().replace('Z', '000Z');

async function merchantWith(policy?: Record<string, unknown>) {
  const { merchantId, apiKey } = await t.merchant();
  if (policy) expect((await call(t.baseUrl, '/v2/pause-policy', { apiKey, method: 'PUT', json: { ...OFF, ...policy } })).status).toBe(200);
  return { merchantId, apiKey };
}
const stored = (id: string) => t.db.collection('subscriptions').findOne({ _id: id as never }, { projection: { outbox: 0 } });
/** Pauses applied to a subscription at these times, as the service records them. */
const pausedBefore = (id: string, times: string[]) =>
  t.db.collection('subscriptions').updateOne({ _id: id as never }, { $set: { recentPauses: times } });
const pause = (apiKey: string, id: string, json?: unknown) => call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey, json });
const bulkPause = (apiKey: string, json: unknown) => call(t.baseUrl, '/v2/subscriptions/bulk/pause', { apiKey, json });
const read = (apiKey: string, id: string) => call(t.baseUrl, `/v2/subscriptions/${id}`, { apiKey, method: 'GET' });
const { completed } = httpOf(() => t);
const reasons = (rejected: { subscriptionId: string; reason: string }[]) =>
  Object.fromEntries(rejected.map((r) => [r.subscriptionId, r.reason]));
/** How far `at` is from now plus `days`, in ms. */
const offFromNowPlus = (at: string, days: number) => Math.abs(Date.parse(at) - (Date.now() + days * DAY));

describe('GET and PUT /v2/pause-policy', () => {
  it('a merchant that never set one has every rule off; PUT replaces it and GET shows it', async () => {
    const { apiKey } = await merchantWith();
    expect((await call(t.baseUrl, '/v2/pause-policy', { apiKey, method: 'GET' })).body).toEqual(shown(OFF));
    const policy = { maxPauseDays: 90, maxPausesPerYear: 2, requireResumeAt: true };
    const put = await call(t.baseUrl, '/v2/pause-policy', { apiKey, method: 'PUT', json: policy });
    expect(put).toMatchObject({ status: 200 });
    expect(put.body).toEqual(shown(policy));
    expect((await call(t.baseUrl, '/v2/pause-policy', { apiKey, method: 'GET' })).body).toEqual(shown(policy));
  });

  it.each([
    ['an unknown field', { ...OFF, maxResumes: 3 }, '/maxResumes'],
    ['a field missing', { maxPauseDays: 90, requireResumeAt: false }, '/maxPausesPerYear'],
    ['maxPauseDays 0', { ...OFF, maxPauseDays: 0 }, '/maxPauseDays'],
    ['maxPauseDays over 1095', { ...OFF, maxPauseDays: 1096 }, '/maxPauseDays'],
    ['maxPausesPerYear over 100', { ...OFF, maxPausesPerYear: 101 }, '/maxPausesPerYear'],
    ['a string for requireResumeAt', { ...OFF, requireResumeAt: 'yes' }, '/requireResumeAt'],
  ])('%s answers 400 0040 and leaves the policy as it was', async (_name, body, path) => {
    const { apiKey } = await merchantWith({ maxPauseDays: 30 });
    const res = await call(t.baseUrl, '/v2/pause-policy', { apiKey, method: 'PUT', json: body });
    expect(res).toMatchObject({ status: 400, body: { code: '0040' } });
    expect(JSON.stringify(res.body.errors)).toContain(path.slice(1));
    expect((await call(t.baseUrl, '/v2/pause-policy', { apiKey, method: 'GET' })).body).toEqual(shown({ ...OFF, maxPauseDays: 30 }));
  });

  it("another merchant's policy never applies: its requireResumeAt does not refuse our pause", async () => {
    await merchantWith({ requireResumeAt: true, maxPausesPerYear: 0 });
    const { merchantId, apiKey } = await merchantWith();
    const [id] = await t.seed(merchantId, 1);
    expect((await pause(apiKey, id!)).body).toMatchObject({ status: 'paused' });
    expect((await call(t.baseUrl, '/v2/pause-policy', { apiKey, method: 'GET' })).body).toEqual(shown(OFF));
  });
});

describe('single pause', () => {
  it('the default policy changes nothing: a pause answers as before, without schedule', async () => {
    const { merchantId, apiKey } = await merchantWith({});
    const [id] = await t.seed(merchantId, 1);
    const res = await pause(apiKey, id!);
    expect(Object.keys(res.body).sort()).toEqual(['createdAt', 'cycle', 'id', 'livemode', 'merchantId', 'modifiedAt', 'planId', 'status']);
    expect(res.body.status).toBe('paused');
  });

  it('maxPauseDays: a resumeAt further than the limit answers 422 0032 naming the rule, and changes nothing', async () => {
    const { merchantId, apiKey } = await merchantWith({ maxPauseDays: 90 });
    const [id] = await t.seed(merchantId, 1);
    const before = await stored(id!);
    const res = await pause(apiKey, id!, { resumeAt: inMs(100 * DAY) });
    expect(res).toMatchObject({ status: 422, body: { code: '0032', title: 'Pause policy violated' } });
    expect(res.body.detail).toMatch(/^maxPauseDays is 90; this pause would last 100 days/);
    expect(await stored(id!)).toEqual(before);
    // From pauseAt, not from now: 80 days after a pause in 20 days is within 90.
    expect((await pause(apiKey, id!, { pauseAt: inMs(20 * DAY), resumeAt: inMs(100 * DAY) })).status).toBe(200);
  });

  it('maxPauseDays fills in resumeAt: the answer shows it, and a resume_scheduled event records it', async () => {
    const { merchantId, apiKey } = await merchantWith({ maxPauseDays: 30, requireResumeAt: true });
    const [id, later] = await t.seed(merchantId, 2);
    const res = await pause(apiKey, id!);
    expect(res.body).toMatchObject({ status: 'paused', schedule: { pauseAt: null } });
    expect(offFromNowPlus(res.body.schedule.resumeAt, 30)).toBeLessThan(60_000);
    const scheduled = await pause(apiKey, later!, { pauseAt: inMs(10 * DAY) });
    expect(Date.parse(scheduled.body.schedule.resumeAt) - Date.parse(scheduled.body.schedule.pauseAt)).toBe(30 * DAY);
    const events = await waitFor(
      async () =>
        ((await call(t.baseUrl, '/v2/events?limit=100', { apiKey, method: 'GET' })).body.data as any[]).filter(
          (e) => e.data.subscription?.id === id,
        ),
      (e) => e.length >= 2,
      30_000,
    );
    expect(events.map((e) => e.type).sort()).toEqual(['subscription.paused', 'subscription.resume_scheduled']);
    expect(events.find((e) => e.type === 'subscription.resume_scheduled').data.schedule.resumeAt).toBe(res.body.schedule.resumeAt);
  });

  it('maxPauseDays leaves a paused subscription paused again without schedule fields as it is', async () => {
    const { merchantId, apiKey } = await merchantWith({ maxPauseDays: 30 });
    const [id] = await t.seed(merchantId, 1, 'paused');
    const before = await stored(id!);
    const res = await pause(apiKey, id!);
    expect(res.body).toMatchObject({ status: 'paused' });
    expect(res.body.schedule).toBeUndefined();
    expect(await stored(id!)).toEqual(before);
  });

  it('requireResumeAt: a pause without resumeAt answers 422 0032; with one, 200', async () => {
    const { merchantId, apiKey } = await merchantWith({ requireResumeAt: true });
    const [id] = await t.seed(merchantId, 1);
    const res = await pause(apiKey, id!, { reason: 'no end' });
    expect(res).toMatchObject({ status: 422, body: { code: '0032', detail: 'requireResumeAt is true; this pause has no resumeAt.' } });
    expect((await stored(id!))!.status).toBe('fulfilled');
    expect((await pause(apiKey, id!, { resumeAt: inMs(DAY) })).body).toMatchObject({ status: 'paused' });
  });

  it('maxPausesPerYear counts the pauses applied in the 365 days before: 364 days back counts, 366 does not', async () => {
    const { merchantId, apiKey } = await merchantWith({ maxPausesPerYear: 2 });
    const [recent, old] = await t.seed(merchantId, 2);
    await pausedBefore(recent!, [daysAgo(366), daysAgo(364), daysAgo(100)]);
    await pausedBefore(old!, [daysAgo(366), daysAgo(500), daysAgo(100)]);
    const refused = await pause(apiKey, recent!);
    expect(refused).toMatchObject({ status: 422, body: { code: '0032' } });
    expect(refused.body.detail).toBe(`maxPausesPerYear is 2; subscription ${recent} was paused 2 times in the 365 days before.`);
    expect((await pause(apiKey, old!)).body).toMatchObject({ status: 'paused' });
  });

  it('maxPausesPerYear counts the pauses the service itself applied: pause, resume, pause again is refused at 1', async () => {
    const { merchantId, apiKey } = await merchantWith({ maxPausesPerYear: 1 });
    const [id] = await t.seed(merchantId, 1);
    expect((await pause(apiKey, id!)).status).toBe(200);
    expect((await call(t.baseUrl, `/v2/subscriptions/${id}/resume`, { apiKey })).status).toBe(200);
    expect((await pause(apiKey, id!)).body).toMatchObject({ status: 422, code: '0032' });
    expect((await stored(id!))!.recentPauses).toHaveLength(1);
  });

  it('a cancelled subscription still answers 409 0030 under a policy, and an unknown one 404', async () => {
    const { merchantId, apiKey } = await merchantWith({ requireResumeAt: true });
    const [id] = await t.seed(merchantId, 1, 'cancelled');
    expect((await pause(apiKey, id!)).body).toMatchObject({ status: 409, code: '0030' });
    expect((await pause(apiKey, '6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60')).body).toMatchObject({ status: 404, code: '0020' });
  });
});

describe('bulk pause', () => {
  it('by ids: each id that breaks a rule is rejected at acceptance with the rule; the others are paused', async () => {
    const { merchantId, apiKey } = await merchantWith({ maxPausesPerYear: 1 });
    const [counted, uncounted, fresh] = await t.seed(merchantId, 3);
    const [cancelled] = await t.seed(merchantId, 1, 'cancelled');
    await pausedBefore(counted!, [daysAgo(364)]);
    await pausedBefore(uncounted!, [daysAgo(366)]);
    const res = await bulkPause(apiKey, { subscriptions: [counted, uncounted, fresh, cancelled] });
    expect(res.status).toBe(202);
    expect(res.body.acceptedCount).toBe(2);
    expect(reasons(res.body.rejected)).toEqual({ [counted!]: 'policy_max_pauses_per_year', [cancelled!]: 'cancelled' });
    await completed(apiKey, res.headers.get('location')!);
    expect((await stored(counted!))!.status).toBe('fulfilled');
    expect((await stored(uncounted!))!.status).toBe('paused');
    expect((await stored(fresh!))!.recentPauses).toHaveLength(1);
  });

  it('by ids: requireResumeAt and maxPauseDays reject every id a pause of theirs would break', async () => {
    const { merchantId, apiKey } = await merchantWith({ requireResumeAt: true });
    const ids = await t.seed(merchantId, 2);
    const res = await bulkPause(apiKey, { subscriptions: ids });
    expect(res.body).toMatchObject({ acceptedCount: 0 });
    expect(Object.values(reasons(res.body.rejected))).toEqual(['policy_require_resume_at', 'policy_require_resume_at']);
    await call(t.baseUrl, '/v2/pause-policy', { apiKey, method: 'PUT', json: { ...OFF, maxPauseDays: 7 } });
    const tooLong = await bulkPause(apiKey, { subscriptions: ids, resumeAt: inMs(8 * DAY) });
    expect(Object.values(reasons(tooLong.body.rejected))).toEqual(['policy_max_pause_days', 'policy_max_pause_days']);
  });

  it('maxPauseDays fills in resumeAt for the ids a bulk pause pauses, and leaves those already paused as they were', async () => {
    const { merchantId, apiKey } = await merchantWith({ maxPauseDays: 14 });
    const [active] = await t.seed(merchantId, 1);
    const [paused] = await t.seed(merchantId, 1, 'paused');
    const res = await bulkPause(apiKey, { subscriptions: [active, paused] });
    expect(res.body).toMatchObject({ acceptedCount: 2, rejected: [] });
    const done = await completed(apiKey, res.headers.get('location')!);
    expect(done.body.counts).toMatchObject({ applied: 1, noop: 1 });
    const now = (await read(apiKey, active!)).body;
    expect(now).toMatchObject({ status: 'paused', schedule: { pauseAt: null } });
    expect(offFromNowPlus(now.schedule.resumeAt, 14)).toBeLessThan(60_000);
    expect((await read(apiKey, paused!)).body.schedule).toBeUndefined();
  });

  it('by filter: the dry run counts the ids the policy would reject, and the real run rejects exactly those', async () => {
    const { merchantId, apiKey } = await merchantWith({ maxPausesPerYear: 1 });
    const ids = await t.seed(merchantId, 4);
    await t.seed(merchantId, 1, 'cancelled');
    await pausedBefore(ids[0]!, [daysAgo(10)]);
    await pausedBefore(ids[1]!, [daysAgo(200)]);
    const filter = { status: ['fulfilled', 'cancelled'] };
    const dry = await bulkPause(apiKey, { filter, dryRun: true });
    expect(dry.body).toMatchObject({ matchedCount: 5, cancelledCount: 1, policyRejectedCount: 2 });
    expect([...dry.body.sample].sort()).toEqual([ids[2], ids[3]].sort());
    const real = await bulkPause(apiKey, { filter });
    expect(real.body.acceptedCount).toBe(dry.body.matchedCount - dry.body.cancelledCount - dry.body.policyRejectedCount);
    expect(Object.entries(reasons(real.body.rejected)).filter(([, r]) => r.startsWith('policy_'))).toEqual(
      [ids[0], ids[1]].sort().map((id) => [id, 'policy_max_pauses_per_year']),
    );
  });

  it('a bulk resume is held to no pause policy', async () => {
    const { merchantId, apiKey } = await merchantWith({ maxPausesPerYear: 0, requireResumeAt: true });
    const ids = await t.seed(merchantId, 2, 'paused');
    const res = await call(t.baseUrl, '/v2/subscriptions/bulk/resume', { apiKey, json: { subscriptions: ids } });
    expect(res.body).toMatchObject({ acceptedCount: 2, rejected: [] });
  });
});

describe('scheduled pause', () => {
  const skips = (id: string) => t.logLines.filter((l) => l.subscriptionId === id && String(l.msg).startsWith('scheduled '));

  it('a policy tightened after a pause was scheduled: when due, the pause is skipped with the rule, its schedule removed', async () => {
    const { merchantId, apiKey } = await merchantWith();
    const [longer, counted] = await t.seed(merchantId, 2);
    const scheduled = await pause(apiKey, longer!, { pauseAt: inMs(1500), resumeAt: inMs(60 * DAY) });
    expect(scheduled.body).toMatchObject({ status: 'fulfilled', schedule: { pauseAt: expect.any(String) } });
    await pause(apiKey, counted!, { pauseAt: inMs(1500), resumeAt: inMs(DAY) });
    await pausedBefore(counted!, [daysAgo(30)]);
    await call(t.baseUrl, '/v2/pause-policy', {
      apiKey,
      method: 'PUT',
      json: { maxPauseDays: 30, maxPausesPerYear: 1, requireResumeAt: false },
    });
    for (const id of [longer!, counted!]) {
      const gone = await waitFor(
        () => stored(id),
        (doc) => doc?.pauseAt === undefined,
        30_000,
      );
      expect(gone).toMatchObject({ status: 'fulfilled' });
      expect(gone!.resumeAt).toBeUndefined();
    }
    expect(skips(longer!)).toMatchObject([{ msg: 'scheduled pause skipped: maxPauseDays', outcome: 'skipped', reason: 'maxPauseDays' }]);
    expect(skips(counted!)).toMatchObject([
      { msg: 'scheduled pause skipped: maxPausesPerYear', outcome: 'skipped', reason: 'maxPausesPerYear' },
    ]);
    const removed = await waitFor(
      async () =>
        ((await call(t.baseUrl, '/v2/events?limit=100', { apiKey, method: 'GET' })).body.data as any[]).filter(
          (e) => e.data.subscription?.id === longer && e.type === 'subscription.schedule_removed',
        ),
      (e) => e.length >= 1,
      30_000,
    );
    expect(removed[0].data).toMatchObject({
      removed: ['pauseAt', 'resumeAt'],
      cause: { kind: 'schedule' },
      subscription: { status: 'fulfilled' },
    });
  });

  it('a scheduled pause without resumeAt falls due after maxPauseDays was set: paused, with resumeAt that many days on', async () => {
    const { merchantId, apiKey } = await merchantWith();
    const [id] = await t.seed(merchantId, 1);
    await pause(apiKey, id!, { pauseAt: inMs(1500) });
    await call(t.baseUrl, '/v2/pause-policy', { apiKey, method: 'PUT', json: { ...OFF, maxPauseDays: 5 } });
    const paused = await waitFor(
      () => read(apiKey, id!),
      (r) => r.body.status === 'paused',
      30_000,
    );
    expect(offFromNowPlus(paused.body.schedule.resumeAt, 5)).toBeLessThan(60_000);
    // The worker logs the outcome after the update it made, which the read above may see first.
    expect(
      await waitFor(
        async () => skips(id!),
        (lines) => lines.length > 0,
        10_000,
      ),
    ).toMatchObject([{ msg: 'scheduled pause applied' }]);
    expect((await stored(id!))!.recentPauses).toHaveLength(1);
  });

  it('a scheduled pause within the policy is applied and counted', async () => {
    const { merchantId, apiKey } = await merchantWith({ maxPausesPerYear: 1, requireResumeAt: true });
    const [id] = await t.seed(merchantId, 1);
    await pause(apiKey, id!, { pauseAt: inMs(1500), resumeAt: inMs(DAY) });
    await waitFor(
      () => read(apiKey, id!),
      (r) => r.body.status === 'paused',
      30_000,
    );
    expect((await stored(id!))!.recentPauses).toHaveLength(1);
  });
});
