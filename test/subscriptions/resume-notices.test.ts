/**
 * The notice before an automatic resume (issue 46 §3, docs/design.md §9 "Notices"): under the pause
 * policy's resumeNoticeHours each scheduled resume gets one `subscription.resume_upcoming` event,
 * at resumeAt − resumeNoticeHours (the test clock's advance or the schedule worker sends it), or at
 * once when set inside that window; none for a resume replaced or dropped before its notice, a new
 * one for a new resumeAt; webhooks deliver it; two worker processes send it once. Through HTTP on
 * the real database; each test has its own merchant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, httpOf } from '../support/http.js';
import { registeredReceiver, type Receiver } from '../support/receiver.js';
import { databaseUri, startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { FLEET_ON_ONE_DATABASE, startWorker, type WorkerProcess } from '../support/worker-process.js';

let t: TestService;
const receivers: Receiver[] = [];
const processes: WorkerProcess[] = [];
const others: TestService[] = [];
beforeAll(async () => {
  t = await startTestService({ workers: 1, bulkPollIntervalMs: 50, schedulePollMs: 100 });
});
afterAll(async () => {
  await Promise.all(processes.map((w) => w.stop('SIGKILL')));
  await Promise.all(receivers.map((r) => r.close()));
  for (const s of others) await s.close();
  await t.close();
});

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const OFF = { maxPauseDays: null, maxPausesPerYear: null, requireResumeAt: false };
const iso = (ms: number) => new Date(ms).toISOString();
const stamp = (ms: number) => iso(ms).replace('Z', '000Z');
const { api, completed } = httpOf(() => t);
const pause = (apiKey: string, id: string, json?: unknown) => api(apiKey, 'POST', `/v2/subscriptions/${id}/pause`, json);
const advance = async (testKey: string, to: number) => {
  const res = await api(testKey, 'POST', '/v2/test-helpers/clock/advance', { to: iso(to) });
  expect(res.status).toBe(200);
  return res.body as { appliedCount: number };
};

interface Notice {
  readonly id: string;
  readonly createdAt: string;
  readonly data: { subscription: { id: string; status: string; modifiedAt: string }; resumeAt: string; cause: { kind: string } };
}

/** Every resume_upcoming event of the caller's mode, oldest first (newest first in the list). */
async function notices(apiKey: string, subscriptionId?: string): Promise<Notice[]> {
  const all: Notice[] = [];
  let after: string | undefined;
  for (;;) {
    const query = new URLSearchParams({ type: 'subscription.resume_upcoming', limit: '100' });
    if (subscriptionId) query.set('subscriptionId', subscriptionId);
    if (after) query.set('startingAfter', after);
    const page = await api(apiKey, 'GET', `/v2/events?${query}`);
    expect(page.status).toBe(200);
    all.push(...page.body.data);
    if (!page.body.hasMore) return all.reverse();
    after = page.body.nextCursor;
  }
}

/** A test mode with resumeNoticeHours `hours`, one fulfilled subscription per `count`, and its clock's time. */
async function testModeWith(hours: number | null, count = 1) {
  const m = await t.merchant();
  expect((await api(m.testApiKey, 'PUT', '/v2/pause-policy', { ...OFF, resumeNoticeHours: hours })).status).toBe(200);
  const made = await api(m.testApiKey, 'POST', '/v2/test-helpers/subscriptions', { count });
  expect(made.status).toBe(201);
  const ids: string[] = made.body.data.map((s: { id: string }) => s.id);
  const now = Date.parse((await api(m.testApiKey, 'GET', '/v2/test-helpers/clock')).body.now);
  return { ...m, ids, now };
}

describe('the pause policy', () => {
  it('shows resumeNoticeHours, null by default and when left out; 0 and 721 are refused with 400 0040', async () => {
    const { apiKey } = await t.merchant();
    expect((await api(apiKey, 'GET', '/v2/pause-policy')).body).toMatchObject({ resumeNoticeHours: null });
    const put = await api(apiKey, 'PUT', '/v2/pause-policy', { ...OFF, resumeNoticeHours: 72 });
    expect(put.body).toMatchObject({ resumeNoticeHours: 72, livemode: true });
    expect((await api(apiKey, 'GET', '/v2/pause-policy')).body).toMatchObject({ resumeNoticeHours: 72 });
    for (const hours of [0, 721, 1.5]) {
      expect((await api(apiKey, 'PUT', '/v2/pause-policy', { ...OFF, resumeNoticeHours: hours })).body).toMatchObject({
        status: 400,
        code: '0040',
      });
    }
    expect((await api(apiKey, 'PUT', '/v2/pause-policy', OFF)).body).toMatchObject({ resumeNoticeHours: null });
  });
});

describe('notices with the test clock', () => {
  it('one notice at resumeAt − resumeNoticeHours, showing the subscription unchanged, delivered by webhook; none again at the resume', async () => {
    const m = await testModeWith(24);
    const { receiver } = await registeredReceiver(t.baseUrl, m.testApiKey, ['subscription.resume_upcoming'], receivers);
    const [id] = m.ids;
    const resumeAt = m.now + 10 * DAY;
    const paused = await pause(m.testApiKey, id!, { resumeAt: iso(resumeAt) });
    expect(paused.status).toBe(200);

    await advance(m.testApiKey, resumeAt - DAY - 1000);
    expect(await notices(m.testApiKey)).toEqual([]);
    const advanced = await advance(m.testApiKey, resumeAt - DAY);

    expect(advanced.appliedCount).toBe(1);
    const [notice, ...more] = await notices(m.testApiKey);
    expect(more).toEqual([]);
    expect(notice).toMatchObject({
      createdAt: stamp(resumeAt - DAY),
      livemode: false,
      data: {
        subscription: { id, status: 'paused', modifiedAt: paused.body.modifiedAt, schedule: { resumeAt: stamp(resumeAt) } },
        previousStatus: 'paused',
        resumeAt: stamp(resumeAt),
        cause: { kind: 'schedule' },
      },
    });
    // The advance answers after the first delivery attempt.
    expect(receiver.received.map((r) => [r.verified, r.body.type, r.body.data.resumeAt])).toEqual([
      [true, 'subscription.resume_upcoming', stamp(resumeAt)],
    ]);
    expect((await api(m.testApiKey, 'GET', `/v2/subscriptions/${id}`)).body.modifiedAt).toBe(paused.body.modifiedAt);

    await advance(m.testApiKey, resumeAt + HOUR);
    expect((await api(m.testApiKey, 'GET', `/v2/subscriptions/${id}`)).body.status).toBe('fulfilled');
    expect((await notices(m.testApiKey)).map((n) => n.id)).toEqual([notice!.id]);
  });

  it('a resume set inside the window is noticed at once, by the pause itself, and not again when the clock passes it', async () => {
    const m = await testModeWith(48);
    const [id] = m.ids;
    const resumeAt = m.now + DAY;
    expect((await pause(m.testApiKey, id!, { resumeAt: iso(resumeAt) })).status).toBe(200);

    const [notice, ...more] = await waitFor(
      () => notices(m.testApiKey),
      (n) => n.length > 0,
    );
    expect(more).toEqual([]);
    expect(notice!.data).toMatchObject({ resumeAt: stamp(resumeAt), subscription: { id, status: 'paused' } });

    await advance(m.testApiKey, resumeAt + HOUR);
    expect((await notices(m.testApiKey)).length).toBe(1);
  });

  it('a resume replaced before its notice gets none; its replacement gets one; a dropped one gets none', async () => {
    const m = await testModeWith(24, 2);
    const [replaced, dropped] = m.ids as [string, string];
    const first = m.now + 5 * DAY;
    const second = m.now + 8 * DAY;
    expect((await pause(m.testApiKey, replaced, { resumeAt: iso(first) })).status).toBe(200);
    expect((await pause(m.testApiKey, replaced, { resumeAt: iso(second) })).status).toBe(200);
    expect((await pause(m.testApiKey, dropped, { resumeAt: iso(first) })).status).toBe(200);
    expect((await api(m.testApiKey, 'DELETE', `/v2/subscriptions/${dropped}/schedule`)).status).toBe(200);

    await advance(m.testApiKey, second + HOUR);

    const sent = await notices(m.testApiKey);
    expect(sent.map((n) => [n.data.subscription.id, n.data.resumeAt, n.createdAt])).toEqual([
      [replaced, stamp(second), stamp(second - DAY)],
    ]);
  });

  it('a new resumeAt after a notice gets a notice of its own', async () => {
    const m = await testModeWith(24);
    const [id] = m.ids as [string];
    const first = m.now + 5 * DAY;
    const later = m.now + 9 * DAY;
    expect((await pause(m.testApiKey, id, { resumeAt: iso(first) })).status).toBe(200);
    await advance(m.testApiKey, first - 12 * HOUR);
    expect((await pause(m.testApiKey, id, { resumeAt: iso(later) })).status).toBe(200);

    await advance(m.testApiKey, later + HOUR);

    expect((await notices(m.testApiKey)).map((n) => n.data.resumeAt)).toEqual([stamp(first), stamp(later)]);
    expect((await api(m.testApiKey, 'GET', `/v2/subscriptions/${id}`)).body.status).toBe('fulfilled');
  });

  it('a bulk pause with resumeAt: each subscription gets its notice when the clock reaches it', async () => {
    const m = await testModeWith(24, 5);
    const resumeAt = m.now + 3 * DAY;
    const res = await api(m.testApiKey, 'POST', '/v2/subscriptions/bulk/pause', { subscriptions: m.ids, resumeAt: iso(resumeAt) });
    expect(res.status).toBe(202);
    await completed(m.testApiKey, res.headers.get('location')!);

    expect((await advance(m.testApiKey, resumeAt - DAY)).appliedCount).toBe(5);

    expect((await notices(m.testApiKey)).map((n) => n.data.subscription.id).sort()).toEqual([...m.ids].sort());
  });

  it('with resumeNoticeHours off (the default) no notice is sent', async () => {
    const m = await testModeWith(null);
    const resumeAt = m.now + 2 * DAY;
    expect((await pause(m.testApiKey, m.ids[0]!, { resumeAt: iso(resumeAt) })).status).toBe(200);
    expect((await advance(m.testApiKey, resumeAt + HOUR)).appliedCount).toBe(1);
    expect(await notices(m.testApiKey)).toEqual([]);
  });
});

describe('a change of resumeNoticeHours', () => {
  const putHours = (testKey: string, hours: number | null) =>
    api(testKey, 'PUT', '/v2/pause-policy', { ...OFF, resumeNoticeHours: hours }).then((r) => expect(r.status).toBe(200));

  it('turned on, gives the resumes already scheduled their notice; turned off, takes back those not sent', async () => {
    const m = await testModeWith(null, 2);
    const [early, late] = m.ids as [string, string];
    const soon = m.now + 4 * DAY;
    const later = m.now + 8 * DAY;
    expect((await pause(m.testApiKey, early, { resumeAt: iso(soon) })).status).toBe(200);
    expect((await pause(m.testApiKey, late, { resumeAt: iso(later) })).status).toBe(200);

    await putHours(m.testApiKey, 48);
    await advance(m.testApiKey, soon - 48 * HOUR);
    await putHours(m.testApiKey, null);
    await advance(m.testApiKey, later + HOUR);

    expect((await notices(m.testApiKey)).map((n) => [n.data.subscription.id, n.createdAt])).toEqual([[early, stamp(soon - 48 * HOUR)]]);
  });

  it('changed, moves a pending notice to the new time and leaves one already sent alone', async () => {
    const m = await testModeWith(24, 2);
    const [sent, moved] = m.ids as [string, string];
    const soon = m.now + 2 * DAY;
    const later = m.now + 6 * DAY;
    expect((await pause(m.testApiKey, sent, { resumeAt: iso(soon) })).status).toBe(200);
    expect((await pause(m.testApiKey, moved, { resumeAt: iso(later) })).status).toBe(200);
    await advance(m.testApiKey, soon - 24 * HOUR);

    await putHours(m.testApiKey, 72);
    await advance(m.testApiKey, later + HOUR);

    expect((await notices(m.testApiKey)).map((n) => [n.data.subscription.id, n.createdAt])).toEqual([
      [sent, stamp(soon - 24 * HOUR)],
      [moved, stamp(later - 72 * HOUR)],
    ]);
  });
});

describe('a notice made due by a change of resumeNoticeHours', () => {
  const putHours = (apiKey: string, hours: number) =>
    api(apiKey, 'PUT', '/v2/pause-policy', { ...OFF, resumeNoticeHours: hours }).then((r) => expect(r.status).toBe(200));

  it('in test mode, is dated at the change on the test clock, never before it, and listed after the pause', async () => {
    const m = await testModeWith(1);
    const [id] = m.ids as [string];
    const resumeAt = m.now + HOUR + 2 * 60_000;
    expect((await pause(m.testApiKey, id, { resumeAt: iso(resumeAt) })).status).toBe(200);
    const changedAt = m.now + 60_000;
    await advance(m.testApiKey, changedAt);

    // resumeAt − 2 h falls before the pause: the notice is due as the policy changes.
    await putHours(m.testApiKey, 2);
    expect((await advance(m.testApiKey, changedAt + 1000)).appliedCount).toBe(1);

    const [notice, ...more] = await notices(m.testApiKey);
    expect(more).toEqual([]);
    expect(notice!.createdAt).toBe(stamp(changedAt));
    const listed = await api(m.testApiKey, 'GET', `/v2/events?subscriptionId=${id}`);
    expect(listed.body.data.map((e: { type: string }) => e.type)).toEqual([
      'subscription.resume_upcoming',
      'subscription.resume_scheduled',
      'subscription.paused',
    ]);
  });

  it('in live mode, is sent at once and dated no earlier than the change', async () => {
    const { merchantId, apiKey } = await t.merchant();
    await putHours(apiKey, 1);
    const [id] = await t.seed(merchantId, 1);
    expect((await pause(apiKey, id!, { resumeAt: iso(Date.now() + HOUR + 2 * 60_000) })).status).toBe(200);
    const before = stamp(Date.now());

    await putHours(apiKey, 2);

    const [notice] = await waitFor(
      () => notices(apiKey),
      (n) => n.length > 0,
      15_000,
    );
    expect(notice!.createdAt >= before).toBe(true);
    const listed = await api(apiKey, 'GET', `/v2/events?subscriptionId=${id}`);
    expect(listed.body.data.map((e: { type: string }) => e.type)).toEqual([
      'subscription.resume_upcoming',
      'subscription.resume_scheduled',
      'subscription.paused',
    ]);
  });
});

describe('notices in live mode', () => {
  it('the schedule worker sends the notice when it falls due, once', async () => {
    const { merchantId, apiKey } = await t.merchant();
    expect((await api(apiKey, 'PUT', '/v2/pause-policy', { ...OFF, resumeNoticeHours: 1 })).status).toBe(200);
    const [id] = await t.seed(merchantId, 1);
    const resumeAt = iso(Date.now() + HOUR + 1500);
    expect((await pause(apiKey, id!, { resumeAt })).status).toBe(200);
    expect(await notices(apiKey)).toEqual([]);

    const [notice] = await waitFor(
      () => notices(apiKey),
      (n) => n.length > 0,
      15_000,
    );

    expect(notice!.data).toMatchObject({ resumeAt: resumeAt.replace('Z', '000Z'), cause: { kind: 'schedule' } });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await notices(apiKey)).length).toBe(1);
  });
});

describe('notices across processes', () => {
  it('two worker processes sending the same 200 notices record one event each', async () => {
    const s = await startTestService({ workers: 0 });
    others.push(s);
    const env = { ...FLEET_ON_ONE_DATABASE, SCHEDULE_POLL_MS: '100' };
    const uri = databaseUri(s.db.databaseName);
    processes.push(...(await Promise.all([startWorker(uri, env), startWorker(uri, env)])));
    const { merchantId, apiKey } = await s.merchant();
    const on = (method: string, path: string, json?: unknown) => call(s.baseUrl, path, { method, apiKey, json });
    expect((await on('PUT', '/v2/pause-policy', { ...OFF, resumeNoticeHours: 1 })).status).toBe(200);
    const ids = await s.seed(merchantId, 200);
    const res = await on('POST', '/v2/subscriptions/bulk/pause', { subscriptions: ids, resumeAt: iso(Date.now() + HOUR + 4000) });
    expect(res.status).toBe(202);
    await httpOf(() => s).completed(apiKey, res.headers.get('location')!);

    const noticed = await waitFor(
      () => s.db.collection('subscriptions').countDocuments({ merchantId, noticeFor: { $exists: true }, 'outbox.key': { $exists: false } }),
      (n) => n === ids.length,
      60_000,
    );
    expect(noticed).toBe(ids.length);
    const byId = async () => {
      const sent: Notice[] = [];
      let after: string | undefined;
      for (;;) {
        const query = new URLSearchParams({
          type: 'subscription.resume_upcoming',
          limit: '100',
          ...(after ? { startingAfter: after } : {}),
        });
        const page = await on('GET', `/v2/events?${query}`);
        sent.push(...page.body.data);
        if (!page.body.hasMore) return sent;
        after = page.body.nextCursor;
      }
    };
    const sent = await byId();
    expect(sent.length).toBe(ids.length);
    expect(new Set(sent.map((n) => n.data.subscription.id)).size).toBe(ids.length);
  });
});
