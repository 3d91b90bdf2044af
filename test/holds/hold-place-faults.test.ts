/**
 * A hold's placing survives a process killed half way (docs/reliability.md): a real `serve`
 * process places a hold and is killed with SIGKILL at each step of it, held there on the wire
 * (test/support/wire-proxy.ts): after storing the hold (before storing its pause request), after
 * storing its pause request (before the hold's mark is cleared), and, as a bulk worker, part way
 * through covering its subscriptions. The schedule workers' poll and the bulk workers of a live
 * service then finish the placing: the hold's request is found, every subscription is paused,
 * and releasing the hold resumes them all, leaving none held.
 */
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { call, httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { startWireProxy, type WireCommand, type WireMatch, type WireProxy } from '../support/wire-proxy.js';
import { startServe } from '../support/worker-process.js';

let t: TestService;
let proxy: WireProxy;
beforeAll(async () => {
  t = await startTestService({ workers: 1, schedulePollMs: 100, bulkPollIntervalMs: 50 });
  proxy = await startWireProxy(inject('mongoUri'));
});
afterAll(async () => {
  await proxy?.close();
  await t?.close();
});

const { api, completed } = httpOf(() => t);

const isCover = (c: WireCommand) => (c.body.updates as { u?: { $addToSet?: unknown } }[] | undefined)?.[0]?.u?.$addToSet !== undefined;
/** The nth write of a hold's cover by the bulk workers (a chunk's update). */
function nthCover(n: number): WireMatch {
  let seen = 0;
  return { command: 'update', collection: 'subscriptions', match: (c) => isCover(c) && ++seen === n };
}
const pauseRequestInsert: WireMatch = {
  command: 'insert',
  collection: 'bulkRequests',
  match: (c) => c.body.documents?.[0]?.operation === 'PAUSE',
};
const placedMark: WireMatch = {
  command: 'update',
  collection: 'holds',
  match: (c) => JSON.stringify(c.body.updates ?? []).includes('placeUnstoredSince'),
};

/** `stored`: its pause request was stored before the kill; `halfPlaced`: the workers' poll finishes its placing. */
const steps: {
  readonly step: string;
  readonly count: number;
  readonly at: WireMatch;
  readonly stored: boolean;
  readonly halfPlaced: boolean;
  readonly env?: Record<string, string>;
}[] = [
  { step: 'after storing the hold, before storing its pause request', count: 20, at: pauseRequestInsert, stored: false, halfPlaced: true },
  { step: 'after storing its pause request, before clearing its mark', count: 20, at: placedMark, stored: true, halfPlaced: true },
  {
    step: 'part way through its cover by the bulk workers',
    count: 2_500,
    at: nthCover(2),
    stored: true,
    halfPlaced: false,
    env: { BULK_CONCURRENCY: '1', BULK_LOCK_LIFETIME_MS: '1000' },
  },
];

/** Places a hold through a real `serve` killed with SIGKILL where `at` holds it on the wire. */
async function placeKilled(
  apiKey: string,
  at: WireMatch,
  hold: Record<string, unknown>,
  env: Record<string, string> = { BULK_CONCURRENCY: '0' },
): Promise<void> {
  const held = proxy.on(at, { action: 'hold', times: 1 });
  const doomed = await startServe(proxy.uri(t.db.databaseName), env);
  const answer = call(doomed.baseUrl, '/v2/holds', { method: 'POST', apiKey, json: hold }).catch(() => undefined);
  await held.reached;
  await doomed.stop('SIGKILL');
  held.remove();
  await answer;
}

for (const { step, count, at, stored, halfPlaced, env } of steps)
  it(`a process killed placing a hold ${step}: a live service finishes placing it, and its release leaves nothing held`, async () => {
    const { merchantId, apiKey } = await t.merchant();
    const ids = await t.seed(merchantId, count, 'fulfilled');
    await placeKilled(apiKey, at, { reason: 'Stock-out' }, env);

    const listed = (await api(apiKey, 'GET', '/v2/holds')).body.data as { id: string; status: string; requestId: string }[];
    expect(listed).toHaveLength(1);
    const hold = listed[0]!;
    expect(hold.status).toBe('active');
    expect((await api(apiKey, 'GET', `/v2/bulk-requests/${hold.requestId}`)).status).toBe(stored ? 200 : 404);

    const pause = await completed(apiKey, hold.requestId, 90_000);
    expect(pause.body).toMatchObject({ operation: 'PAUSE', holdId: hold.id, acceptedCount: count, counts: { applied: count } });
    const sample = [ids[0]!, ids[Math.floor(count / 2)]!, ids[count - 1]!];
    for (const id of sample) expect((await api(apiKey, 'GET', `/v2/subscriptions/${id}`)).body.status).toBe('paused');
    if (halfPlaced) expect(t.logLines.some((l) => String(l.msg).startsWith('holds left half placed'))).toBe(true);

    const released = await api(apiKey, 'POST', `/v2/holds/${hold.id}/release`);
    expect(released.status).toBe(202);
    const resume = await completed(apiKey, released.body.releaseRequestId, 90_000);
    expect(resume.body).toMatchObject({ operation: 'RESUME', acceptedCount: count, counts: { applied: count } });
    for (const id of sample) expect((await api(apiKey, 'GET', `/v2/subscriptions/${id}`)).body.status).toBe('fulfilled');
    expect(await t.db.collection('subscriptions').countDocuments({ merchantId, status: 'paused' })).toBe(0);
  }, 240_000);

it('a hold placed inside its notice window by a process killed after storing it: every subscription it covers gets the notice', async () => {
  const { merchantId, apiKey } = await t.merchant();
  const ids = await t.seed(merchantId, 20, 'fulfilled');
  const policy = { maxPauseDays: null, maxPausesPerYear: null, requireResumeAt: false, resumeNoticeHours: 3 };
  expect((await api(apiKey, 'PUT', '/v2/pause-policy', policy)).status).toBe(200);
  // Two hours away under three hours' notice: the notice is due as the hold is placed.
  const resumeAt = new Date(Date.now() + 2 * 3600_000).toISOString();
  await placeKilled(apiKey, pauseRequestInsert, { reason: 'Holiday', resumeAt });

  const hold = ((await api(apiKey, 'GET', '/v2/holds')).body.data as { id: string; requestId: string }[])[0]!;
  await completed(apiKey, hold.requestId, 90_000);
  const noticed = await waitFor(
    async () =>
      (await api(apiKey, 'GET', '/v2/events?type=subscription.resume_upcoming&limit=100')).body.data as {
        data: { subscription: { id: string }; cause: { holdId?: string } };
      }[],
    (events) => events.length >= ids.length,
    30_000,
  );
  expect(noticed.map((e) => e.data.subscription.id).sort()).toEqual([...ids].sort());
  for (const event of noticed) expect(event.data.cause.holdId).toBe(hold.id);
}, 240_000);

it('a hold released before the bulk workers covered anything: its pause, dispatched later, passes over all its release reached, leaving nothing held', async () => {
  const { merchantId, apiKey } = await t.merchant();
  const count = 2_500;
  await t.seed(merchantId, count, 'fulfilled');
  // The process that placed it answers 202 and is held dispatching its pause: the release comes first, then the sweep dispatches it.
  const held = proxy.on({ command: 'insert', collection: 'bulkChunks' }, { action: 'hold', times: 1 });
  const doomed = await startServe(proxy.uri(t.db.databaseName), { BULK_CONCURRENCY: '0' });
  const placed = await call(doomed.baseUrl, '/v2/holds', { method: 'POST', apiKey, json: { reason: 'Stock-out' } });
  expect(placed.status).toBe(202);
  await held.reached;

  const released = await api(apiKey, 'POST', `/v2/holds/${placed.body.id}/release`);
  expect(released.status).toBe(202);
  const resume = await completed(apiKey, released.body.releaseRequestId, 90_000);
  expect(resume.body).toMatchObject({ operation: 'RESUME', acceptedCount: count, counts: { noop: count } });
  await doomed.stop('SIGKILL');
  held.remove();

  const pause = await completed(apiKey, placed.body.requestId, 90_000);
  expect(pause.body).toMatchObject({ operation: 'PAUSE', acceptedCount: count, counts: { noop: count } });
  const subscriptions = t.db.collection('subscriptions');
  expect(await subscriptions.countDocuments({ merchantId, status: 'paused' })).toBe(0);
  expect(await subscriptions.countDocuments({ merchantId, holdIds: placed.body.id })).toBe(0);
}, 240_000);

it('a hold released before its cut-short placing was finished: the pause request it names answers, and nothing is left held', async () => {
  const { merchantId, apiKey } = await t.merchant();
  const count = 20;
  await t.seed(merchantId, count, 'fulfilled');
  await placeKilled(apiKey, pauseRequestInsert, { reason: 'Stock-out' });
  const hold = ((await api(apiKey, 'GET', '/v2/holds')).body.data as { id: string; requestId: string }[])[0]!;

  // Released at once, before the workers' poll finishes the placing.
  const released = await api(apiKey, 'POST', `/v2/holds/${hold.id}/release`);
  expect(released.status).toBe(202);
  expect((await api(apiKey, 'GET', `/v2/bulk-requests/${hold.requestId}`)).status).toBe(200);
  await completed(apiKey, released.body.releaseRequestId, 90_000);
  const pause = await completed(apiKey, hold.requestId, 90_000);
  expect(pause.body).toMatchObject({ operation: 'PAUSE', holdId: hold.id, acceptedCount: count });
  const subscriptions = t.db.collection('subscriptions');
  expect(await subscriptions.countDocuments({ merchantId, status: 'paused' })).toBe(0);
  expect(await subscriptions.countDocuments({ merchantId, holdIds: hold.id })).toBe(0);
}, 240_000);
