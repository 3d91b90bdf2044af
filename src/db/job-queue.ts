/**
 * The one Agenda queue of the service (Agenda v6 in the service's own database): a producer side
 * that stores jobs (`enqueue`), a consumer side that runs them through the handler it is given
 * (`consume`), renewing each running job's lock, and drains them on stop. The bulk chunks
 * (src/bulk/bulk.queue.ts) and the webhook deliveries (src/webhooks/delivery.queue.ts) are two
 * queues of this, each in a collection of its own.
 *
 * A worker that dies holding a job loses its lock after `lockLifetimeMs` and another takes the
 * job; a job that throws is retried by the queue's backoff policy (src/retry-policies.ts), if it has one.
 */
import { Agenda, backoffStrategies, InMemoryNotificationChannel, toJobId, type Job } from 'agenda';
import { MongoBackend, type MongoBackendConfig } from '@agendajs/mongo-backend';
import type { Db } from 'mongodb';
import { AgendaJobs } from './agenda-jobs.js';
import type { Backoff } from '../lib/retry.js';
import { partsOf } from '../lib/parts.js';
import { Periodic } from '../lib/periodic.js';
import type { Logger } from '../logger.js';

export interface JobQueueOptions {
  /** Jobs one process runs at once; 0 runs none (an HTTP-only process). */
  readonly concurrency: number;
  readonly lockLifetimeMs: number;
  readonly pollIntervalMs: number;
}

/** What differs between the queues. */
export interface JobKind {
  readonly collection: string;
  readonly jobName: string;
  /** For the queue's log lines ("bulk workers", "webhook deliveries"). */
  readonly what: string;
  /** Jobs locked ahead of each running one (1: none ahead). */
  readonly lockedPerSlot: number;
  /** How a job that threw is retried; none: it is not (its handler records what failed). */
  readonly backoff?: Backoff;
  /**
   * Whether jobs are taken at once rather than at the next poll: when this process queues some,
   * and as each run ends (the next waiting one is locked while the slot is still busy). Otherwise a
   * queued job waits up to `pollIntervalMs`, and a slot whose locked jobs ran out idles until then.
   */
  readonly wakeOnWork?: boolean;
}

/**
 * What Agenda 6 reports when a job this process holds is no longer stored, on saving its state at
 * the start of a run. Jobs leave the collection only when a run completes them (removeOnComplete),
 * so another run completed it: another process that locked it too (FerretDB's conditional update
 * is not atomic across processes, docs/design.md §8) or, under load, this process again after
 * the lock of a job it held in its queue expired. Running a job twice is safe (bulk.run.ts,
 * webhooks.worker.ts); nothing is left to do, so it is logged at info level, not as an error.
 */
const ALREADY_COMPLETED = /cannot be updated in the database, maybe it does not exist anymore/;

/**
 * Agenda 6.2 starts its backend's connect, which creates the jobs index, without a handler on it
 * (`backend.connect().then(...)`): a connect that fails (the database refuses at start, or the
 * client closes while it is under way) was an unhandled rejection, and Agenda's `ready`, which every
 * enqueue awaits, never resolved. Here a failed connect is reported, and the queue goes on without
 * the index, which only makes its job queries slower; the next start creates it.
 */
class ReportingMongoBackend extends MongoBackend {
  constructor(
    config: MongoBackendConfig,
    private readonly failed: (error: unknown) => void,
  ) {
    super(config);
  }

  override async connect(): Promise<void> {
    try {
      await super.connect();
    } catch (error) {
      this.failed(error);
    }
  }
}

/**
 * Jobs saved at once, and job documents per insert: enough for a 3000-id bulk request's 30 chunks
 * in one go, and few enough on any engine that a dispatch of up to 1000 chunks leaves the
 * background pool to the queue's own queries and the running jobs, and that its first jobs are
 * stored, and run, before its last are sent.
 */
const ENQUEUE_AT_ONCE = 32;

export class JobQueue<Data extends object> {
  private readonly agenda: Agenda;
  /** The queue's job documents, for what Agenda's API does not do (src/db/agenda-jobs.ts). */
  readonly jobs: AgendaJobs<Data>;
  private consuming = false;
  /** Agenda's in-process notifications (kind.wakeOnWork): connected by agenda.start(), so only in a process that takes jobs. */
  private readonly wakeUps: InMemoryNotificationChannel | undefined;

  constructor(
    db: Db,
    private readonly log: Logger,
    private readonly kind: JobKind,
    private readonly options: JobQueueOptions,
  ) {
    this.jobs = new AgendaJobs<Data>(db, kind);
    const slots = Math.max(options.concurrency, 1);
    this.wakeUps = kind.wakeOnWork ? new InMemoryNotificationChannel() : undefined;
    this.agenda = new Agenda({
      ...(this.wakeUps ? { notificationChannel: this.wakeUps } : {}),
      backend: new ReportingMongoBackend({ mongo: db, collection: kind.collection }, (error) =>
        log.warn(
          { err: error, queue: kind.what },
          'job queue index not created; the queue works without it, and the next start creates it',
        ),
      ),
      processEvery: options.pollIntervalMs,
      defaultLockLifetime: options.lockLifetimeMs,
      maxConcurrency: slots,
      ...(kind.lockedPerSlot > 1 ? { lockLimit: slots * kind.lockedPerSlot } : {}),
      removeOnComplete: true,
    });
    this.agenda.on('error', (error: Error) => {
      if (ALREADY_COMPLETED.test(error.message))
        this.log.info(
          { reason: error.message },
          `${kind.what}: a job held here was completed by another run meanwhile; nothing left to do`,
        );
      else this.log.error({ err: error }, `${kind.what}: job queue error`);
    });
  }

  /**
   * Stores one job per item of `data`, due at `at` (default now); resolves once every one is
   * durable. ENQUEUE_AT_ONCE at a time: a bulk request by filter has up to 1000 chunks, whose
   * saves all at once would hold the database from the queue's own queries (on one writer until
   * they time out: docs/engine.md#the-figures-behind-the-workarounds; docs/design.md §6a).
   */
  async enqueue(data: readonly Data[], at?: Date): Promise<void> {
    await this.agenda.ready;
    for (const part of partsOf(data, ENQUEUE_AT_ONCE)) {
      await Promise.all(
        part.map((item) => {
          const job = this.agenda.create<Data>(this.kind.jobName, item);
          if (at) job.schedule(at);
          return job.save();
        }),
      );
    }
  }

  /**
   * As `enqueue`, due now, but ENQUEUE_AT_ONCE jobs in one insert, where Agenda saves each job
   * with an insert of its own: one write per part, not per job, on a bulk request's way to its
   * first chunk (docs/performance.md#the-figures-behind-the-codes-choices). Each document is the one Agenda's own save writes
   * (`AgendaJobs.insertNew`), so Agenda finds, locks and runs these jobs as any other.
   */
  async enqueueTogether(data: readonly Data[]): Promise<void> {
    await this.agenda.ready;
    for (const part of partsOf(data, ENQUEUE_AT_ONCE)) {
      await this.jobs.insertNew(part.map((item) => this.agenda.create<Data>(this.kind.jobName, item).toJson(true)));
      this.wake();
    }
  }

  /**
   * Has this process's Agenda lock due jobs now rather than at its next poll (kind.wakeOnWork, in
   * a process taking jobs; elsewhere nothing). Agenda locks none beyond its lock limit, so a wake
   * while its slots are busy and a job is locked ahead costs no query.
   */
  private wake(): void {
    if (this.wakeUps?.state !== 'connected') return;
    // No nextRunAt: Agenda ignores a notification of a job due after its next scan, and takes the scan's time as passed once it has.
    this.wakeUps
      .publish({ jobId: toJobId('wake'), jobName: this.kind.jobName, nextRunAt: null, priority: 0, timestamp: new Date() })
      .catch((error: unknown) => this.log.warn({ err: error }, `${this.kind.what}: wake-up not delivered; the next poll takes the jobs`));
  }

  /** Whether this process is taking jobs: false for an HTTP-only process, or once stopping. */
  get isConsuming(): boolean {
    return this.consuming;
  }

  /** Runs `run` for each due job, renewing its lock meanwhile; `giveUp` once a job's retries are spent. */
  async consume(run: (data: Data) => Promise<void>, giveUp?: (data: Data, error: Error) => Promise<void>): Promise<void> {
    await this.agenda.ready;
    if (this.options.concurrency === 0) return;
    const { concurrency, lockLifetimeMs } = this.options;
    const { jobName, backoff, lockedPerSlot } = this.kind;
    this.agenda.define<Data>(jobName, (job) => this.run(job, run), {
      concurrency,
      // Jobs locked ahead of each running one: Agenda starts a locked job as soon as a slot frees,
      // but locks new ones only every poll interval, which would idle a slot between jobs.
      lockLimit: concurrency * lockedPerSlot,
      lockLifetime: lockLifetimeMs,
      ...(backoff ? { backoff: backoffStrategies.exponential(backoff) } : {}),
    });
    if (giveUp) {
      this.agenda.on(`retry exhausted:${jobName}`, (error: Error, job: { attrs: { data: unknown } }) => {
        giveUp(job.attrs.data as Data, error).catch((e: unknown) =>
          this.log.error({ err: e }, `${this.kind.what}: could not record a job that failed for good`),
        );
      });
    }
    await this.agenda.start();
    this.consuming = true;
  }

  /** Runs `work` for a job, renewing its lock meanwhile, so that a slow job is not taken by a second worker. */
  private async run(job: Job<Data>, work: (data: Data) => Promise<void>): Promise<void> {
    const renew = new Periodic(() => job.touch(), {
      everyMs: Math.max(this.options.lockLifetimeMs / 3, 100),
      jitter: 0,
      failed: (error) => this.log.warn({ err: error }, 'could not renew a job lock'),
    });
    renew.start();
    try {
      await work(job.attrs.data);
    } finally {
      void renew.stop();
      // The next waiting job is locked now, while this one completes, not at the next poll.
      this.wake();
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
  async stop(deadlineMs: number): Promise<void> {
    if (!this.consuming) return;
    this.consuming = false;
    const idle = new AbortController();
    const watch = new Periodic(
      async () => {
        if ((await this.agenda.getRunningStats()).lockedJobs === 0) idle.abort();
      },
      // The stats fail once drain() has finished.
      { everyMs: 50, jitter: 0, failed: () => idle.abort() },
    );
    watch.start();
    try {
      const result = await this.agenda.drain({ timeout: deadlineMs, signal: idle.signal, closeConnection: false });
      // With the watch above, reaching the deadline means jobs are still held (running, or locked
      // and not started), which a check of `running` alone would miss.
      if (result.timedOut)
        this.log.warn({ running: result.running }, `${this.kind.what}: still busy at the deadline; their jobs will be picked up again`);
    } finally {
      void watch.stop();
    }
  }
}
