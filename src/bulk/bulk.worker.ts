/**
 * The consumer side of bulk commands, another entry point beside the HTTP handlers: takes chunk
 * jobs from the queue and runs each (bulk.run.ts) through the same service the handlers call, and
 * in worker processes sweeps up requests a stopped process accepted but did not dispatch.
 */
import type { Logger } from '../logger.js';
import { metrics } from '../observability/metrics.js';
import { inSpan } from '../observability/tracing.js';
import { Periodic } from '../lib/periodic.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import type { BulkDispatcher } from './bulk.dispatcher.js';
import type { BulkQueue, ChunkHandlers } from './bulk.queue.js';
import type { BulkRepository } from './bulk.repository.js';
import { BulkRun, type CompletionHook, type RunContext } from './bulk.run.js';

export type { CompletionHook } from './bulk.run.js';

const SWEEP_EVERY_MS = 5_000;
/** A chunk that ended this recently is taken as one of a request still being applied. */
const BETWEEN_CHUNKS_MS = 250;

export class BulkWorker implements ChunkHandlers {
  private readonly log: Logger;
  private readonly context: RunContext;
  private readonly sweeps: Periodic;
  private active = 0;
  private lastChunkAt = 0;
  private readonly idleListeners: (() => void)[] = [];
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly repository: BulkRepository,
    subscriptions: SubscriptionsService,
    private readonly queue: BulkQueue,
    dispatcher: BulkDispatcher,
    log: Logger,
    completion?: CompletionHook,
  ) {
    this.log = log.child({ component: 'bulk' });
    this.context = { repository, subscriptions, queue, log: this.log, ...(completion ? { completion } : {}) };
    this.sweeps = new Periodic(() => dispatcher.sweep(), {
      everyMs: SWEEP_EVERY_MS,
      failed: (error) => this.log.warn({ err: error }, 'bulk dispatch sweep failed'),
    });
  }

  /** Takes jobs (unless this is an HTTP-only process) and sweeps up requests left undispatched. */
  async start(): Promise<void> {
    await this.queue.consume(this);
    if (!this.queue.isConsuming) return;
    // The chunks this process dispatches are taken here without being read back.
    this.repository.remember();
    this.sweeps.start();
  }

  get running(): boolean {
    return this.queue.isConsuming;
  }

  /** Stops the sweep (waiting for one under way) and lets running chunks finish within the deadline. */
  async stop(deadlineMs: number): Promise<void> {
    await Promise.all([this.sweeps.stop(), this.queue.stop(deadlineMs)]);
  }

  async process(chunkId: string, merchantId: string, traceparent?: string): Promise<void> {
    this.active++;
    const timer = metrics()?.chunkDuration.startTimer();
    try {
      // A child of the request that accepted it, when tracing is on.
      await inSpan('bulk chunk', traceparent, { 'subsvc.chunk': chunkId }, () => BulkRun.of(this.context, merchantId, chunkId, false));
      timer?.();
    } finally {
      this.active--;
      this.lastChunkAt = Date.now();
      this.tellWhenIdle();
    }
  }

  /**
   * Whether this process is applying a bulk request: a chunk is running, or one ended a moment ago
   * (the next locked one starts right after). Background work that can wait (the events relay)
   * waits meanwhile where the engine asks it (relayPauses, src/db/workarounds.ts).
   */
  get busy(): boolean {
    return this.active > 0 || Date.now() - this.lastChunkAt < BETWEEN_CHUNKS_MS;
  }

  /** Called whenever this process may have stopped applying bulk requests (see `busy`). */
  onIdle(listener: () => void): void {
    this.idleListeners.push(listener);
  }

  /** Tells the listeners once `busy` is false: BETWEEN_CHUNKS_MS after the last chunk ended, none running. */
  private tellWhenIdle(): void {
    clearTimeout(this.idleTimer);
    if (this.active > 0) return;
    const left = this.lastChunkAt + BETWEEN_CHUNKS_MS - Date.now();
    if (left <= 0) this.idleListeners.forEach((listener) => listener());
    else this.idleTimer = setTimeout(() => this.tellWhenIdle(), left).unref();
  }

  /** Retries are spent: record what each command reached, the rest as failed, so the request completes. */
  async giveUp(chunkId: string, error: Error, merchantId: string): Promise<void> {
    this.log.error({ err: error, chunkId }, 'bulk chunk failed for good');
    await BulkRun.of(this.context, merchantId, chunkId, true);
  }
}
