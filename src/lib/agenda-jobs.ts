/** What every Agenda queue of the service does alike: renewing a running job's lock, and draining on stop. */
import type { Agenda } from 'agenda';
import type { Logger } from '../logger.js';

/**
 * What Agenda 6 throws when a job this process holds is no longer stored, on saving its state at
 * the start of a run. Jobs leave the collection only when a run completes them (removeOnComplete),
 * so another run completed it: another process that locked it too (FerretDB's conditional update
 * is not atomic across processes, docs/design.md §8) or, under load, this process again after
 * the lock of a job it held in its queue expired. Running a job twice is safe (bulk.worker.ts,
 * webhooks.worker.ts); nothing is left to do.
 */
const ALREADY_COMPLETED = /cannot be updated in the database, maybe it does not exist anymore/;

/** Logs the queue's errors; a job that another run already completed is logged as that, at info level. */
export function logQueueErrors(agenda: Agenda, log: Logger, what: string): void {
  agenda.on('error', (error: Error) => {
    if (ALREADY_COMPLETED.test(error.message)) log.info({ reason: error.message }, `${what}: a job held here was completed by another run meanwhile; nothing left to do`);
    else log.error({ err: error }, `${what}: job queue error`);
  });
}

/** Runs `work` for a job, renewing its lock meanwhile, so that a slow job is not taken by a second worker. */
export async function runRenewingLock(job: { touch(): Promise<unknown> }, lockLifetimeMs: number, log: Logger, work: () => Promise<void>): Promise<void> {
  const renew = setInterval(() => {
    job.touch().catch((error: unknown) => log.warn({ err: error }, 'could not renew a job lock'));
  }, Math.max(lockLifetimeMs / 3, 100));
  try {
    await work();
  } finally {
    clearInterval(renew);
  }
}

/**
 * Lets in-flight jobs finish within the deadline. Jobs still running at the deadline, and jobs
 * this process had locked but not started, are taken again by any worker once their lock
 * lifetime has passed.
 *
 * While drain() waits, this process still runs the jobs it has already locked, one after
 * another; it fetches no new ones. But Agenda 6.2's drain() can miss the end: a job emits
 * 'complete' before it removes itself (removeOnComplete) and only then leaves the running list,
 * so drain() may wait for an event that never comes, until the deadline. We watch the locked
 * count ourselves (running jobs are locked too) and end the wait when it is zero, that is when
 * nothing this process holds is left, not merely between two jobs.
 */
export async function drainAgenda(agenda: Agenda, deadlineMs: number, log: Logger, what: string): Promise<void> {
  const idle = new AbortController();
  const watch = setInterval(() => {
    agenda.getRunningStats().then(
      (stats) => (stats.lockedJobs === 0 ? idle.abort() : undefined),
      () => idle.abort(), // drain() has already finished
    );
  }, 50);
  try {
    const result = await agenda.drain({ timeout: deadlineMs, signal: idle.signal, closeConnection: false });
    // With the watch above, reaching the deadline means jobs are still held (running, or locked
    // and not started), which a check of `running` alone would miss.
    if (result.timedOut) log.warn({ running: result.running }, `${what}: still busy at the deadline; their jobs will be picked up again`);
  } finally {
    clearInterval(watch);
  }
}
