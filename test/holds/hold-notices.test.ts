/**
 * A hold's notices (issue 46 §1 and §3, docs/webhooks.md "resume_upcoming"): a hold with a
 * resumeAt, under the pause policy's resumeNoticeHours, sends one `subscription.resume_upcoming`
 * to each subscription its release will resume, `cause: {kind: "hold", holdId}`, at resumeAt −
 * resumeNoticeHours (the test clock's advance or the schedule workers), or at once when placed
 * inside that window; a change of resumeNoticeHours moves it; a subscription's own notice waits
 * while a hold keeps it paused, and is sent when a release leaves its own resume to come. Through
 * HTTP on the real database, both modes; each test has its own merchant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let t: TestService;
/** A second service on the same database: two schedule workers' polls find each notice due. */
let other: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 2, bulkPollIntervalMs: 50, schedulePollMs: 100 });
  other = await startTestService({ workers: 1, bulkPollIntervalMs: 50, schedulePollMs: 100, databaseName: t.db.databaseName });
});
afterAll(async () => {
  await other?.close();
  await t?.close();
});

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const OFF = { maxPauseDays: null, maxPausesPerYear: null, requireResumeAt: false };
const iso = (ms: number) => new Date(ms).toISOString();
const stamp = (ms: number) => iso(ms).replace('Z', '000Z');
const { api, completed } = httpOf(() => t);
const read = async (key: string, id: string) => (await api(key, 'GET', `/v2/subscriptions/${id}`)).body;

interface Notice {
  readonly id: string;
  readonly createdAt: string;
  readonly data: {
    subscription: { id: string; status: string; modifiedAt: string };
    resumeAt: string;
    cause: { kind: string; holdId?: string };
  };
}

/** Every resume_upcoming event of the caller's mode, oldest first. */
async function notices(apiKey: string): Promise<Notice[]> {
  const page = await api(apiKey, 'GET', '/v2/events?type=subscription.resume_upcoming&limit=100');
  expect(page.status).toBe(200);
  expect(page.body.hasMore).toBe(false);
  return [...page.body.data].reverse();
}
const summary = (sent: readonly Notice[]) =>
  sent.map((n) => [n.data.subscription.id, n.data.resumeAt, n.data.cause.kind, n.data.cause.holdId ?? null]).sort();

/** A test mode with resumeNoticeHours `hours`, its clock's time, and how to make subscriptions and move the clock. */
async function testMode(hours: number | null) {
  const { testApiKey: key } = await t.merchant();
  expect((await api(key, 'PUT', '/v2/pause-policy', { ...OFF, resumeNoticeHours: hours })).status).toBe(200);
  const now = Date.parse((await api(key, 'GET', '/v2/test-helpers/clock')).body.now);
  const seed = async (count: number, status: 'fulfilled' | 'paused') => {
    const made = await api(key, 'POST', '/v2/test-helpers/subscriptions', { count, status });
    expect(made.status).toBe(201);
    return made.body.data.map((s: { id: string }) => s.id) as string[];
  };
  const advance = async (to: number) =>
    expect((await api(key, 'POST', '/v2/test-helpers/clock/advance', { to: iso(to) })).status).toBe(200);
  return { key, now, seed, advance };
}

/** Places a hold and waits until its pause is applied. */
async function placed(key: string, body: unknown) {
  const res = await api(key, 'POST', '/v2/holds', body);
  expect(res.status).toBe(202);
  await completed(key, res.body.requestId);
  return res.body as { id: string; requestId: string; resumeAt: string; createdAt: string };
}

describe("a hold's notices with the test clock", () => {
  it('each subscription the release will resume gets one notice at resumeAt − resumeNoticeHours, caused by the hold; its own paused ones none', async () => {
    const m = await testMode(24);
    const fulfilled = await m.seed(2, 'fulfilled');
    const [ownPause] = await m.seed(1, 'paused');
    const [ownResumeFirst, ownResumeLater] = await m.seed(2, 'fulfilled');
    const resumeAt = m.now + 10 * DAY;
    expect((await api(m.key, 'POST', `/v2/subscriptions/${ownResumeFirst}/pause`, { resumeAt: iso(m.now + 5 * DAY) })).status).toBe(200);
    expect((await api(m.key, 'POST', `/v2/subscriptions/${ownResumeLater}/pause`, { resumeAt: iso(m.now + 20 * DAY) })).status).toBe(200);
    const hold = await placed(m.key, { resumeAt: iso(resumeAt) });
    expect(hold.resumeAt).toBe(stamp(resumeAt));

    // ownResumeFirst's own notice (day 4) falls due under the hold: its own resume will not resume it.
    await m.advance(resumeAt - DAY - 1000);
    expect(await notices(m.key)).toEqual([]);
    expect((await read(m.key, ownResumeFirst!)).status).toBe('paused');

    await m.advance(resumeAt - DAY);
    const sent = await notices(m.key);
    const toHold = [...fulfilled, ownResumeFirst!].map((id) => [id, stamp(resumeAt), 'hold', hold.id]).sort();
    expect(summary(sent)).toEqual(toHold);
    for (const n of sent) expect(n.createdAt).toBe(stamp(resumeAt - DAY));
    expect(sent[0]!.data.subscription).toMatchObject({ status: 'paused' });

    await m.advance(resumeAt + HOUR);
    const released = await waitFor(
      () => api(m.key, 'GET', `/v2/holds/${hold.id}`),
      (r) => r.body.status === 'released',
    );
    await completed(m.key, released.body.releaseRequestId);
    expect(await Promise.all([...fulfilled, ownResumeFirst!, ownPause!].map(async (id) => (await read(m.key, id)).status))).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'paused',
    ]);
    await m.advance(resumeAt + 2 * HOUR);
    expect(summary(await notices(m.key))).toEqual(toHold);
  });

  it("a subscription's own notice under a hold waits; a release before its own resume sends it, once, then it resumes", async () => {
    const m = await testMode(24);
    const [id] = await m.seed(1, 'fulfilled');
    const ownResume = m.now + 10 * DAY;
    const holdResume = ownResume - 12 * HOUR;
    expect((await api(m.key, 'POST', `/v2/subscriptions/${id}/pause`, { resumeAt: iso(ownResume) })).status).toBe(200);
    const hold = await placed(m.key, { resumeAt: iso(holdResume) });

    await m.advance(ownResume - DAY);
    expect(await notices(m.key)).toEqual([]);

    await m.advance(holdResume);
    const released = await waitFor(
      () => api(m.key, 'GET', `/v2/holds/${hold.id}`),
      (r) => r.body.status === 'released',
    );
    await completed(m.key, released.body.releaseRequestId);
    expect((await read(m.key, id!)).status).toBe('paused');
    await m.advance(holdResume + 1000);

    const [notice, ...more] = await notices(m.key);
    expect(more).toEqual([]);
    expect(notice).toMatchObject({
      createdAt: stamp(holdResume),
      data: { subscription: { id, status: 'paused' }, resumeAt: stamp(ownResume), cause: { kind: 'schedule' } },
    });
    await m.advance(ownResume + HOUR);
    expect((await read(m.key, id!)).status).toBe('fulfilled');
    expect((await notices(m.key)).map((n) => n.id)).toEqual([notice!.id]);
  });

  it('an own scheduled resume under a hold with no resumeAt gets no notice: it does not resume the subscription', async () => {
    const m = await testMode(24);
    const [id] = await m.seed(1, 'fulfilled');
    const ownResume = m.now + 5 * DAY;
    expect((await api(m.key, 'POST', `/v2/subscriptions/${id}/pause`, { resumeAt: iso(ownResume) })).status).toBe(200);
    await placed(m.key, { reason: 'Stock-out' });

    await m.advance(ownResume + HOUR);

    expect(await notices(m.key)).toEqual([]);
    expect((await read(m.key, id!)).status).toBe('paused');
  });

  it('a hold placed inside the window is noticed at once; a hold released before its notice gets none', async () => {
    const m = await testMode(48);
    const [id] = await m.seed(1, 'fulfilled');
    const hold = await placed(m.key, { resumeAt: iso(m.now + DAY) });

    const sent = await waitFor(
      () => notices(m.key),
      (n) => n.length > 0,
    );
    expect(summary(sent)).toEqual([[id, stamp(m.now + DAY), 'hold', hold.id]]);
    expect(sent[0]!.createdAt).toBe(hold.createdAt);

    const other = await testMode(24);
    await other.seed(1, 'fulfilled');
    const early = await placed(other.key, { resumeAt: iso(other.now + 5 * DAY) });
    expect((await api(other.key, 'POST', `/v2/holds/${early.id}/release`)).status).toBe(202);
    await other.advance(other.now + 6 * DAY);
    expect(await notices(other.key)).toEqual([]);
  });

  it('a change of resumeNoticeHours moves the notice of an active hold; turned off, none is sent', async () => {
    const m = await testMode(null);
    const [id] = await m.seed(1, 'fulfilled');
    const resumeAt = m.now + 10 * DAY;
    const hold = await placed(m.key, { resumeAt: iso(resumeAt) });
    expect((await api(m.key, 'PUT', '/v2/pause-policy', { ...OFF, resumeNoticeHours: 72 })).status).toBe(200);

    await m.advance(resumeAt - 72 * HOUR);
    expect(summary(await notices(m.key))).toEqual([[id, stamp(resumeAt), 'hold', hold.id]]);

    const off = await testMode(24);
    await off.seed(1, 'fulfilled');
    const quiet = off.now + 10 * DAY;
    await placed(off.key, { resumeAt: iso(quiet) });
    expect((await api(off.key, 'PUT', '/v2/pause-policy', { ...OFF, resumeNoticeHours: null })).status).toBe(200);
    await off.advance(quiet + HOUR);
    expect(await notices(off.key)).toEqual([]);
  });
});

describe("a hold's notices in live mode", () => {
  it('the schedule workers send a notice that falls due after a change of resumeNoticeHours, once for each subscription', async () => {
    const { merchantId, apiKey: key } = await t.merchant();
    const ids = await t.seed(merchantId, 5, 'fulfilled');
    const resumeAt = Date.now() + 2 * HOUR;
    const hold = await placed(key, { resumeAt: iso(resumeAt) });
    expect(await notices(key)).toEqual([]);

    // Three hours' notice of a resume two hours away: due at once, at the workers' next poll.
    expect((await api(key, 'PUT', '/v2/pause-policy', { ...OFF, resumeNoticeHours: 3 })).status).toBe(200);

    const sent = await waitFor(
      () => notices(key),
      (n) => n.length >= ids.length,
      15_000,
    );
    expect(summary(sent)).toEqual(ids.map((id) => [id, stamp(resumeAt), 'hold', hold.id]).sort());
    expect(sent[0]).toMatchObject({ livemode: true, data: { subscription: { status: 'paused' } } });
    await new Promise((r) => setTimeout(r, 500));
    expect((await notices(key)).length).toBe(ids.length);
  });

  it('two services polling: each of several holds, over 30 subscriptions each, sends exactly one notice to each', async () => {
    const rounds = await Promise.all(
      [1, 2, 3].map(async () => {
        const { merchantId, apiKey: key } = await t.merchant();
        const ids = await t.seed(merchantId, 30, 'fulfilled');
        const resumeAt = Date.now() + 2 * HOUR;
        const hold = await placed(key, { resumeAt: iso(resumeAt) });
        return { key, ids, hold };
      }),
    );
    // All due at once, for both services' polls.
    await Promise.all(rounds.map(({ key }) => api(key, 'PUT', '/v2/pause-policy', { ...OFF, resumeNoticeHours: 3 })));

    for (const { key, ids, hold } of rounds) {
      const sent = await waitFor(
        () => notices(key),
        (n) => n.length >= ids.length,
        15_000,
      );
      expect(sent.map((n) => n.data.subscription.id).sort()).toEqual([...ids].sort());
      expect(new Set(sent.map((n) => n.data.cause.holdId))).toEqual(new Set([hold.id]));
    }
    await new Promise((r) => setTimeout(r, 500));
    for (const { key, ids } of rounds) expect((await notices(key)).length).toBe(ids.length);
  });

  it('a hold placed inside the window is noticed at once', async () => {
    const { merchantId, apiKey: key } = await t.merchant();
    const [id] = await t.seed(merchantId, 1, 'fulfilled');
    expect((await api(key, 'PUT', '/v2/pause-policy', { ...OFF, resumeNoticeHours: 1 })).status).toBe(200);
    const resumeAt = Date.now() + 30 * 60_000;
    const hold = await placed(key, { resumeAt: iso(resumeAt) });

    const sent = await waitFor(
      () => notices(key),
      (n) => n.length > 0,
      15_000,
    );
    expect(summary(sent)).toEqual([[id, stamp(resumeAt), 'hold', hold.id]]);
  });
});
