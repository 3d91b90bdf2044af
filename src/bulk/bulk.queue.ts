/**
 * Agenda v6 in the service's own database, and nothing else: the producer side stores one job per
 * chunk (`enqueue`), the consumer side runs jobs through the handlers it is given (`consume`)
 * and drains them on stop. What a chunk is and how it is applied live in bulk.chunks.ts and
 * bulk.worker.ts.
 *
 * A worker that dies holding a job loses its lock after `lockLifetimeMs` and another takes the
 * job; a job that throws is retried with exponential backoff. Running a chunk twice is safe
 * (bulk.worker.ts), which is what makes both of these harmless.
 */
import { Agenda, backoffStrategies, type Job } from 'agenda';
import { MongoBackend } from '@agendajs/mongo-backend';
import type { Db } from 'mongodb';
import { drainAgenda, runRenewingLock } from '../lib/agenda-jobs.js';
import type { Logger } from '../logger.js';
import { chunked, type ChunkJobData } from './bulk.chunks.js';

export const JOB_NAME = 'bulk-chunk';
export const JOBS_COLLECTION = 'bulkJobs';
/** Job saves sent at once: enough for a 3000-id request's 30 chunks in one go. */
const ENQUEUE_AT_ONCE = 32;

export interface QueueOptions {
  /** Chunks one process applies at once; 0 runs none (an HTTP-only process). */
  readonly concurrency: number;
  readonly lockLifetimeMs: number;
  readonly pollIntervalMs: number;
}

export interface ChunkHandlers {
  /** Applies one chunk; throws to have it retried later. */
  process(chunkId: string): Promise<void>;
  /** Called once a chunk's retries are spent. */
  giveUp(chunkId: string, error: Error): Promise<void>;
}

export class BulkQueue {
  private readonly agenda: Agenda;
  private readonly log: Logger;
  private consuming = false;

  constructor(
    db: Db,
    log: Logger,
    private readonly options: QueueOptions,
  ) {
    this.log = log.child({ component: 'bulk' });
    this.agenda = new Agenda({
      backend: new MongoBackend({ mongo: db, collection: JOBS_COLLECTION }),
      processEvery: options.pollIntervalMs,
      defaultLockLifetime: options.lockLifetimeMs,
      maxConcurrency: Math.max(options.concurrency, 1),
      lockLimit: Math.max(options.concurrency, 1) * 2,
      removeOnComplete: true,
    });
    this.agenda.on('error', (error: Error) => this.log.error({ err: error }, 'job queue error'));
  }

  /**
   * Stores one job per chunk; resolves once every one is durable. ENQUEUE_AT_ONCE at a time: a
   * request by filter has up to 1000 chunks, and 1000 saves at once on FerretDB's one writer held
   * it for a minute, long enough for the job queue's own queries to time out (docs/design.md §6a).
   */
  async enqueue(chunkIds: readonly string[]): Promise<void> {
    await this.agenda.ready;
    for (const part of chunked(chunkIds, ENQUEUE_AT_ONCE)) {
      await Promise.all(part.map((chunkId) => this.agenda.create<ChunkJobData>(JOB_NAME, { chunkId }).save()));
    }
  }

  /** Whether this process is taking jobs: false for an HTTP-only process, or once stopping. */
  get isConsuming(): boolean {
    return this.consuming;
  }

  async consume(handlers: ChunkHandlers): Promise<void> {
    await this.agenda.ready;
    if (this.options.concurrency === 0) return;
    const { concurrency, lockLifetimeMs } = this.options;
    this.agenda.define<ChunkJobData>(JOB_NAME, (job) => this.run(job, handlers), {
      concurrency,
      // One chunk locked ahead of each running one: Agenda starts a locked job as soon as a slot
      // frees, but locks new ones only every poll interval, which would idle a slot between chunks.
      lockLimit: concurrency * 2,
      lockLifetime: lockLifetimeMs,
      backoff: backoffStrategies.exponential({ delay: 500, factor: 2, maxDelay: 30_000, maxRetries: 10, jitter: 0.2 }),
    });
    this.agenda.on(`retry exhausted:${JOB_NAME}`, (error: Error, job: { attrs: { data: unknown } }) => {
      handlers.giveUp((job.attrs.data as ChunkJobData).chunkId, error).catch((e: unknown) => this.log.error({ err: e }, 'could not record a chunk that failed for good'));
    });
    await this.agenda.start();
    this.consuming = true;
    this.log.info({ concurrency, lockLifetimeMs }, 'bulk workers started');
  }

  private run(job: Job<ChunkJobData>, handlers: ChunkHandlers): Promise<void> {
    return runRenewingLock(job, this.options.lockLifetimeMs, this.log, () => handlers.process(job.attrs.data.chunkId));
  }

  /** Lets in-flight chunks finish within the deadline (lib/agenda-jobs.ts). */
  async stop(deadlineMs: number): Promise<void> {
    if (!this.consuming) return;
    this.consuming = false;
    await drainAgenda(this.agenda, deadlineMs, this.log, 'bulk workers');
  }
}
