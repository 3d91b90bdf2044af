/**
 * Webhook deliveries as jobs (src/db/job-queue.ts, in `webhookJobs`), one per batch of deliveries
 * rather than one per delivery: a 3000-id bulk command makes a few jobs, not 3000. Jobs survive
 * restarts and are shared by every worker process; a worker that dies holding one loses its lock
 * after `lockLifetimeMs` and another takes it. The deliveries themselves are documents
 * (deliveries.repository.ts): a job only names them. A failed delivery is retried by a job of its
 * own (webhooks.worker.ts), not by the queue.
 */
import type { Db } from 'mongodb';
import { JobQueue, type JobQueueOptions } from '../db/job-queue.js';
import type { Logger } from '../logger.js';

/** Deliveries per job. */
export const DELIVERY_BATCH = 500;

interface DeliveryJobData {
  deliveryIds: string[];
  /** Sent one at a time in this order, then `then` queued as the next job (a replay, which promises order). */
  inOrder?: boolean;
  then?: string[];
  /** The deliveries' merchant, so that their reads and writes name it. */
  merchantId: string;
}

export type DeliveryQueueOptions = JobQueueOptions;

export class DeliveryQueue {
  private readonly queue: JobQueue<DeliveryJobData>;

  constructor(db: Db, log: Logger, options: DeliveryQueueOptions) {
    this.queue = new JobQueue(
      db,
      log,
      { collection: 'webhookJobs', jobName: 'webhook-deliveries', what: 'webhook deliveries', lockedPerSlot: 1 },
      options,
    );
  }

  /** Stores jobs for these deliveries, due at `at` (default now), DELIVERY_BATCH per job. */
  async enqueue(merchantId: string, deliveryIds: readonly string[], at?: Date): Promise<void> {
    const jobs: DeliveryJobData[] = [];
    for (let i = 0; i < deliveryIds.length; i += DELIVERY_BATCH)
      jobs.push({ merchantId, deliveryIds: deliveryIds.slice(i, i + DELIVERY_BATCH) });
    await this.queue.enqueue(jobs, at);
  }

  /**
   * Stores one job for the first DELIVERY_BATCH of these deliveries, to be sent one at a time in
   * this order; it carries the rest, queued as the next job once it is done, so that no two jobs of
   * one sequence run at once.
   */
  async enqueueInOrder(merchantId: string, deliveryIds: readonly string[]): Promise<void> {
    if (deliveryIds.length === 0) return;
    await this.queue.enqueue([
      { merchantId, deliveryIds: deliveryIds.slice(0, DELIVERY_BATCH), inOrder: true, then: deliveryIds.slice(DELIVERY_BATCH) },
    ]);
  }

  /** Runs `send` for each due job, renewing its lock while it runs (a batch may take a while). */
  async consume(send: (deliveryIds: readonly string[], merchantId: string, inOrder: boolean) => Promise<void>): Promise<void> {
    await this.queue.consume(async ({ deliveryIds, merchantId, inOrder, then }) => {
      await send(deliveryIds, merchantId, inOrder === true);
      if (then?.length) await this.enqueueInOrder(merchantId, then);
    });
  }

  async stop(deadlineMs: number): Promise<void> {
    await this.queue.stop(deadlineMs);
  }
}
