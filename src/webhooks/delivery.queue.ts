/**
 * Webhook deliveries as Agenda jobs (in `webhookJobs`), one per batch of deliveries rather than
 * one per delivery: a 3000-id bulk command makes a few jobs, not 3000. Jobs survive restarts and
 * are shared by every worker process; a worker that dies holding one loses its lock after
 * `lockLifetimeMs` and another takes it. The deliveries themselves are documents
 * (deliveries.repository.ts): a job only names them.
 */
import { Agenda, type Job } from 'agenda';
import { MongoBackend } from '@agendajs/mongo-backend';
import type { Db } from 'mongodb';
import { drainAgenda, runRenewingLock } from '../lib/agenda-jobs.js';
import type { Logger } from '../logger.js';

const JOB_NAME = 'webhook-deliveries';
/** Deliveries per job. */
export const DELIVERY_BATCH = 500;

interface DeliveryJobData {
  deliveryIds: string[];
  /** The deliveries' merchant, so that their reads and writes name it (absent on jobs queued by earlier versions). */
  merchantId?: string;
}

export interface DeliveryQueueOptions {
  /** Batches one process sends at once; 0: none (an HTTP-only process). */
  readonly concurrency: number;
  readonly pollIntervalMs: number;
  readonly lockLifetimeMs: number;
}

export class DeliveryQueue {
  private readonly agenda: Agenda;
  private consuming = false;

  constructor(
    db: Db,
    private readonly log: Logger,
    private readonly options: DeliveryQueueOptions,
  ) {
    this.agenda = new Agenda({
      backend: new MongoBackend({ mongo: db, collection: 'webhookJobs' }),
      processEvery: options.pollIntervalMs,
      defaultLockLifetime: options.lockLifetimeMs,
      maxConcurrency: Math.max(options.concurrency, 1),
      removeOnComplete: true,
    });
    this.agenda.on('error', (error: Error) => this.log.error({ err: error }, 'webhook queue error'));
  }

  /** Stores jobs for these deliveries, due at `at` (default now), DELIVERY_BATCH per job. */
  async enqueue(merchantId: string, deliveryIds: readonly string[], at?: Date): Promise<void> {
    await this.agenda.ready;
    const jobs: Promise<unknown>[] = [];
    for (let i = 0; i < deliveryIds.length; i += DELIVERY_BATCH) {
      const job = this.agenda.create<DeliveryJobData>(JOB_NAME, { merchantId, deliveryIds: deliveryIds.slice(i, i + DELIVERY_BATCH) });
      if (at) job.schedule(at);
      jobs.push(job.save());
    }
    await Promise.all(jobs);
  }

  /** Runs `send` for each due job, renewing its lock while it runs (a batch may take a while). */
  async consume(send: (deliveryIds: readonly string[], merchantId: string | undefined) => Promise<void>): Promise<void> {
    await this.agenda.ready;
    if (this.options.concurrency === 0) return;
    const { concurrency, lockLifetimeMs } = this.options;
    this.agenda.define<DeliveryJobData>(JOB_NAME, (job) => this.run(job, send), { concurrency, lockLimit: concurrency, lockLifetime: lockLifetimeMs });
    await this.agenda.start();
    this.consuming = true;
  }

  private run(job: Job<DeliveryJobData>, send: (deliveryIds: readonly string[], merchantId: string | undefined) => Promise<void>): Promise<void> {
    return runRenewingLock(job, this.options.lockLifetimeMs, this.log, () => send(job.attrs.data.deliveryIds, job.attrs.data.merchantId));
  }

  async stop(deadlineMs: number): Promise<void> {
    if (!this.consuming) return;
    this.consuming = false;
    await drainAgenda(this.agenda, deadlineMs, this.log, 'webhook deliveries');
  }
}
