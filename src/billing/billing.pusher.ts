/**
 * Sends the recorded pushes to Stripe (docs/billing.md "What goes to Stripe"): each subscription's
 * in the order of its changes, several subscriptions at once, each call with the event's id as its
 * `Idempotency-Key`. A 429, a 5xx or no answer is tried again with backoff for at least a day;
 * another 4xx fails the push with Stripe's message. Runs in worker processes.
 */
import type { Logger } from '../logger.js';
import { Periodic } from '../lib/periodic.js';
import { metrics } from '../observability/metrics.js';
import type { BillingPushesRepository, Push, PushUpdate } from './billing-pushes.repository.js';
import type { BillingSyncRepository, SyncChange } from './billing-sync.repository.js';
import { nowTimestamp } from '../lib/clock.js';
import type { StripeApi } from './stripe.client.js';
import type { PushCredentials } from './stripe-connections.service.js';

/** How often an idle pusher looks for due pushes (a push recorded by this process wakes it at once). */
const POLL_MS = 1_000;
/** How long a pusher holds the pushes it took: past it (a killed process), another takes them again. */
const LEASE_MS = 60_000;
/** Pending pushes read per round, in order; each subscription's oldest is taken. */
const WINDOW = 2_000;
/** Pushes taken at once: sent well within the lease. */
const BATCH = 256;
/** Calls to Stripe at once. */
const CONCURRENCY = 16;
/** Retries back off from 1 s, doubling, to this; a push keeps being retried for RETRY_FOR_MS. */
const RETRY_CAP_MS = 30_000;
const RETRY_FOR_MS = 25 * 60 * 60_000;

export interface PushOutcomes {
  /** Told of pushes that failed for good, to show on the subscription, count and announce. */
  failed(pushes: readonly (Push & { readonly error: string })[]): Promise<void>;
}

export class BillingPusher {
  private readonly log: Logger;
  private readonly rounds: Periodic;
  private again = false;

  constructor(
    private readonly pushes: BillingPushesRepository,
    private readonly credentials: (merchantId: string) => Promise<PushCredentials | undefined>,
    private readonly stripe: StripeApi,
    private readonly sync: BillingSyncRepository,
    log: Logger,
    private readonly outcomes?: PushOutcomes,
  ) {
    this.log = log.child({ component: 'billing' });
    this.rounds = new Periodic(() => this.round(), {
      everyMs: POLL_MS,
      atStart: true,
      failed: (error) => this.log.warn({ err: error }, 'billing pushes round failed; tried again shortly'),
    });
  }

  start(): void {
    this.rounds.start();
  }

  async stop(): Promise<void> {
    await this.rounds.stop();
  }

  /** Pushes were recorded: a round now (or right after the one under way). */
  wake(): void {
    if (!this.rounds.running) return;
    this.again = true;
    void this.rounds.runNow();
  }

  private async round(): Promise<void> {
    for (;;) {
      this.again = false;
      const taken = await this.pushes.claimHeads(WINDOW, BATCH, new Date(Date.now() + LEASE_MS));
      if (taken.length > 0) await this.send(taken);
      if (!this.rounds.running || (taken.length === 0 && !this.again)) return;
    }
  }

  /** A subscription is synced once its last push is sent, failed once one failed; pending otherwise (set when recorded). */
  private async recordSync(taken: readonly Push[], updates: readonly PushUpdate[]): Promise<void> {
    const byId = new Map(taken.map((push) => [push.id, push]));
    const sent = updates.filter((u) => u.status === 'sent').map((u) => byId.get(u.id)!);
    const waiting =
      sent.length > 0
        ? await this.pushes.withPending(
            sent.map((p) => p.subscriptionId),
            taken.map((p) => p.id),
          )
        : new Set<string>();
    const at = nowTimestamp();
    const changes: SyncChange[] = [
      ...sent
        .filter((p) => !waiting.has(p.subscriptionId))
        .map((p) => ({ merchantId: p.merchantId, subscriptionId: p.subscriptionId, state: 'synced' as const, at })),
      ...updates
        .filter((u) => u.status === 'failed')
        .map((u) => ({
          merchantId: byId.get(u.id)!.merchantId,
          subscriptionId: byId.get(u.id)!.subscriptionId,
          state: 'failed' as const,
          error: u.error!,
        })),
    ];
    if (changes.length > 0) await this.sync.set(changes);
  }

  private async send(taken: readonly Push[]): Promise<void> {
    const keys = new Map<string, Promise<PushCredentials | undefined>>();
    const updates: PushUpdate[] = [];
    const failed: (Push & { error: string })[] = [];
    let next = 0;
    const one = async (push: Push): Promise<void> => {
      if (!keys.has(push.merchantId)) keys.set(push.merchantId, this.credentials(push.merchantId));
      const connection = await keys.get(push.merchantId)!;
      // Disconnected since: the push is dropped, not failed.
      if (!connection) return void updates.push({ id: push.id, status: 'dropped' });
      const pause = push.action === 'pause' ? { behavior: connection.pauseBehavior, resumesAt: push.resumesAt } : null;
      const outcome = await this.stripe.setPauseCollection(connection.apiKey, push.externalId, pause, push.id);
      if (outcome.kind === 'sent') {
        updates.push({ id: push.id, status: 'sent' });
        this.log.debug({ eventId: push.id, subscriptionId: push.subscriptionId, action: push.action }, 'billing push sent');
      } else if (outcome.kind === 'retry' && Date.now() - push.createdAt.getTime() < RETRY_FOR_MS) {
        const retryAt = new Date(Date.now() + Math.min(1_000 * 2 ** Math.max(push.attempts - 1, 0), RETRY_CAP_MS));
        updates.push({ id: push.id, status: 'pending', error: outcome.error, retryAt });
      } else {
        updates.push({ id: push.id, status: 'failed', error: outcome.error });
        failed.push({ ...push, error: outcome.error });
        this.log.warn({ eventId: push.id, subscriptionId: push.subscriptionId, error: outcome.error }, 'billing push failed');
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENCY, taken.length) }, async () => {
        while (next < taken.length) await one(taken[next++]!);
      }),
    );
    // The pushes are marked finished last: a process killed before that leaves them leased, and the
    // next pusher sends them again, records their sync state again and sends a failure's event as
    // it was stored the first time, so that a failure is never marked without its event (docs/billing.md).
    await this.recordSync(taken, updates);
    if (failed.length > 0) await this.outcomes?.failed(failed);
    await this.pushes.record(updates);
    for (const { status } of updates) metrics()?.billingPushes.inc({ outcome: status === 'pending' ? 'retrying' : status });
  }
}
