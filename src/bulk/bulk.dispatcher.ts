/**
 * The producer side of bulk commands: turns an accepted request (one document holding every id)
 * into chunk documents and one Agenda job per chunk. Runs after the 202 has been sent, so that
 * nothing can be applied before it; every step is safe to repeat, so a dispatch cut short (the
 * process stopped, the database failed) is simply done again by the sweep that workers run.
 */
import { nowTimestamp, timestampBefore } from '../lib/clock.js';
import { RETRY } from '../retry-policies.js';
import type { Logger } from '../logger.js';
import { chunkIds, chunked } from './bulk.chunks.js';
import type { BulkQueue } from './bulk.queue.js';
import type { BulkRepository, BulkRequest } from './bulk.repository.js';

/** A request accepted this long ago and still not dispatched was left by a process that stopped. */
const STRAGGLER_AFTER_MS = RETRY.undispatchedBulk.delayMs;
const SWEEP_BATCH = 20;

export class BulkDispatcher {
  private readonly log: Logger;
  /**
   * Requests this process is dispatching: a request by filter has up to 1000 chunks, whose
   * dispatch can outlast STRAGGLER_AFTER_MS, and the sweep must not start it a second time here
   * (that would queue every chunk twice: harmless, since a chunk run again changes nothing, but wasted).
   */
  private readonly dispatching = new Set<string>();

  constructor(
    private readonly repository: BulkRepository,
    private readonly queue: BulkQueue,
    log: Logger,
  ) {
    this.log = log.child({ component: 'bulk' });
  }

  /** `accepted`: the request as this process stored it, so that it is not read back (see `dispatchOnce`). */
  async dispatch(merchantId: string, requestId: string, accepted?: BulkRequest): Promise<void> {
    if (this.dispatching.has(requestId)) return;
    this.dispatching.add(requestId);
    try {
      await this.dispatchOnce(merchantId, requestId, accepted);
    } finally {
      this.dispatching.delete(requestId);
    }
  }

  /**
   * The request as this process accepted it, or read back (the sweep's, or a dispatch repeated):
   * the read of a 3000-id request is saved between the 202 and the first chunk
   * (docs/performance.md#the-figures-behind-the-codes-choices). One accepted here is not dispatched elsewhere before STRAGGLER_AFTER_MS;
   * after it (a response that took that long to close), it is read back. Should two processes still dispatch it at once, its chunks
   * are queued twice, which is harmless: a run takes a chunk once (bulk.run.ts), and a chunk run again changes nothing.
   */
  private async dispatchOnce(merchantId: string, requestId: string, accepted?: BulkRequest): Promise<void> {
    // Past STRAGGLER_AFTER_MS the sweep may have dispatched it already: read back, so that its jobs are not queued twice.
    const fresh = accepted && Date.now() - Date.parse(accepted.createdAt) < STRAGGLER_AFTER_MS ? accepted : undefined;
    const request = fresh ?? (await this.repository.findUndispatched(merchantId, requestId));
    if (!request?.subscriptionIds) return;
    const { operation, chunkCount, createdAt, schedule, apiKeyId, holdId, traceparent, unchangedSince } = request;
    const ids = chunkIds(requestId, chunkCount);
    const chunks = chunked(request.subscriptionIds).map((subscriptionIds, i) => ({
      chunkId: ids[i]!,
      requestId,
      merchantId,
      operation,
      subscriptionIds,
      chunkCount,
      outcomes: null,
      ...(schedule ? { schedule } : {}),
      ...(apiKeyId ? { apiKeyId } : {}),
      ...(unchangedSince ? { unchangedSince } : {}),
      ...(holdId ? { holdId } : {}),
    }));
    await this.repository.insertChunks(chunks, createdAt);
    const jobs = chunks.map((c) => ({ chunkId: c.chunkId, commands: c.subscriptionIds.length }));
    await this.queue.enqueue(merchantId, operation, jobs, traceparent);
    await this.repository.markDispatched(merchantId, requestId, nowTimestamp());
    this.log.debug({ requestId, chunks: chunkCount }, 'bulk request dispatched');
  }

  /** Dispatch after the response, logged rather than thrown: the sweep repeats what fails here. */
  dispatchSoon(merchantId: string, requestId: string, accepted?: BulkRequest): void {
    this.dispatch(merchantId, requestId, accepted).catch((error: unknown) =>
      this.log.warn({ err: error, requestId }, 'bulk request not dispatched yet; the workers will'),
    );
  }

  /** Dispatches the requests that a stopped process accepted but did not dispatch. */
  async sweep(): Promise<void> {
    for (const { requestId, merchantId } of await this.repository.undispatchedBefore(timestampBefore(STRAGGLER_AFTER_MS), SWEEP_BATCH)) {
      await this.dispatch(merchantId, requestId);
      this.log.info({ requestId }, 'bulk request dispatched by the sweep');
    }
  }
}
