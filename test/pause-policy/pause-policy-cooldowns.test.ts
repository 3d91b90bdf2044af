/**
 * The pause policy's cooldownDays and allowedPauseDays (issue 46 §5, docs/design.md §11) through
 * HTTP on the real database: PUT and GET, single, bulk by ids and by filter (with the preview),
 * scheduled pauses when set and when due, the last resume recorded by every kind of resume, and
 * test mode, where the cooldown counts the test clock's time. Each test has its own merchant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 1, schedulePollMs: 200 });
});
afterAll(() => t.close());

const DAY = 24 * 3600_000;
/** The three rules a client written before these two sends. */
const OFF = { maxPauseDays: null, maxPausesPerYear: null, requireResumeAt: false };
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();
const daysAgo = (days: number) => new Date(Date.now() - days * DAY).toISOString().replace('Z', '000Z');

const { api, completed } = httpOf(() => t);
const putPolicy = (apiKey: string, policy: Record<string, unknown>) => api(apiKey, 'PUT', '/v2/pause-policy', { ...OFF, ...policy });
async function merchantWith(policy: Record<string, unknown>) {
  const merchant = await t.merchant();
  expect((await putPolicy(merchant.apiKey, policy)).status).toBe(200);
  return merchant;
}
const stored = (id: string) => t.db.collection('subscriptions').findOne({ _id: id as never }, { projection: { outbox: 0 } });
/** The subscription was last resumed at `at`, as the service records it. */
const resumedAt = (id: string, at: string) =>
  t.db.collection('subscriptions').updateOne({ _id: id as never }, { $set: { lastResumedAt: at } });
const pause = (apiKey: string, id: string, json?: unknown) => api(apiKey, 'POST', `/v2/subscriptions/${id}/pause`, json);
const resume = (apiKey: string, id: string) => api(apiKey, 'POST', `/v2/subscriptions/${id}/resume`);
const reasons = (rejected: { subscriptionId: string; reason: string }[]) =>
  Object.fromEntries(rejected.map((r) => [r.subscriptionId, r.reason]));

describe('PUT and GET /v2/pause-policy', () => {
  it('both rules are kept and shown; a PUT that leaves them out (a client of before) turns them off', async () => {
    const { apiKey } = await t.merchant();
    const policy = { ...OFF, cooldownDays: 30, allowedPauseDays: [7, 14, 30] };
    const put = await api(apiKey, 'PUT', '/v2/pause-policy', policy);
    expect(put).toMatchObject({ status: 200 });
    expect(put.body).toEqual({ ...policy, resumeNoticeHours: null, livemode: true });
    expect((await api(apiKey, 'GET', '/v2/pause-policy')).body).toEqual({ ...policy, resumeNoticeHours: null, livemode: true });
    const old = await api(apiKey, 'PUT', '/v2/pause-policy', { ...OFF, maxPauseDays: 60 });
    expect(old.body).toEqual({
      ...OFF,
      maxPauseDays: 60,
      cooldownDays: null,
      allowedPauseDays: null,
      resumeNoticeHours: null,
      livemode: true,
    });
    expect((await api(apiKey, 'GET', '/v2/pause-policy')).body).toEqual(old.body);
  });

  it.each([
    ['cooldownDays 0', { cooldownDays: 0 }, 'cooldownDays'],
    ['cooldownDays over 365', { cooldownDays: 366 }, 'cooldownDays'],
    ['an empty allowedPauseDays', { allowedPauseDays: [] }, 'allowedPauseDays'],
    ['11 allowed lengths', { allowedPauseDays: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] }, 'allowedPauseDays'],
    ['an allowed length twice', { allowedPauseDays: [7, 7] }, 'allowedPauseDays'],
    ['an allowed length of 0', { allowedPauseDays: [0] }, 'allowedPauseDays'],
    ['an allowed length over 1095', { allowedPauseDays: [1096] }, 'allowedPauseDays'],
  ])('%s answers 400 0040 and leaves the policy as it was', async (_name, body, field) => {
    const { apiKey } = await merchantWith({ cooldownDays: 5 });
    const res = await putPolicy(apiKey, body);
    expect(res).toMatchObject({ status: 400, body: { code: '0040' } });
    expect(JSON.stringify(res.body.errors)).toContain(field);
    expect((await api(apiKey, 'GET', '/v2/pause-policy')).body).toMatchObject({ cooldownDays: 5, allowedPauseDays: null });
  });
});

describe('cooldownDays on a single pause', () => {
  it('pause, resume, pause again within the cooldown: 422 0032 naming cooldownDays and when it ends; nothing changed', async () => {
    const { merchantId, apiKey } = await merchantWith({ cooldownDays: 30 });
    const [id] = await t.seed(merchantId, 1);
    expect((await pause(apiKey, id!)).status).toBe(200);
    expect((await resume(apiKey, id!)).status).toBe(200);
    const { lastResumedAt } = (await stored(id!))!;
    expect(Math.abs(Date.parse(lastResumedAt) - Date.now())).toBeLessThan(60_000);
    const before = await stored(id!);
    const refused = await pause(apiKey, id!);
    expect(refused).toMatchObject({ status: 422, body: { code: '0032', title: 'Pause policy violated' } });
    const until = new Date(Date.parse(lastResumedAt) + 30 * DAY).toISOString().replace('Z', lastResumedAt.slice(-4));
    expect(refused.body.detail).toBe(
      `cooldownDays is 30; subscription ${id} was last resumed at ${lastResumedAt} and can be paused from ${until}.`,
    );
    expect(await stored(id!)).toEqual(before);
    // Scheduled to start after the cooldown ends: accepted when set.
    expect((await pause(apiKey, id!, { pauseAt: inMs(31 * DAY) })).body).toMatchObject({ status: 'fulfilled' });
    expect((await pause(apiKey, id!, { pauseAt: inMs(29 * DAY) })).body).toMatchObject({ status: 422, code: '0032' });
  });

  it('a resume longer ago than the cooldown, or none at all, lets the pause through', async () => {
    const { merchantId, apiKey } = await merchantWith({ cooldownDays: 30 });
    const [old, never] = await t.seed(merchantId, 2);
    await resumedAt(old!, daysAgo(31));
    expect((await pause(apiKey, old!)).body).toMatchObject({ status: 'paused' });
    expect((await pause(apiKey, never!)).body).toMatchObject({ status: 'paused' });
  });
});

describe('allowedPauseDays on a single pause', () => {
  it('a resumeAt of a listed length (rounded up) is accepted; another length, or none, answers 422 0032', async () => {
    const { merchantId, apiKey } = await merchantWith({ allowedPauseDays: [7, 30] });
    const [ok, odd, endless, later] = await t.seed(merchantId, 4);
    expect((await pause(apiKey, ok!, { resumeAt: inMs(30 * DAY) })).body).toMatchObject({ status: 'paused' });
    const refused = await pause(apiKey, odd!, { resumeAt: inMs(20 * DAY) });
    expect(refused).toMatchObject({ status: 422, body: { code: '0032' } });
    expect(refused.body.detail).toMatch(/^allowedPauseDays is \[7, 30\]; this pause would last 20 days/);
    expect((await pause(apiKey, endless!)).body).toMatchObject({
      status: 422,
      detail: 'allowedPauseDays is [7, 30]; this pause has no resumeAt.',
    });
    // Counted from pauseAt: 7 days from a pause in 10 days.
    expect((await pause(apiKey, later!, { pauseAt: inMs(10 * DAY), resumeAt: inMs(17 * DAY) })).body).toMatchObject({
      status: 'fulfilled',
    });
    expect((await stored(odd!))!.status).toBe('fulfilled');
  });
});

describe('bulk pause', () => {
  it('by ids: the ids that break either rule are rejected with its reason; a bulk resume records the last resume', async () => {
    const { merchantId, apiKey } = await merchantWith({ cooldownDays: 10, allowedPauseDays: [7] });
    const [cooling, cool, viaBulk] = await t.seed(merchantId, 3);
    await resumedAt(cooling!, daysAgo(2));
    await resumedAt(cool!, daysAgo(11));
    const [paused] = await t.seed(merchantId, 1, 'paused');
    const resumed = await api(apiKey, 'POST', '/v2/subscriptions/bulk/resume', { subscriptions: [paused] });
    await completed(apiKey, resumed.headers.get('location')!);
    expect(Math.abs(Date.parse((await stored(paused!))!.lastResumedAt) - Date.now())).toBeLessThan(60_000);

    const res = await api(apiKey, 'POST', '/v2/subscriptions/bulk/pause', {
      subscriptions: [cooling, cool, viaBulk, paused],
      resumeAt: inMs(7 * DAY),
    });
    expect(res.status).toBe(202);
    expect(reasons(res.body.rejected)).toEqual({ [cooling!]: 'policy_cooldown_days', [paused!]: 'policy_cooldown_days' });
    expect(res.body.acceptedCount).toBe(2);
    await completed(apiKey, res.headers.get('location')!);
    expect((await stored(cool!))!.status).toBe('paused');
    expect((await stored(cooling!))!.status).toBe('fulfilled');

    const wrongLength = await api(apiKey, 'POST', '/v2/subscriptions/bulk/pause', { subscriptions: [cooling], resumeAt: inMs(8 * DAY) });
    expect(reasons(wrongLength.body.rejected)).toEqual({ [cooling!]: 'policy_allowed_pause_days' });
  });

  it('by filter: the preview counts both rules in policyRejectedCount, and the real run rejects exactly those', async () => {
    const { merchantId, apiKey } = await merchantWith({ cooldownDays: 10, allowedPauseDays: [14] });
    const planless = await t.seed(merchantId, 3);
    await resumedAt(planless[0]!, daysAgo(1));
    await resumedAt(planless[1]!, daysAgo(20));
    const body = { filter: { status: ['fulfilled'] }, resumeAt: inMs(14 * DAY) };
    const preview = await api(apiKey, 'POST', '/v2/subscriptions/bulk/pause/preview', body);
    expect(preview.body).toMatchObject({ matchedCount: 3, cancelledCount: 0, policyRejectedCount: 1 });
    expect([...preview.body.sample].sort()).toEqual([planless[1], planless[2]].sort());
    const real = await api(apiKey, 'POST', '/v2/subscriptions/bulk/pause', body);
    expect(reasons(real.body.rejected)).toEqual({ [planless[0]!]: 'policy_cooldown_days' });

    const wrong = { filter: { status: ['fulfilled'] }, resumeAt: inMs(15 * DAY) };
    // Whichever are still fulfilled while the real run drains: a 15-day pause is refused for each.
    const all = await api(apiKey, 'POST', '/v2/subscriptions/bulk/pause/preview', wrong);
    expect(all.body.matchedCount).toBeGreaterThan(0);
    expect(all.body).toMatchObject({ policyRejectedCount: all.body.matchedCount, sample: [] });
  });
});

describe('scheduled pauses and resumes', () => {
  const skips = (id: string) => t.logLines.filter((l) => l.subscriptionId === id && String(l.msg).startsWith('scheduled '));

  it('a scheduled resume records the last resume: a pause right after it is refused by the cooldown', async () => {
    const { merchantId, apiKey } = await merchantWith({ cooldownDays: 3 });
    const [id] = await t.seed(merchantId, 1);
    expect((await pause(apiKey, id!, { resumeAt: inMs(1500) })).body).toMatchObject({ status: 'paused' });
    const resumed = await waitFor(
      () => stored(id!),
      (doc) => doc?.status === 'fulfilled',
      30_000,
    );
    expect(Math.abs(Date.parse(resumed!.lastResumedAt) - Date.now())).toBeLessThan(60_000);
    expect((await pause(apiKey, id!)).body).toMatchObject({ status: 422, code: '0032' });
  });

  it('a cooldown set after a pause was scheduled: when due inside it, the pause is skipped and its schedule removed', async () => {
    const { merchantId, apiKey } = await merchantWith({});
    const [cooling, odd] = await t.seed(merchantId, 2);
    await resumedAt(cooling!, daysAgo(1));
    await pause(apiKey, cooling!, { pauseAt: inMs(1500), resumeAt: inMs(7 * DAY) });
    await pause(apiKey, odd!, { pauseAt: inMs(1500), resumeAt: inMs(9 * DAY) });
    expect((await putPolicy(apiKey, { cooldownDays: 5, allowedPauseDays: [7] })).status).toBe(200);
    for (const id of [cooling!, odd!]) {
      const gone = await waitFor(
        () => stored(id),
        (doc) => doc?.pauseAt === undefined,
        30_000,
      );
      expect(gone).toMatchObject({ status: 'fulfilled' });
      expect(gone!.resumeAt).toBeUndefined();
    }
    const lines = (id: string) =>
      waitFor(
        async () => skips(id),
        (l) => l.length > 0,
        10_000,
      );
    expect(await lines(cooling!)).toMatchObject([{ msg: 'scheduled pause skipped: cooldownDays', outcome: 'skipped' }]);
    expect(await lines(odd!)).toMatchObject([{ msg: 'scheduled pause skipped: allowedPauseDays', outcome: 'skipped' }]);
  });
});

describe('in test mode', () => {
  it('the cooldown counts the test clock: a resume by the clock starts it, and advancing the clock past it ends it', async () => {
    const { testApiKey } = await t.merchant();
    expect((await putPolicy(testApiKey, { cooldownDays: 10 })).body).toMatchObject({ cooldownDays: 10, livemode: false });
    const [id] = (await api(testApiKey, 'POST', '/v2/test-helpers/subscriptions', { count: 1 })).body.data.map((s: { id: string }) => s.id);
    const now = Date.parse((await api(testApiKey, 'GET', '/v2/test-helpers/clock')).body.now);
    const at = (days: number) => new Date(now + days * DAY).toISOString();
    expect((await pause(testApiKey, id, { resumeAt: at(5) })).body).toMatchObject({ status: 'paused' });
    expect((await api(testApiKey, 'POST', '/v2/test-helpers/clock/advance', { to: at(6) })).status).toBe(200);
    expect((await api(testApiKey, 'GET', `/v2/subscriptions/${id}`)).body.status).toBe('fulfilled');

    // Resumed by the clock, in its time (days ahead of the wall clock): 10 days of it must pass.
    const { lastResumedAt } = (await stored(id))!;
    expect(Date.parse(lastResumedAt)).toBeGreaterThanOrEqual(Date.parse(at(5)));
    const refused = await pause(testApiKey, id);
    expect(refused).toMatchObject({ status: 422, body: { code: '0032' } });
    expect(refused.body.detail).toContain(`cooldownDays is 10; subscription ${id} was last resumed at ${lastResumedAt}`);
    expect((await api(testApiKey, 'POST', '/v2/test-helpers/clock/advance', { to: at(17) })).status).toBe(200);
    expect((await pause(testApiKey, id)).body).toMatchObject({ status: 'paused' });
  });
});
