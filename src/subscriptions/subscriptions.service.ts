/**
 * Pause and resume of one subscription, called by the HTTP handlers and, for bulk commands,
 * by the job workers. Business rules only: the request's shape was checked at the edge.
 */
import { randomUUID } from 'node:crypto';
import { nowTimestamp } from '../lib/clock.js';
import { KeyedMutex } from '../lib/keyed-mutex.js';
import type { SubscriptionsRepository } from './subscriptions.repository.js';
import {
  TRANSITIONS,
  InvalidTransitionError,
  SubscriptionNotFoundError,
  decide,
  normaliseId,
  type Operation,
  type Subscription,
  type SubscriptionStatus,
} from './subscriptions.rules.js';

/** A concurrent writer can flip the status between our update and our read; retry that many times. */
const MAX_ATTEMPTS = 5;

/** What one bulk command did (DESIGN.md §4, §6). */
export type CommandOutcome =
  | { readonly outcome: 'applied' | 'noop' }
  | { readonly outcome: 'skipped'; readonly reason: 'cancelled' | 'not_found' }
  | { readonly outcome: 'failed'; readonly reason: string };

export interface SeedOptions {
  readonly merchantId: string;
  readonly count: number;
  readonly status: SubscriptionStatus;
  readonly planId?: string;
  /** The ids to give them (the first `count` are used); random ones where absent. */
  readonly ids?: readonly string[];
}

export class SubscriptionsService {
  private readonly mutex = new KeyedMutex();

  constructor(private readonly repository: SubscriptionsRepository) {}

  /** Applies the operation and returns the subscription as it is afterwards. */
  async apply(merchantId: string, rawId: string, operation: Operation): Promise<Subscription> {
    const id = normaliseId(rawId);
    if (id === undefined) throw new SubscriptionNotFoundError(rawId);
    return this.mutex.run(id, () => this.applyOnce(merchantId, id, rawId, operation));
  }

  private async applyOnce(merchantId: string, id: string, rawId: string, operation: Operation): Promise<Subscription> {
    const { from, to } = TRANSITIONS[operation];
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const changed = await this.repository.transition(merchantId, id, from, to, nowTimestamp());
      if (changed) return changed;
      const current = await this.repository.find(merchantId, id);
      if (!current) throw new SubscriptionNotFoundError(rawId);
      const decision = decide(operation, current.status);
      if (decision === 'noop') return current;
      if (decision === 'reject') throw new InvalidTransitionError(rawId, current.status, operation);
    }
    throw new Error(`subscription ${id} kept changing under ${operation}; gave up after ${MAX_ATTEMPTS} attempts`);
  }

  /**
   * Applies one operation to many subscriptions with the same rules as `apply`: one read, one
   * conditional update of all that can change, and a second read only if another writer raced us.
   */
  async applyMany(merchantId: string, ids: readonly string[], operation: Operation): Promise<Map<string, CommandOutcome>> {
    const outcomes = new Map<string, CommandOutcome>();
    const { from, to } = TRANSITIONS[operation];
    const candidates = this.classify(await this.repository.findMany(merchantId, ids), ids, operation, outcomes);
    const at = nowTimestamp();
    const changed = await this.repository.transitionMany(merchantId, candidates, from, to, at);
    if (changed === candidates.length) {
      for (const id of candidates) outcomes.set(id, { outcome: 'applied' });
      return outcomes;
    }
    for (const s of await this.repository.findMany(merchantId, candidates)) {
      if (s.modifiedAt === at && s.status === to) outcomes.set(s.id, { outcome: 'applied' });
    }
    const raced = candidates.filter((id) => !outcomes.has(id));
    const stillOpen = this.classify(await this.repository.findMany(merchantId, raced), raced, operation, outcomes);
    for (const id of stillOpen) outcomes.set(id, { outcome: 'failed', reason: 'status kept changing; will retry' });
    return outcomes;
  }

  /** Records the outcome of every id that needs no update; returns the ids that do. */
  private classify(
    found: readonly Subscription[],
    ids: readonly string[],
    operation: Operation,
    outcomes: Map<string, CommandOutcome>,
  ): string[] {
    const byId = new Map(found.map((s) => [s.id, s]));
    const toApply: string[] = [];
    for (const id of ids) {
      const subscription = byId.get(id);
      if (!subscription) {
        outcomes.set(id, { outcome: 'skipped', reason: 'not_found' });
        continue;
      }
      try {
        const decision = decide(operation, subscription.status);
        if (decision === 'apply') toApply.push(id);
        else if (decision === 'noop') outcomes.set(id, { outcome: 'noop' });
        else outcomes.set(id, { outcome: 'skipped', reason: 'cancelled' });
      } catch (error) {
        outcomes.set(id, { outcome: 'failed', reason: (error as Error).message });
      }
    }
    return toApply;
  }

  async seed({ merchantId, count, status, planId, ids }: SeedOptions): Promise<Subscription[]> {
    const now = nowTimestamp();
    const subscriptions = Array.from({ length: count }, (_, i) => ({
      id: ids?.[i] ?? randomUUID(),
      merchantId,
      planId: planId ?? randomUUID(),
      status,
      cycle: 1,
      createdAt: now,
      modifiedAt: now,
    }));
    await this.repository.insertMany(subscriptions);
    return subscriptions;
  }
}
