/**
 * The benchmark's axis (e), schedule lag (scripts/bench.ts): subscriptions that are all paused,
 * each with the same `resumeAt`, and from that moment to each one's resume (its `modifiedAt`).
 *
 * The set-up reaches that state every time, or throws: a bulk pause without a schedule is waited
 * for until applied, however long it takes; only then is `resumeAt` chosen, from that moment, and
 * given to each subscription by a second bulk pause (a paused subscription paused again takes the
 * `resumeAt` sent), whose completion must come before `resumeAt`. The margin is three times what the
 * first pause took (at least MIN_MARGIN_MS), so it follows the machine's load of the moment rather
 * than another axis's drain. A `resumeAt` chosen before the pause was applied measured, on a loaded
 * machine, resumes of subscriptions the pause had not reached yet.
 */
import type { Db } from 'mongodb';
import { parseRfc3339 } from '../src/lib/clock.js';

/** The least time between the moment `resumeAt` is chosen and `resumeAt`. */
export const MIN_MARGIN_MS = 5_000;
export interface ScheduleLagLimits {
  /** How long the set-up's pause may take to be applied. */
  readonly pauseWithinMs: number;
  /** How long the subscriptions may take to resume, all of them, after `resumeAt`. */
  readonly resumesWithinMs: number;
}

const LIMITS: ScheduleLagLimits = { pauseWithinMs: 300_000, resumesWithinMs: 300_000 };

/** What (e) needs of the service: its workers, started and drained here. */
export interface ScheduleLagService {
  readonly workers: { start(): Promise<void>; stop(deadlineMs: number): Promise<void> };
}

export interface ScheduleLag {
  readonly scheduleResumed: number;
  readonly scheduleLagP50Ms: number;
  readonly scheduleLagP99Ms: number;
  /** From the first pause's 202 to its completion, which the margin is three times of. */
  readonly schedulePauseAppliedMs: number;
  /** The `resumeAt` every subscription had. */
  readonly scheduleResumeAt: string;
  /** From the moment `resumeAt` was chosen to `resumeAt`. */
  readonly scheduleMarginMs: number;
  /** How long before `resumeAt` every subscription had it: the set-up's slack (always > 0). */
  readonly scheduleSlackMs: number;
}

/** The set-up failed to reach the state the axis measures: the run has no comparable (e). */
export class ScheduleLagNotComparable extends Error {
  override readonly name = 'ScheduleLagNotComparable';
}

export function percentile(xs: readonly number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface BulkAnswer {
  readonly requestId: string;
  readonly acceptedCount: number;
}

async function postBulkPause(baseUrl: string, apiKey: string, ids: readonly string[], resumeAt?: string): Promise<BulkAnswer> {
  const res = await fetch(`${baseUrl}/v2/subscriptions/bulk/pause`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ subscriptions: ids, ...(resumeAt ? { resumeAt } : {}) }),
  });
  if (res.status !== 202) throw new ScheduleLagNotComparable(`(e) the bulk pause answered ${res.status}: ${await res.text()}`);
  const answer = (await res.json()) as BulkAnswer;
  if (answer.acceptedCount !== ids.length)
    throw new ScheduleLagNotComparable(`(e) the bulk pause accepted ${answer.acceptedCount} of ${ids.length}`);
  return answer;
}

/**
 * The request's completedAt (the moment its last command was applied, in microseconds), read by
 * _id every 100 ms: counting the subscriptions every poll would take the engine's time from the
 * commands it waits for. Then its counts, once, through the API: every command applied or a no-op.
 */
async function completion(db: Db, baseUrl: string, apiKey: string, requestId: string, within: number): Promise<bigint> {
  const requests = db.collection<{ completedAt: string | null }>('bulkRequests');
  const until = Date.now() + within;
  let completedAt: string | null | undefined;
  while (
    !(completedAt = (
      await requests.findOne({ _id: requestId as never, completedAt: { $ne: null } }, { projection: { _id: 0, completedAt: 1 } })
    )?.completedAt)
  ) {
    if (Date.now() > until) throw new ScheduleLagNotComparable(`(e) bulk request ${requestId} not completed within ${within / 1000} s`);
    await sleep(100);
  }
  const res = await fetch(`${baseUrl}/v2/bulk-requests/${requestId}`, { headers: { 'x-api-key': apiKey } });
  const { counts } = (await res.json()) as { counts: Record<'pending' | 'applied' | 'noop' | 'skipped' | 'failed', number> };
  if (counts.pending + counts.skipped + counts.failed > 0)
    throw new ScheduleLagNotComparable(`(e) bulk request ${requestId} completed with ${JSON.stringify(counts)}`);
  return parseRfc3339(completedAt)!;
}

/**
 * (e) on these subscriptions (all `fulfilled`, of the merchant whose key is `apiKey`): the lag of
 * each scheduled resume, its modifiedAt minus `resumeAt`. Throws ScheduleLagNotComparable where the
 * state is not reached: a pause not applied, a `resumeAt` reached before every subscription had it,
 * or resumes missing.
 */
export async function benchScheduleLag(
  db: Db,
  service: ScheduleLagService,
  baseUrl: string,
  apiKey: string,
  ids: readonly string[],
  { pauseWithinMs, resumesWithinMs }: ScheduleLagLimits = LIMITS,
): Promise<ScheduleLag> {
  const subscriptions = db.collection('subscriptions');
  await service.workers.start();
  try {
    const pauseStart = Date.now();
    const pause = await postBulkPause(baseUrl, apiKey, ids);
    const pausedAt = Number((await completion(db, baseUrl, apiKey, pause.requestId, pauseWithinMs)) / 1000n);
    const paused = await subscriptions.countDocuments({ _id: { $in: ids as never[] }, status: 'paused' });
    if (paused !== ids.length) throw new ScheduleLagNotComparable(`(e) the bulk pause completed with ${paused} of ${ids.length} paused`);

    const schedulePauseAppliedMs = pausedAt - pauseStart;
    const chosenAt = Date.now();
    const scheduleMarginMs = Math.max(MIN_MARGIN_MS, 3 * schedulePauseAppliedMs);
    const resumeAt = chosenAt + scheduleMarginMs;
    const scheduleResumeAt = new Date(resumeAt).toISOString();
    const scheduled = await postBulkPause(baseUrl, apiKey, ids, scheduleResumeAt);
    // Waited for past resumeAt too, so that a late completion is reported with how late it was.
    const scheduledAt = Number((await completion(db, baseUrl, apiKey, scheduled.requestId, scheduleMarginMs + pauseWithinMs)) / 1000n);
    const scheduleSlackMs = resumeAt - scheduledAt;
    if (scheduleSlackMs <= 0)
      throw new ScheduleLagNotComparable(
        `(e) resumeAt was given to every subscription ${-scheduleSlackMs} ms after it fell due (margin ${scheduleMarginMs} ms)`,
      );

    const resumed = () => subscriptions.countDocuments({ _id: { $in: ids as never[] }, status: 'fulfilled' });
    // Counted every 2 s: each count reads every subscription, and the lag is read from modifiedAt, not from when a count sees it.
    for (const until = resumeAt + resumesWithinMs; (await resumed()) < ids.length; await sleep(2_000)) {
      if (Date.now() > until)
        throw new ScheduleLagNotComparable(
          `(e) ${await resumed()} of ${ids.length} resumed within ${resumesWithinMs / 1000} s of resumeAt`,
        );
    }
    const docs = await subscriptions.find({ _id: { $in: ids as never[] } }, { projection: { modifiedAt: 1 } }).toArray();
    const lags = docs.map((d) => Date.parse(String(d.modifiedAt)) - resumeAt);
    return {
      scheduleResumed: docs.length,
      scheduleLagP50Ms: percentile(lags, 50),
      scheduleLagP99Ms: percentile(lags, 99),
      schedulePauseAppliedMs,
      scheduleResumeAt,
      scheduleMarginMs,
      scheduleSlackMs,
    };
  } finally {
    await service.workers.stop(30_000);
  }
}
