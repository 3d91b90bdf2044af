/**
 * The bulk chunks' queue (src/db/job-queue.ts, in `bulkJobs`): the producer side stores one job
 * per chunk (`enqueue`), the consumer side runs jobs through the handlers it is given (`consume`)
 * and drains them on stop. What a chunk is and how it is applied live in bulk.chunks.ts and
 * bulk.worker.ts.
 *
 * A worker that dies holding a job loses its lock after `lockLifetimeMs` and another takes the
 * job; a job that throws is retried with exponential backoff (RETRY.bulkChunk). Running a chunk
 * twice is safe (bulk.worker.ts), which is what makes both of these harmless.
 */
import type { Db } from 'mongodb';
import { countQueued, JobQueue, oldestQueuedAt, type JobQueueOptions, type LockedJobs } from '../db/job-queue.js';
import { RETRY } from '../lib/retry.js';
import type { Logger } from '../logger.js';
import type { Operation } from '../subscriptions/subscriptions.rules.js';
import type { ChunkJobData } from './bulk.chunks.js';

export const JOB_NAME = 'bulk-chunk';
export const JOBS_COLLECTION = 'bulkJobs';

export type QueueOptions = JobQueueOptions;

const CHUNKS = { collection: JOBS_COLLECTION, jobName: JOB_NAME };
/** Waiting jobs read when looking for a run's companions: enough to fill a chunk with small ones. */
const COMPANIONS_READ = 50;

/** Chunks not finished, fleet-wide, up to `cap`, and when the oldest was queued (src/fleet/status.ts). */
export const chunksQueued = (db: Db, cap: number): Promise<number> => countQueued(db, CHUNKS, cap);
export const oldestChunkAt = (db: Db): Promise<number | undefined> => oldestQueuedAt(db, CHUNKS);

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
    private readonly options: QueueOptions,
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

  /**
   * Locks, for a run applying a chunk of the merchant's `operation`, waiting jobs of chunks of the
   * same merchant and operation holding up to `room` commands in all: its companions (bulk.worker.ts).
   */
  lockCompanions(merchantId: string, operation: Operation, room: number): Promise<LockedJobs<ChunkJobData>> {
    return this.queue.lockWaiting({ merchantId, operation }, COMPANIONS_READ, (waiting) =>
      waiting.filter(({ commands }) => {
        if (commands > room) return false;
        room -= commands;
        return true;
      }),
    );
  }

  /**
   * Whether a chunk of another merchant, or of the other operation, is due (waiting, or locked by a
   * worker ahead of its run or running): a run takes more companions only while none is (bulk.worker.ts).
   */
  othersDue(merchantId: string, operation: Operation): Promise<boolean> {
    return this.queue.anyDue({ $or: [{ 'data.merchantId': { $ne: merchantId } }, { 'data.operation': { $ne: operation } }] });
  }

  /**
   * Renews the companions' locks every third of the lock lifetime until the returned function is
   * called, as Agenda renews the lock of the job running: a run of RUN_COMMANDS commands on a busy
   * database can outlast the lifetime, and its companions would then run a second time meanwhile.
   */
  holdCompanions(locked: LockedJobs<ChunkJobData>): () => void {
    if (locked.jobs.length === 0) return () => undefined;
    const renew = setInterval(
      () => {
        this.queue
          .renewLocked(locked)
          .catch((error: unknown) => this.log.warn({ err: error }, "could not renew bulk chunk companions' locks"));
      },
      Math.max(this.options.lockLifetimeMs / 3, 100),
    );
    return () => clearInterval(renew);
  }

  /** Removes the companions' jobs whose chunks `done` holds, and unlocks the others: they run as usual. */
  async settleCompanions(locked: LockedJobs<ChunkJobData>, done: ReadonlySet<string>): Promise<void> {
    await Promise.all([
      this.queue.removeLocked(locked, ({ chunkId }) => done.has(chunkId)),
      this.queue.unlock(locked, ({ chunkId }) => !done.has(chunkId)),
    ]);
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
