/**
 * The benchmark's schedule-lag set-up (scripts/bench-schedule-lag.ts) on the real database, with
 * the service's workers: it reaches the state it measures (every subscription paused, then given
 * one resumeAt before it falls due) even when the workers start late, and throws where it cannot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { benchScheduleLag, ScheduleLagNotComparable, type ScheduleLagService } from '../../scripts/bench-schedule-lag.js';
import { startTestService, type TestService } from '../support/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 2, schedulePollMs: 200, rateLimitPerSecond: 0 });
  // The set-up starts and stops the workers itself, as the benchmark's service runs without them.
  await t.service.workers.stop(30_000);
});
afterAll(() => t.close());

/** The service's workers, taking work only `delayMs` after they are started: a worker that starts late. */
function startingLate(delayMs: number): ScheduleLagService & { started: Promise<void> } {
  let started!: Promise<void>;
  return {
    get started() {
      return started;
    },
    workers: {
      start: async () => {
        started = new Promise((resolve) => setTimeout(resolve, delayMs)).then(() => t.service.workers.start());
      },
      stop: async (deadlineMs) => {
        await started;
        await t.service.workers.stop(deadlineMs);
      },
    },
  };
}

/** Every subscription was paused before resumeAt and resumed at or after it: the state (e) measures. */
async function expectMeasuredState(ids: string[], resumeAt: string) {
  const docs = await t.db
    .collection('subscriptions')
    .find({ _id: { $in: ids as never[] } })
    .toArray();
  const due = Date.parse(resumeAt);
  expect(docs.map((d) => d.status)).toEqual(ids.map(() => 'fulfilled'));
  expect(docs.filter((d) => Date.parse(String(d.modifiedAt)) < due)).toEqual([]);
  const pauses = docs.flatMap((d) => (d.recentPauses as string[]).map(Date.parse));
  expect(pauses).toHaveLength(ids.length);
  expect(pauses.filter((at) => at >= due)).toEqual([]);
}

describe('the schedule-lag set-up', () => {
  it('pauses every subscription, then gives them one resumeAt before it falls due, and measures each resume from it', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const ids = await t.seed(merchantId, 40);
    const lag = await benchScheduleLag(t.db, t.service, t.baseUrl, apiKey, ids);
    expect(lag.scheduleResumed).toBe(ids.length);
    expect(lag.scheduleSlackMs).toBeGreaterThan(0);
    expect(lag.scheduleMarginMs).toBeGreaterThanOrEqual(Math.max(5_000, 3 * lag.schedulePauseAppliedMs));
    expect(lag.scheduleLagP50Ms).toBeLessThanOrEqual(lag.scheduleLagP99Ms);
    await expectMeasuredState(ids, lag.scheduleResumeAt);
  });

  it('when the workers start 7 s late, longer than a resumeAt chosen before the pause would allow, it still pauses first', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const ids = await t.seed(merchantId, 40);
    const late = startingLate(7_000);
    const lag = await benchScheduleLag(t.db, late, t.baseUrl, apiKey, ids);
    expect(lag.schedulePauseAppliedMs).toBeGreaterThanOrEqual(7_000);
    expect(lag.scheduleSlackMs).toBeGreaterThan(0);
    await expectMeasuredState(ids, lag.scheduleResumeAt);
  });

  it('throws, rather than measure, where the pause is not applied in time or not every subscription is accepted', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const ids = await t.seed(merchantId, 5);
    const [cancelled] = await t.seed(merchantId, 1, 'cancelled');
    await expect(benchScheduleLag(t.db, t.service, t.baseUrl, apiKey, [...ids, cancelled!])).rejects.toThrow(/accepted 5 of 6/);
    await expect(
      benchScheduleLag(t.db, startingLate(4_000), t.baseUrl, apiKey, ids, { pauseWithinMs: 1_000, resumesWithinMs: 1_000 }),
    ).rejects.toBeInstanceOf(ScheduleLagNotComparable);
  });
});
