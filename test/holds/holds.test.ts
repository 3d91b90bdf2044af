/**
 * Holds (issue 46 §1): a store-wide pause layered over each subscription's own, through HTTP on
 * the real database, in live and in test mode. Every layering case of the issue has its test:
 * release resumes only what the hold alone keeps paused; an explicit resume takes a subscription
 * out of its holds; an explicit pause keeps it paused after the release; its own scheduled resume
 * under a hold ends its own pause only; a hold's resumeAt releases it (the schedule workers, or the
 * test clock).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, httpOf, type Reply } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 2 });
});
afterAll(() => t?.close());

type Status = 'fulfilled' | 'paused' | 'cancelled';

const { api, completed } = httpOf(() => t);

const problem = (res: Reply, status: number, code: string) => {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  expect(res.body.code).toBe(code);
};

/** A fresh merchant in one mode: its key, and how its subscriptions are made. */
interface Mode {
  readonly key: string;
  readonly livemode: boolean;
  seed(count: number, status: Status): Promise<string[]>;
}

const MODES = {
  live: async (): Promise<Mode> => {
    const { merchantId, apiKey } = await t.merchant();
    return { key: apiKey, livemode: true, seed: (count, status) => t.seed(merchantId, count, status) };
  },
  test: async (): Promise<Mode> => {
    const { testApiKey } = await t.merchant();
    const seed = async (count: number, status: Status) => {
      const made = await api(testApiKey, 'POST', '/v2/test-helpers/subscriptions', { count, status });
      expect(made.status).toBe(201);
      return made.body.data.map((s: { id: string }) => s.id) as string[];
    };
    return { key: testApiKey, livemode: false, seed };
  },
};

const read = async (key: string, id: string) => (await api(key, 'GET', `/v2/subscriptions/${id}`)).body;
const statuses = (key: string, ids: readonly string[]) => Promise.all(ids.map(async (id) => (await read(key, id)).status));

/** Places a hold and waits until its pause is applied. */
async function placed(key: string, body?: unknown) {
  const res = await api(key, 'POST', '/v2/holds', body);
  expect(res.status).toBe(202);
  await completed(key, res.body.requestId);
  return res.body as { id: string; requestId: string };
}

/** Releases a hold and waits until its resume is applied. */
async function released(key: string, holdId: string) {
  const res = await api(key, 'POST', `/v2/holds/${holdId}/release`);
  expect(res.status).toBe(202);
  await completed(key, res.body.releaseRequestId);
  return res.body as { releaseRequestId: string };
}

/** The subscription's events, oldest first, as [type, cause]. */
async function eventsOf(key: string, id: string): Promise<[string, Record<string, unknown>][]> {
  const res = await api(key, 'GET', `/v2/events?subscriptionId=${id}&limit=100`);
  expect(res.status).toBe(200);
  return res.body.data.map((e: any) => [e.type, e.data.cause]).reverse();
}
const eventually = (key: string, id: string, count: number) =>
  waitFor(
    () => eventsOf(key, id),
    (events) => events.length >= count,
    15_000,
  );

/** Moves a test mode's clock on by `ms`. */
async function advance(key: string, ms: number) {
  const { now } = (await api(key, 'GET', '/v2/test-helpers/clock')).body;
  const res = await api(key, 'POST', '/v2/test-helpers/clock/advance', { to: new Date(Date.parse(now) + ms).toISOString() });
  expect(res.status).toBe(200);
}

const HOUR = 3_600_000;

describe.each(['live', 'test'] as const)('holds in %s mode', (modeName) => {
  it('a hold pauses what is fulfilled, holds what is paused, and its release resumes only what it alone kept paused', async () => {
    const m = await MODES[modeName]();
    const active = await m.seed(3, 'fulfilled');
    const own = await m.seed(2, 'paused');
    const [cancelled] = await m.seed(1, 'cancelled');

    const res = await api(m.key, 'POST', '/v2/holds', { reason: 'Stock-out' });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/v2/holds/${res.body.id}`);
    expect(res.body).toEqual({
      id: expect.any(String),
      status: 'active',
      reason: 'Stock-out',
      resumeAt: null,
      createdAt: expect.any(String),
      requestId: expect.any(String),
      livemode: m.livemode,
    });
    const hold = res.body;
    const pause = await completed(m.key, hold.requestId);
    // Its pause request names all it covers: the fulfilled ones paused, the paused ones held too.
    expect(pause.body).toMatchObject({ operation: 'PAUSE', acceptedCount: 5, holdId: hold.id, counts: { applied: 3, noop: 2 } });
    expect(await statuses(m.key, [...active, ...own, cancelled!])).toEqual(['paused', 'paused', 'paused', 'paused', 'paused', 'cancelled']);
    for (const id of [...active, ...own]) expect((await read(m.key, id)).holdIds).toEqual([hold.id]);
    expect((await read(m.key, cancelled!)).holdIds).toBeUndefined();
    expect(await eventually(m.key, active[0]!, 1)).toEqual([
      ['subscription.paused', { kind: 'hold', holdId: hold.id, requestId: hold.requestId }],
    ]);

    const release = await api(m.key, 'POST', `/v2/holds/${hold.id}/release`);
    expect(release.status).toBe(202);
    expect(release.body).toEqual({
      ...hold,
      status: 'released',
      releasedAt: expect.any(String),
      releaseRequestId: expect.any(String),
    });
    const resume = await completed(m.key, release.body.releaseRequestId);
    expect(resume.body).toMatchObject({ operation: 'RESUME', holdId: hold.id, counts: { applied: 3, noop: 2 } });
    expect(await statuses(m.key, [...active, ...own])).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'paused', 'paused']);
    for (const id of [...active, ...own]) expect((await read(m.key, id)).holdIds).toBeUndefined();
    const cause = { kind: 'hold', holdId: hold.id, requestId: release.body.releaseRequestId };
    expect(await eventually(m.key, active[0]!, 2)).toEqual([
      ['subscription.paused', { kind: 'hold', holdId: hold.id, requestId: hold.requestId }],
      ['subscription.resumed', cause],
    ]);
    expect(await eventsOf(m.key, own[0]!)).toEqual([]);
    expect((await api(m.key, 'GET', `/v2/holds/${hold.id}`)).body).toEqual(release.body);
  });

  it('an explicit resume of a held subscription resumes it and takes it out of the hold; the release leaves it as it is', async () => {
    const m = await MODES[modeName]();
    const [single, inBulk, left] = await m.seed(3, 'fulfilled');
    const hold = await placed(m.key);

    const resumed = await api(m.key, 'POST', `/v2/subscriptions/${single}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body.status).toBe('fulfilled');
    const bulk = await api(m.key, 'POST', '/v2/subscriptions/bulk/resume', { subscriptions: [inBulk] });
    await completed(m.key, bulk.body.requestId);
    expect((await read(m.key, single!)).holdIds).toBeUndefined();
    expect((await read(m.key, inBulk!)).holdIds).toBeUndefined();
    // Paused again on its own, after leaving the hold: the release does not resume it.
    expect((await api(m.key, 'POST', `/v2/subscriptions/${single}/pause`)).status).toBe(200);

    const release = await released(m.key, hold.id);
    expect(await statuses(m.key, [single!, inBulk!, left!])).toEqual(['paused', 'fulfilled', 'fulfilled']);
    expect((await api(m.key, 'GET', `/v2/bulk-requests/${release.releaseRequestId}`)).body.acceptedCount).toBe(1);
  });

  it('an explicit pause of a held subscription answers 200 with no change and no event, and keeps it paused after the release', async () => {
    const m = await MODES[modeName]();
    const [single, inBulk, left] = await m.seed(3, 'fulfilled');
    const hold = await placed(m.key);
    await eventually(m.key, left!, 1);

    const before = await read(m.key, single!);
    const paused = await api(m.key, 'POST', `/v2/subscriptions/${single}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ status: 'paused', modifiedAt: before.modifiedAt });
    const bulk = await api(m.key, 'POST', '/v2/subscriptions/bulk/pause', { subscriptions: [inBulk] });
    expect((await completed(m.key, bulk.body.requestId)).body.counts.noop).toBe(1);

    await released(m.key, hold.id);
    expect(await statuses(m.key, [single!, inBulk!, left!])).toEqual(['paused', 'paused', 'fulfilled']);
    await eventually(m.key, left!, 2);
    expect((await eventsOf(m.key, single!)).map(([type]) => type)).toEqual(['subscription.paused']);
  });

  it('a subscription held by two holds is resumed by the release of the second', async () => {
    const m = await MODES[modeName]();
    const [id] = await m.seed(1, 'fulfilled');
    const first = await placed(m.key);
    const second = await placed(m.key);
    expect((await read(m.key, id!)).holdIds).toEqual([first.id, second.id]);

    await released(m.key, first.id);
    expect(await read(m.key, id!)).toMatchObject({ status: 'paused', holdIds: [second.id] });
    await released(m.key, second.id);
    expect((await read(m.key, id!)).status).toBe('fulfilled');
  });

  it('releasing a released hold answers 409 0035; an unknown hold, or one of the other mode or merchant, 404 0026', async () => {
    const m = await MODES[modeName]();
    const other = await MODES[modeName === 'live' ? 'test' : 'live']();
    const stranger = await MODES[modeName]();
    const hold = await placed(m.key);
    const release = await released(m.key, hold.id);

    const again = await api(m.key, 'POST', `/v2/holds/${hold.id}/release`);
    problem(again, 409, '0035');
    expect(again.body.detail).toContain(release.releaseRequestId);
    problem(await api(m.key, 'GET', '/v2/holds/7d2e3f4a-5b6c-4d7e-8f9a-0b1c2d3e4f5a'), 404, '0026');
    problem(await api(m.key, 'GET', '/v2/holds/not-a-uuid'), 404, '0026');
    for (const key of [other.key, stranger.key]) {
      problem(await api(key, 'GET', `/v2/holds/${hold.id}`), 404, '0026');
      problem(await api(key, 'POST', `/v2/holds/${hold.id}/release`), 404, '0026');
      expect((await api(key, 'GET', '/v2/holds')).body.data).toEqual([]);
    }
  });

  it("undoing a hold's pause or release answers 409 0034 naming the hold", async () => {
    const m = await MODES[modeName]();
    await m.seed(1, 'fulfilled');
    const hold = await placed(m.key);
    const undo = await api(m.key, 'POST', `/v2/bulk-requests/${hold.requestId}/undo`);
    problem(undo, 409, '0034');
    expect(undo.body.detail).toContain(hold.id);
    const release = await released(m.key, hold.id);
    problem(await api(m.key, 'POST', `/v2/bulk-requests/${release.releaseRequestId}/undo`), 409, '0034');
  });

  it('lists the holds newest first, a page at a time', async () => {
    const m = await MODES[modeName]();
    const first = await placed(m.key);
    const second = await placed(m.key);
    const page = await api(m.key, 'GET', '/v2/holds?limit=1');
    expect(page.body).toMatchObject({ data: [{ id: second.id }], hasMore: true, nextCursor: second.id });
    const next = await api(m.key, 'GET', `/v2/holds?limit=1&startingAfter=${second.id}`);
    expect(next.body).toMatchObject({ data: [{ id: first.id }], hasMore: false, nextCursor: null });
  });

  it('a hold retried with its Idempotency-Key is placed once: the retry replays the first answer', async () => {
    const m = await MODES[modeName]();
    const key = `hold-${modeName}`;
    const first = await call(t.baseUrl, '/v2/holds', { method: 'POST', apiKey: m.key, json: {}, headers: { 'Idempotency-Key': key } });
    const again = await call(t.baseUrl, '/v2/holds', { method: 'POST', apiKey: m.key, json: {}, headers: { 'Idempotency-Key': key } });
    expect([first.status, again.status]).toEqual([202, 202]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('location')).toBe(`/v2/holds/${first.body.id}`);
    expect((await api(m.key, 'GET', '/v2/holds')).body.data.map((h: { id: string }) => h.id)).toEqual([first.body.id]);
  });

  it('a resumeAt in the past answers 400 0043', async () => {
    const m = await MODES[modeName]();
    const res = await api(m.key, 'POST', '/v2/holds', { resumeAt: '2020-01-01T00:00:00.000000Z' });
    problem(res, 400, '0043');
  });
});

describe('a hold with a resumeAt, and a scheduled resume under a hold', () => {
  it('in test mode, the test clock passing its resumeAt releases the hold; an own scheduled resume under it ends its own pause only', async () => {
    const m = await MODES.test();
    const [scheduled, plain] = await m.seed(2, 'fulfilled');
    const { now } = (await api(m.key, 'GET', '/v2/test-helpers/clock')).body;
    const inHours = (h: number) => new Date(Date.parse(now) + h * HOUR).toISOString().replace('Z', '000Z');
    expect((await api(m.key, 'POST', `/v2/subscriptions/${scheduled}/pause`, { resumeAt: inHours(1) })).status).toBe(200);
    const hold = await placed(m.key, { resumeAt: inHours(3) });

    await advance(m.key, 2 * HOUR);
    expect(await read(m.key, scheduled!)).toMatchObject({ status: 'paused', holdIds: [hold.id] });
    expect((await read(m.key, scheduled!)).schedule).toBeUndefined();

    await advance(m.key, 2 * HOUR);
    const after = (await api(m.key, 'GET', `/v2/holds/${hold.id}`)).body;
    expect(after).toMatchObject({ status: 'released', releasedAt: inHours(3) });
    await completed(m.key, after.releaseRequestId);
    expect(await statuses(m.key, [scheduled!, plain!])).toEqual(['fulfilled', 'fulfilled']);
  });

  it('in live mode, the schedule workers release a hold at its resumeAt, after an own scheduled resume under it kept it paused', async () => {
    const m = await MODES.live();
    const [scheduled, plain] = await m.seed(2, 'fulfilled');
    const soon = (ms: number) => new Date(Date.now() + ms).toISOString().replace('Z', '000Z');
    expect((await api(m.key, 'POST', `/v2/subscriptions/${scheduled}/pause`, { resumeAt: soon(1500) })).status).toBe(200);
    const hold = await placed(m.key, { resumeAt: soon(5000) });

    const underHold = await waitFor(
      () => read(m.key, scheduled!),
      (s) => s.schedule === undefined,
      10_000,
    );
    expect(underHold).toMatchObject({ status: 'paused', holdIds: [hold.id] });

    const after = await waitFor(
      () => api(m.key, 'GET', `/v2/holds/${hold.id}`),
      (res) => res.body.status === 'released',
      15_000,
    );
    await completed(m.key, after.body.releaseRequestId);
    expect(await statuses(m.key, [scheduled!, plain!])).toEqual(['fulfilled', 'fulfilled']);
  });
});

describe('a release racing explicit pauses and resumes (real concurrency)', () => {
  it('every subscription paused explicitly during the release stays paused; every one resumed stays fulfilled', async () => {
    for (let round = 0; round < 3; round++) {
      const m = await MODES.live();
      const toPause = await m.seed(20, 'fulfilled');
      const toResume = await m.seed(20, 'fulfilled');
      const hold = await placed(m.key);
      const [release, ...answers] = await Promise.all([
        api(m.key, 'POST', `/v2/holds/${hold.id}/release`),
        ...toPause.map((id) => api(m.key, 'POST', `/v2/subscriptions/${id}/pause`)),
        ...toResume.map((id) => api(m.key, 'POST', `/v2/subscriptions/${id}/resume`)),
      ]);
      expect(release.status).toBe(202);
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      await completed(m.key, release.body.releaseRequestId);
      expect(await statuses(m.key, toPause)).toEqual(toPause.map(() => 'paused'));
      expect(await statuses(m.key, toResume)).toEqual(toResume.map(() => 'fulfilled'));
      for (const id of [...toPause, ...toResume]) expect((await read(m.key, id)).holdIds).toBeUndefined();
    }
  });
});
