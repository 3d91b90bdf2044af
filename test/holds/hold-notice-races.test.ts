/**
 * A hold's notice written while other writers change the same subscriptions (real concurrency,
 * through HTTP on the real database, test mode): its pause being applied by the bulk workers and
 * their events relayed (which clears the outboxes). Where the engine's updates are not atomic
 * against each other (FerretDB), a write outside the per-subscription queue and one inside it can
 * undo each other: every subscription must get its notice, and stay paused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 2, bulkPollIntervalMs: 20 });
});
afterAll(() => t?.close());

const DAY = 24 * 3600_000;
const COUNT = 300;
const OFF = { maxPauseDays: null, maxPausesPerYear: null, requireResumeAt: false };
const iso = (ms: number) => new Date(ms).toISOString();
const { api, completed } = httpOf(() => t);

/** Every item of a list of the caller's mode, a page at a time (`path` with its query). */
async function all(key: string, path: string): Promise<{ id: string; data: { subscription: { id: string } } }[]> {
  const found = [];
  for (let after: string | undefined; ;) {
    const page = await api(key, 'GET', `${path}&limit=100${after ? `&startingAfter=${after}` : ''}`);
    expect(page.status).toBe(200);
    found.push(...page.body.data);
    if (!page.body.hasMore) return found;
    after = page.body.nextCursor;
  }
}

describe("a hold's notice sent while its pause is applied and relayed", () => {
  it('every subscription is paused and gets its notice: neither is lost to the other write', { timeout: 240_000 }, async () => {
    const { testApiKey: key } = await t.merchant();
    expect((await api(key, 'PUT', '/v2/pause-policy', { ...OFF, resumeNoticeHours: 24 })).status).toBe(200);
    const now = Date.parse((await api(key, 'GET', '/v2/test-helpers/clock')).body.now);
    const made = await api(key, 'POST', '/v2/test-helpers/subscriptions', { count: COUNT, status: 'fulfilled' });
    expect(made.status).toBe(201);

    const hold = await api(key, 'POST', '/v2/holds', { resumeAt: iso(now + 2 * DAY) });
    expect(hold.status).toBe(202);
    // The notice falls due while the bulk workers pause the store and the relay records their events.
    expect((await api(key, 'POST', '/v2/test-helpers/clock/advance', { to: iso(now + 1.5 * DAY) })).status).toBe(200);
    const pause = await completed(key, hold.body.requestId, 120_000);
    expect(pause.body.counts).toMatchObject({ applied: COUNT });

    // Sent once the hold covers all it will (its pause completed), and relayed.
    const noticed = await waitFor(
      async () => new Set((await all(key, '/v2/events?type=subscription.resume_upcoming')).map((e) => e.data.subscription.id)),
      (ids) => ids.size === COUNT,
      60_000,
    );
    expect(noticed.size).toBe(COUNT);
    // Paused by the hold, each of them: no pause lost to the notice's write either.
    expect(await all(key, '/v2/subscriptions?status=paused')).toHaveLength(COUNT);
  });
});
