/**
 * Pause analytics (docs/analytics.md) through HTTP on the real database: random histories made
 * on a test clock (pauses with and without reasons, scheduled pauses and resumes, resumes, bulk
 * pauses, holds, undo, the customer's page, cancels) give the same figures as a recomputation from the events list, for every
 * `groupBy`; the range rules and the CSV answer; each mode sees its own figures.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { pollFor, waitFor } from '../support/wait.js';
import { seededRandom } from '../support/seeded-random.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 1, trustedProxies: ['127.0.0.1/32'] });
});
afterAll(async () => {
  await t?.close();
});

const { api, completed } = httpOf(() => t);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();

interface StoredEvent {
  id: string;
  type: string;
  createdAt: string;
  data: {
    subscription?: { id: string; planId: string; pauseReason?: string };
    cause?: { kind: string };
    previousStatus?: string;
  };
}

async function allEvents(apiKey: string): Promise<StoredEvent[]> {
  const events: StoredEvent[] = [];
  for (let cursor: string | null = null; ;) {
    const page = await api(apiKey, 'GET', `/v2/events?limit=100${cursor ? `&startingAfter=${cursor}` : ''}`);
    events.push(...(page.body.data as StoredEvent[]));
    if (!page.body.hasMore) return events;
    cursor = page.body.nextCursor as string;
  }
}

const KINDS = ['merchant', 'schedule', 'hold', 'customer', 'billing'] as const;
const kindOf = (cause?: { kind: string }) =>
  ({ schedule: 'schedule', hold: 'hold', portal: 'customer', billing: 'billing' })[cause?.kind ?? ''] ?? 'merchant';

function isoWeek(day: string): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 3 - ((d.getUTCDay() + 6) % 7));
  const firstThursday = new Date(Date.UTC(d.getUTCFullYear(), 0, 4));
  firstThursday.setUTCDate(firstThursday.getUTCDate() + 3 - ((firstThursday.getUTCDay() + 6) % 7));
  return `${d.getUTCFullYear()}-W${String(1 + Math.round((d.getTime() - firstThursday.getTime()) / (7 * DAY))).padStart(2, '0')}`;
}

/** The figures recomputed from the events list alone, as docs/analytics.md defines them. */
function recomputed(events: StoredEvent[], groupBy: string, from: string, to: string, livemode = false) {
  const ordered = [...events].sort((a, b) => a.id.localeCompare(b.id));
  const open = new Map<
    string,
    { day: string; at: string; reason: string | null; cause: string; planId: string; end?: { at: string; by: string } }
  >();
  const pauses: NonNullable<ReturnType<typeof open.get>>[] = [];
  for (const e of ordered) {
    const s = e.data.subscription;
    if (!s) continue;
    if (e.type === 'subscription.paused') {
      const pause = {
        day: e.createdAt.slice(0, 10),
        at: e.createdAt,
        reason: s.pauseReason?.trim() || null,
        cause: kindOf(e.data.cause),
        planId: s.planId,
      };
      open.set(s.id, pause);
      pauses.push(pause);
    } else if (e.type === 'subscription.resumed' || (e.type === 'subscription.cancelled' && e.data.previousStatus === 'paused')) {
      const pause = open.get(s.id);
      if (pause) pause.end = { at: e.createdAt, by: e.type === 'subscription.resumed' ? kindOf(e.data.cause) : 'cancelled' };
      open.delete(s.id);
    }
  }
  const keyOf = (p: (typeof pauses)[number]) =>
    ({ day: p.day, week: isoWeek(p.day), month: p.day.slice(0, 7), reason: p.reason, cause: p.cause, planId: p.planId })[groupBy] as
      string | null;
  const groups = new Map<string | null, (typeof pauses)[number][]>();
  for (const p of pauses.filter((p) => p.day >= from && p.day <= to)) groups.set(keyOf(p), [...(groups.get(keyOf(p)) ?? []), p]);
  return [...groups].map(([key, members]) => {
    const resumedBy = Object.fromEntries(KINDS.map((k) => [k, members.filter((p) => p.end?.by === k).length]));
    const resumed = members.filter((p) => p.end && p.end.by !== 'cancelled').length;
    const cancelled = members.filter((p) => p.end?.by === 'cancelled').length;
    const tenths = members
      .filter((p) => p.end)
      .map((p) => Math.round((Date.parse(p.end!.at) - Date.parse(p.at)) / (DAY / 10)))
      .sort((a, b) => a - b);
    const rank = (q: number) => (tenths.length === 0 ? null : tenths[Math.max(1, Math.ceil(q * tenths.length)) - 1]! / 10);
    return {
      key,
      pausesStarted: members.length,
      resumed,
      resumedBy,
      cancelledWhilePaused: cancelled,
      stillPaused: members.length - resumed - cancelled,
      resumeRate: resumed + cancelled === 0 ? null : Math.round((resumed / (resumed + cancelled)) * 10_000) / 10_000,
      medianPauseDays: rank(0.5),
      p90PauseDays: rank(0.9),
      livemode,
    };
  });
}

const byKey = <T extends { key: string | null }>(rows: T[]) => [...rows].sort((a, b) => String(a.key).localeCompare(String(b.key)));

let lastAddress = 0;

/** The customer pauses (a week) or resumes from the page a new link opens, as a browser posts its form. */
async function byTheCustomer(testKey: string, id: string): Promise<void> {
  const made = await api(testKey, 'POST', `/v2/subscriptions/${id}/portal-links`);
  if (made.status !== 201) return; // a cancelled subscription gets no link
  const path = new URL(made.body.url as string).pathname;
  const headers = { 'x-forwarded-for': `2001:db8::${(++lastAddress).toString(16)}` };
  const page = await (await fetch(`${t.baseUrl}${path}`, { headers })).text();
  const csrf = /name="csrf" value="([^"]*)"/.exec(page)?.[1] ?? '';
  const action = page.includes(`action="${path}/pause"`) ? 'pause' : 'resume';
  const form = new URLSearchParams({ csrf, ...(action === 'pause' ? { days: '7' } : {}) });
  const posted = await fetch(`${t.baseUrl}${path}/${action}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
    redirect: 'manual',
  });
  expect(posted.status).toBe(303);
}

/** Makes a random history for the merchant's test mode, moving its clock on between steps. */
async function randomHistory(testKey: string, seed: number): Promise<void> {
  const next = seededRandom(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const plans = [randomUUID(), randomUUID()];
  const ids: string[] = [];
  for (const planId of plans) {
    const made = await api(testKey, 'POST', '/v2/test-helpers/subscriptions', { count: 6, planId });
    ids.push(...(made.body.data as { id: string }[]).map((s) => s.id));
  }
  const reasons = ['Vacation', '  vacation ', 'Too much coffee', undefined];
  let now = Date.parse((await api(testKey, 'GET', '/v2/test-helpers/clock')).body.now as string);
  const bulkIds: string[] = [];
  for (let step = 0; step < 40; step++) {
    const roll = next();
    const id = pick(ids);
    if (roll < 0.25) {
      const reason = pick(reasons);
      await api(testKey, 'POST', `/v2/subscriptions/${id}/pause`, reason === undefined ? {} : { reason });
    } else if (roll < 0.33) {
      await api(testKey, 'POST', `/v2/subscriptions/${id}/pause`, {
        resumeAt: iso(now + (6 + next() * 60) * HOUR),
        reason: pick(reasons) ?? 'Scheduled',
      });
    } else if (roll < 0.38) {
      // A pause the schedule starts, with or without its own end.
      const pauseAt = now + (1 + next() * 20) * HOUR;
      const resumeAt = next() < 0.5 ? { resumeAt: iso(pauseAt + (6 + next() * 40) * HOUR) } : {};
      await api(testKey, 'POST', `/v2/subscriptions/${id}/pause`, { pauseAt: iso(pauseAt), ...resumeAt, reason: 'Scheduled' });
    } else if (roll < 0.53) {
      await api(testKey, 'POST', `/v2/subscriptions/${id}/resume`);
    } else if (roll < 0.61) {
      const chosen = ids.filter(() => next() < 0.4);
      if (chosen.length === 0) continue;
      const bulk = await api(testKey, 'POST', '/v2/subscriptions/bulk/pause', { subscriptions: chosen, reason: 'Stock count' });
      await completed(testKey, bulk.body.requestId as string);
      bulkIds.push(bulk.body.requestId as string);
    } else if (roll < 0.65 && bulkIds.length > 0) {
      const undo = await api(testKey, 'POST', `/v2/bulk-requests/${bulkIds.pop()!}/undo`);
      if (undo.status === 202) await completed(testKey, undo.body.requestId as string);
    } else if (roll < 0.7) {
      const hold = await api(testKey, 'POST', '/v2/holds', { reason: 'Warehouse move', resumeAt: iso(now + (12 + next() * 48) * HOUR) });
      await completed(testKey, hold.body.requestId as string);
    } else if (roll < 0.78) {
      await byTheCustomer(testKey, id);
    } else if (roll < 0.82) {
      await api(testKey, 'POST', `/v2/subscriptions/${id}/cancel`, { reason: 'Moved away' });
    } else {
      now += (2 + next() * 30) * HOUR;
    }
    // Every step at a time of its own: changes made at one instant of a test clock have no order
    // the events list could show (their ids order them by time only).
    now += 60_000;
    await api(testKey, 'POST', '/v2/test-helpers/clock/advance', { to: iso(now) });
  }
  // Past every hold and scheduled resume: each ended the way its rules say.
  now += 4 * DAY;
  await api(testKey, 'POST', '/v2/test-helpers/clock/advance', { to: iso(now) });
  // And one paused subscription cancelled, whatever the steps left paused (a pause of its own first
  // when none is), listed before the figures are compared, so that every history ends a pause so.
  const first = async (status: string) =>
    ((await api(testKey, 'GET', `/v2/subscriptions?status=${status}&limit=1`)).body.data as { id: string }[])[0];
  const paused = await first('paused');
  const last = paused?.id ?? (await first('fulfilled'))!.id;
  if (!paused) await api(testKey, 'POST', `/v2/subscriptions/${last}/pause`, { reason: 'Before leaving' });
  expect((await api(testKey, 'POST', `/v2/subscriptions/${last}/cancel`, { reason: 'Moved away' })).status).toBe(200);
  await waitFor(
    async () => (await api(testKey, 'GET', `/v2/events?type=subscription.cancelled&subscriptionId=${last}`)).body.data as unknown[],
    (events) => events.length > 0,
    15_000,
  );
}

describe('GET /v2/analytics/pauses', () => {
  /** The random histories' test keys and ranges, for the test of the ways they started and ended pauses. */
  const histories: { key: string; from: string; to: string }[] = [];

  it.each([1, 2, 3])('agrees with a recomputation from the events for every groupBy (history %i)', async (seed) => {
    const m = await t.merchant();
    await randomHistory(m.testApiKey, seed);
    const to = ((await api(m.testApiKey, 'GET', '/v2/test-helpers/clock')).body.now as string).slice(0, 10);
    const from = iso(Date.parse(to) - 20 * DAY).slice(0, 10);
    for (const groupBy of ['day', 'week', 'month', 'reason', 'cause', 'planId']) {
      // The events are recorded just after the changes: the figures follow them as soon as they are.
      const figures = async () => {
        const events = await allEvents(m.testApiKey);
        const answer = await api(m.testApiKey, 'GET', `/v2/analytics/pauses?from=${from}&to=${to}&groupBy=${groupBy}`);
        return {
          seed,
          groupBy,
          status: answer.status,
          answered: byKey(answer.body.data),
          recomputed: byKey(recomputed(events, groupBy, from, to)),
        };
      };
      const last = await pollFor(figures, (f) => JSON.stringify(f.answered) === JSON.stringify(f.recomputed), 15_000, 200);
      expect(last.value.status).toBe(200);
      expect(last.value.answered).toEqual(last.value.recomputed);
    }
    histories.push({ key: m.testApiKey, from, to });
    const months = await api(m.testApiKey, 'GET', `/v2/analytics/pauses?from=${from}&to=${to}`);
    expect(months.body).toMatchObject({ from, to, groupBy: 'month', livemode: false });
    expect(months.body.data.reduce((n: number, row: { pausesStarted: number }) => n + row.pausesStarted, 0)).toBeGreaterThan(0);
    // The live mode of the same merchant has figures of its own: none.
    expect((await api(m.apiKey, 'GET', `/v2/analytics/pauses?from=${from}&to=${to}`)).body).toMatchObject({ data: [], livemode: true });
  });

  it('the histories above started and ended pauses in every way but the billing system (test/billing covers it)', async () => {
    const every = ['merchant', 'schedule', 'hold', 'customer'];
    const wanted = [...every.map((k) => `started by ${k}`), ...every.map((k) => `resumed by ${k}`), 'cancelled while paused'].sort();
    // From their events, once the workers have relayed the last of them (a hold's release is theirs).
    const covered = async () => {
      const ways = new Set<string>();
      for (const { key, from, to } of histories)
        for (const row of recomputed(await allEvents(key), 'cause', from, to)) {
          ways.add(`started by ${row.key}`);
          for (const [kind, n] of Object.entries(row.resumedBy)) if (n > 0) ways.add(`resumed by ${kind}`);
          if (row.cancelledWhilePaused > 0) ways.add('cancelled while paused');
        }
      return [...ways].sort();
    };
    const last = await pollFor(covered, (ways) => JSON.stringify(ways) === JSON.stringify(wanted), 30_000, 500);
    expect(last.value).toEqual(wanted);
  });

  it('counts a pause and its resume by reason, and answers CSV with the same rows', async () => {
    const m = await t.merchant();
    const [id] = await t.seed(m.merchantId, 1);
    await api(m.apiKey, 'POST', `/v2/subscriptions/${id}/pause`, { reason: 'Moving house' });
    await api(m.apiKey, 'POST', `/v2/subscriptions/${id}/resume`);
    const json = await waitFor(
      async () => (await api(m.apiKey, 'GET', '/v2/analytics/pauses?groupBy=reason')).body,
      (body) => body.data[0]?.resumed === 1,
      15_000,
    );
    expect(json.data).toEqual([
      {
        key: 'Moving house',
        pausesStarted: 1,
        resumed: 1,
        resumedBy: { merchant: 1, schedule: 0, hold: 0, customer: 0, billing: 0 },
        cancelledWhilePaused: 0,
        stillPaused: 0,
        resumeRate: 1,
        medianPauseDays: 0,
        p90PauseDays: 0,
        livemode: true,
      },
    ]);
    const csv = await call(t.baseUrl, '/v2/analytics/pauses?groupBy=reason', {
      method: 'GET',
      apiKey: m.apiKey,
      headers: { accept: 'text/csv' },
    });
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect((csv.body as string).split('\r\n')).toEqual([
      'key,pausesStarted,resumed,resumedBy.merchant,resumedBy.schedule,resumedBy.hold,resumedBy.customer,resumedBy.billing,cancelledWhilePaused,stillPaused,resumeRate,medianPauseDays,p90PauseDays',
      'Moving house,1,1,1,0,0,0,0,0,0,1,0,0',
      '',
    ]);
  });

  it("a test mode's reset empties its figures, and leaves the live mode's", async () => {
    const m = await t.merchant();
    const [liveId] = await t.seed(m.merchantId, 1);
    const [testId] = (await api(m.testApiKey, 'POST', '/v2/test-helpers/subscriptions', { count: 1 })).body.data.map(
      (s: { id: string }) => s.id,
    );
    await api(m.apiKey, 'POST', `/v2/subscriptions/${liveId}/pause`, { reason: 'Live' });
    await api(m.testApiKey, 'POST', `/v2/subscriptions/${testId}/pause`, { reason: 'Test' });
    const started = async (key: string) =>
      ((await api(key, 'GET', '/v2/analytics/pauses?groupBy=reason')).body.data as { key: string; pausesStarted: number }[]).map((row) => [
        row.key,
        row.pausesStarted,
      ]);
    await waitFor(
      () => started(m.testApiKey),
      (rows) => rows.length === 1,
      15_000,
    );
    await waitFor(
      () => started(m.apiKey),
      (rows) => rows.length === 1,
      15_000,
    );
    const reset = await api(m.testApiKey, 'POST', '/v2/test-helpers/reset');
    expect(reset.status).toBe(200);
    expect(reset.body.deleted.pauseHistory).toBeGreaterThan(0);
    expect(await started(m.testApiKey)).toEqual([]);
    expect(await started(m.apiKey)).toEqual([['Live', 1]]);
  });

  it('refuses a range out of order or over 366 days with 0140, and a bad groupBy or date with 0040', async () => {
    const m = await t.merchant();
    const reversed = await api(m.apiKey, 'GET', '/v2/analytics/pauses?from=2026-05-02&to=2026-05-01');
    expect(reversed).toMatchObject({ status: 400, body: { code: '0140', errors: [{ path: '/from' }] } });
    const long = await api(m.apiKey, 'GET', '/v2/analytics/pauses?from=2025-01-01&to=2026-01-03');
    expect(long).toMatchObject({ status: 400, body: { code: '0140', detail: 'from must be at most 366 days before to.' } });
    expect((await api(m.apiKey, 'GET', '/v2/analytics/pauses?from=2025-01-01&to=2026-01-02')).status).toBe(200);
    expect((await api(m.apiKey, 'GET', '/v2/analytics/pauses?groupBy=year')).body.code).toBe('0040');
    expect((await api(m.apiKey, 'GET', '/v2/analytics/pauses?from=2026-02-30')).body.code).toBe('0040');
  });
});

describe('GET /v2/analytics/resumes', () => {
  it("counts each subscription once, on the day it will resume: its own schedule's or its hold's", async () => {
    const m = await t.merchant();
    const k = m.testApiKey;
    const plan = randomUUID();
    const made = await api(k, 'POST', '/v2/test-helpers/subscriptions', { count: 4, planId: plan });
    const [a, b, , d] = (made.body.data as { id: string }[]).map((s) => s.id);
    const now = Date.parse((await api(k, 'GET', '/v2/test-helpers/clock')).body.now as string);
    const day = (n: number) => iso(now + n * DAY).slice(0, 10);
    // a: its own resume in 2 days; b: paused with no end; c: held until day 5 only; d: its own resume on day 8 outlasts the hold.
    await api(k, 'POST', `/v2/subscriptions/${a}/pause`, { resumeAt: iso(now + 2 * DAY) });
    await api(k, 'POST', `/v2/subscriptions/${b}/pause`);
    await api(k, 'POST', `/v2/subscriptions/${d}/pause`, { resumeAt: iso(now + 8 * DAY) });
    const hold = await api(k, 'POST', '/v2/holds', { reason: 'Stock-out', resumeAt: iso(now + 5 * DAY) });
    await completed(k, hold.body.requestId as string);
    const forecast = await api(k, 'GET', '/v2/analytics/resumes?days=30');
    expect(forecast.status).toBe(200);
    expect(forecast.body).toMatchObject({ days: 30, groupBy: 'day', livemode: false });
    const counts = Object.fromEntries(
      (forecast.body.data as { key: string; scheduledResumes: number; holdResumes: number }[]).map((r) => [r.key, r]),
    );
    // a is held too: its own resume on day 2 waits for the hold's release on day 5, which resumes a and c.
    expect(counts[day(5)]).toEqual({ key: day(5), scheduledResumes: 0, holdResumes: 2, livemode: false });
    expect(counts[day(8)]).toEqual({ key: day(8), scheduledResumes: 1, holdResumes: 0, livemode: false });
    expect(Object.keys(counts)).toHaveLength(2);
    expect((await api(k, 'GET', '/v2/analytics/resumes?days=4')).body.data).toEqual([]);
    expect((await api(k, 'GET', '/v2/analytics/resumes?groupBy=planId')).body.data).toEqual([
      { key: plan, scheduledResumes: 1, holdResumes: 2, livemode: false },
    ]);
  });

  it('refuses days outside 1–90', async () => {
    const m = await t.merchant();
    expect((await api(m.apiKey, 'GET', '/v2/analytics/resumes?days=91')).body.code).toBe('0040');
    expect((await api(m.apiKey, 'GET', '/v2/analytics/resumes?days=0')).body.code).toBe('0040');
  });
});
