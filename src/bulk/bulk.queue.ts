/**
 * The bulk chunks' queue (src/db/job-queue.ts, in `bulkJobs`): the producer side stores one job
 * per chunk (`enqueue`), the consumer side runs jobs through the handlers it is given (`consume`)
 * and drains them on stop. What a chunk is and how a run applies it live in bulk.chunks.ts and
 * bulk.run.ts; a run locks waiting chunks' jobs itself through `jobs` (src/db/agenda-jobs.ts).
 *
 * A worker that dies holding a job loses its lock after `lockLifetimeMs` and another takes the
 * job; a job that throws is retried with exponential backoff (RETRY.bulkChunk). Running a chunk
 * twice is safe (bulk.run.ts), which is what makes both of these harmless.
 */
import type { Db } from 'mongodb';
import { AgendaJobs } from '../db/agenda-jobs.js';
import { JobQueue, type JobQueueOptions } from '../db/job-queue.js';
import { RETRY } from '../retry-policies.js';
import type { Logger } from '../logger.js';
import type { Operation } from '../subscriptions/subscriptions.rules.js';
import type { ChunkJobData } from './bulk.chunks.js';

export const JOB_NAME = 'bulk-chunk';
export const JOBS_COLLECTION = 'bulkJobs';

export type QueueOptions = JobQueueOptions;

const CHUNKS = { collection: JOBS_COLLECTION, jobName: JOB_NAME };

/** The chunks' job documents on `db`: what the fleet status counts (src/fleet/status.ts). */
export const chunkJobsOn = (db: Db): AgendaJobs<ChunkJobData> => new AgendaJobs<ChunkJobData>(db, CHUNKS);

export interface ChunkHandlers {
  /** Applies one chunk; throws to have it retried later. */
  process(chunkId: string, merchantId: string, traceparent?: string): Promise<void>;
  /** Called once a chunk's retries are spent. */
  giveUp(chunkId: string, error: Error, merchantId: string): Promise<void>;
}

export class BulkQueue {
  private readonly queue: JobQueue<ChunkJobData>;
  private readonly log: Logger;

  constructor(
    db: Db,
    log: Logger,
    readonly options: QueueOptions,
  ) {
    this.log = log.child({ component: 'bulk' });
    // One chunk locked ahead of each running one, so that a slot does not idle between chunks.
    this.queue = new JobQueue(
      db,
      this.log,
      { ...CHUNKS, what: 'bulk workers', lockedPerSlot: 2, backoff: RETRY.bulkChunk, wakeOnWork: true },
      options,
    );
  }

  /** The chunks' job documents, where a run locks its companions (bulk.run.ts). */
  get jobs(): AgendaJobs<ChunkJobData> {
    return this.queue.jobs;
  }

  /** Stores one job per chunk, with its operation and size; resolves once every one is durable. */
  async enqueue(
    merchantId: string,
    operation: Operation,
    chunks: readonly { readonly chunkId: string; readonly commands: number }[],
    traceparent?: string,
  ): Promise<void> {
    const trace = traceparent ? { traceparent } : {};
    await this.queue.enqueueTogether(chunks.map(({ chunkId, commands }) => ({ chunkId, merchantId, operation, commands, ...trace })));
  }

  /** Whether this process is taking jobs: false for an HTTP-only process, or once stopping. */
  get isConsuming(): boolean {
    return this.queue.isConsuming;
  }

  async consume(handlers: ChunkHandlers): Promise<void> {
    await this.queue.consume(
      ({ chunkId, merchantId, traceparent }) => handlers.process(chunkId, merchantId, traceparent),
      ({ chunkId, merchantId }, error) => handlers.giveUp(chunkId, error, merchantId),
    );
    if (!this.queue.isConsuming) return;
    const { concurrency, lockLifetimeMs } = this.options;
    this.log.info({ concurrency, lockLifetimeMs }, 'bulk workers started');
  }

  /** Lets in-flight chunks finish within the deadline (db/job-queue.ts). */
  async stop(deadlineMs: number): Promise<void> {
    await this.queue.stop(deadlineMs);
  }
}
