/**
 * Bulk commands on Agenda v6, in the service's own database.
 *
 * One Agenda job carries a chunk of up to CHUNK_SIZE commands rather than one job per command.
 * Agenda has no bulk create, and writing its job documents ourselves with insertMany would tie
 * us to a storage schema that is Agenda's to change. With chunks, a 3000-id request is 30
 * small inserts made in parallel through Agenda's own API, and a worker applies a chunk with one
 * conditional updateMany instead of 100 round trips. Every command's outcome is still logged.
 *
 * Jobs are durable before the 202; a worker that dies holding one loses its lock after
 * `lockLifetimeMs` and another worker picks the chunk up; applying it again changes nothing.
 */
import { Agenda, backoffStrategies, type Job } from 'agenda';
import { MongoBackend } from '@agendajs/mongo-backend';
import type { Db } from 'mongodb';
import type { Logger } from '../logger.js';
import type { Operation } from '../subscriptions/subscriptions.rules.js';
import type { CommandOutcome, SubscriptionsService } from '../subscriptions/subscriptions.service.js';

export const JOB_NAME = 'bulk-commands';
export const JOBS_COLLECTION = 'bulkJobs';
export const CHUNK_SIZE = 100;
/** Commands whose own update failed are retried in a new chunk this many times. */
const MAX_COMMAND_ATTEMPTS = 5;

export interface BulkCommandChunk {
  readonly requestId: string;
  readonly merchantId: string;
  readonly operation: Operation;
  readonly subscriptionIds: readonly string[];
  readonly attempt: number;
}

export interface QueueOptions {
  /** Chunks one process applies at once; 0 runs no worker (an HTTP-only process). */
  readonly concurrency: number;
  readonly lockLifetimeMs: number;
  readonly pollIntervalMs: number;
}

function commandRetryDelayMs(attempt: number): number {
  return Math.min(500 * 2 ** (attempt - 1), 30_000);
}

export class BulkQueue {
  private readonly agenda: Agenda;
  private readonly log: Logger;
  private running = false;

  constructor(
    db: Db,
    private readonly subscriptions: SubscriptionsService,
    log: Logger,
    private readonly options: QueueOptions,
  ) {
    this.log = log.child({ component: 'bulk' });
    this.agenda = new Agenda({
      backend: new MongoBackend({ mongo: db, collection: JOBS_COLLECTION }),
      processEvery: options.pollIntervalMs,
      defaultLockLifetime: options.lockLifetimeMs,
      maxConcurrency: Math.max(options.concurrency, 1),
      removeOnComplete: true,
    });
    this.agenda.define<BulkCommandChunk>(JOB_NAME, (job) => this.process(job), {
      concurrency: Math.max(options.concurrency, 1),
      lockLimit: Math.max(options.concurrency, 1),
      lockLifetime: options.lockLifetimeMs,
      backoff: backoffStrategies.exponential({ delay: 500, factor: 2, maxDelay: 30_000, maxRetries: 10, jitter: 0.2 }),
    });
    this.agenda.on(`retry exhausted:${JOB_NAME}`, (error, job) => this.recordExhausted(job.attrs.data as BulkCommandChunk, error));
    this.agenda.on('error', (error: Error) => this.log.error({ err: error }, 'job queue error'));
  }

  /** Stores the chunks; resolves once every one is durable. */
  async enqueue(chunks: readonly BulkCommandChunk[], runAt?: Date): Promise<void> {
    await Promise.all(
      chunks.map((chunk) => {
        const job = this.agenda.create(JOB_NAME, chunk);
        if (runAt) job.schedule(runAt);
        return job.save();
      }),
    );
    for (const chunk of chunks) {
      for (const subscriptionId of chunk.subscriptionIds) {
        this.log.info(
          { requestId: chunk.requestId, subscriptionId, operation: chunk.operation, outcome: 'queued', attempt: chunk.attempt },
          'bulk command queued',
        );
      }
    }
  }

  /** Whether this process applies bulk commands: false for an HTTP-only process, or once stopping. */
  get workersRunning(): boolean {
    return this.running;
  }

  async startWorkers(): Promise<void> {
    await this.agenda.ready;
    if (this.options.concurrency === 0) return;
    await this.agenda.start();
    this.running = true;
    this.log.info({ concurrency: this.options.concurrency, lockLifetimeMs: this.options.lockLifetimeMs }, 'bulk workers started');
  }

  /**
   * Lets in-flight chunks finish within the deadline. Chunks still running at the deadline, and
   * chunks this process had locked but not started, are picked up again by any worker once their
   * lock lifetime has passed (re-applying changes nothing).
   */
  async stop(deadlineMs: number): Promise<void> {
    if (!this.running) return;
    this.running = false;
    // While drain() waits, this process still runs the chunks it has already locked, one after
    // another; it fetches no new ones. But Agenda 6.2's drain() can miss the end: a job emits
    // 'complete' before it removes itself (removeOnComplete) and only then leaves the running
    // list, so drain() may wait for an event that never comes, until the deadline. We watch the
    // locked count ourselves (running chunks are locked too) and end the wait when it is zero,
    // that is when nothing this process holds is left, not merely between two chunks.
    const idle = new AbortController();
    const watch = setInterval(() => {
      this.agenda.getRunningStats().then(
        (stats) => (stats.lockedJobs === 0 ? idle.abort() : undefined),
        () => idle.abort(), // drain() has already finished
      );
    }, 50);
    try {
      const result = await this.agenda.drain({ timeout: deadlineMs, signal: idle.signal, closeConnection: false });
      // With the watch above, reaching the deadline means chunks are still held (running, or
      // locked and not started), which a check of `running` alone would miss.
      if (result.timedOut) {
        this.log.warn({ running: result.running }, 'bulk workers still busy at the deadline; their chunks will be picked up again');
      }
    } finally {
      clearInterval(watch);
    }
  }

  private async process(job: Job<BulkCommandChunk>): Promise<void> {
    const chunk = job.attrs.data;
    const outcomes = await this.subscriptions.applyMany(chunk.merchantId, chunk.subscriptionIds, chunk.operation);
    const failed: string[] = [];
    for (const [subscriptionId, result] of outcomes) {
      this.logOutcome(chunk, subscriptionId, result);
      if (result.outcome === 'failed') failed.push(subscriptionId);
    }
    if (failed.length > 0) await this.retryCommands(chunk, failed);
  }

  private logOutcome(chunk: BulkCommandChunk, subscriptionId: string, result: CommandOutcome): void {
    const line = { requestId: chunk.requestId, subscriptionId, operation: chunk.operation, attempt: chunk.attempt, ...result };
    if (result.outcome === 'failed') this.log.warn(line, 'bulk command failed');
    else this.log.info(line, `bulk command ${result.outcome}`);
  }

  private async retryCommands(chunk: BulkCommandChunk, failed: string[]): Promise<void> {
    if (chunk.attempt >= MAX_COMMAND_ATTEMPTS) {
      for (const subscriptionId of failed) {
        this.log.error(
          { requestId: chunk.requestId, subscriptionId, operation: chunk.operation, outcome: 'failed', attempt: chunk.attempt },
          'bulk command failed for good after its last attempt',
        );
      }
      return;
    }
    const retry = { ...chunk, subscriptionIds: failed, attempt: chunk.attempt + 1 };
    await this.enqueue([retry], new Date(Date.now() + commandRetryDelayMs(chunk.attempt)));
  }

  private recordExhausted(chunk: BulkCommandChunk, error: Error): void {
    for (const subscriptionId of chunk.subscriptionIds) {
      this.log.error(
        { requestId: chunk.requestId, subscriptionId, operation: chunk.operation, outcome: 'failed', err: error },
        'bulk command failed for good: its chunk kept failing',
      );
    }
  }
}
