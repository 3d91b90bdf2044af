/**
 * Test and demo data: subscriptions created directly in the database (`subsvc subscriptions seed`,
 * the `npm start` demo, the tests and scripts). Not part of the API: merchants' subscriptions come
 * from their billing system.
 */
import { randomUUID } from 'node:crypto';
import { nowTimestamp } from '../lib/clock.js';
import { partsOf } from '../lib/parts.js';
import { SeedInterruptedError } from './subscriptions.errors.js';
import type { SubscriptionsStore } from './subscriptions.store.js';
import type { Subscription, SubscriptionStatus } from './subscriptions.rules.js';

export interface SeedOptions {
  readonly merchantId: string;
  readonly count: number;
  readonly status: SubscriptionStatus;
  readonly planId?: string;
  /** The ids to give them (the first `count` are used); random ones where absent. */
  readonly ids?: readonly string[];
  /** Their createdAt (and modifiedAt); now where absent. */
  readonly createdAt?: string;
}

/** Subscriptions written by one insert: each part is bounded on its own, and a failure loses track of one part at most. */
export const SEEDED_AT_ONCE = 1_000;

export class SubscriptionSeeder {
  constructor(private readonly repository: Pick<SubscriptionsStore, 'insertMany'>) {}

  async seed({ merchantId, count, status, planId, ids, createdAt }: SeedOptions): Promise<Subscription[]> {
    const now = createdAt ?? nowTimestamp();
    const subscriptions = Array.from({ length: count }, (_, i) => ({
      id: ids?.[i] ?? randomUUID(),
      merchantId,
      planId: planId ?? randomUUID(),
      status,
      cycle: 1,
      createdAt: now,
      modifiedAt: now,
    }));
    let inserted = 0;
    for (const part of partsOf(subscriptions, SEEDED_AT_ONCE)) {
      try {
        await this.repository.insertMany(part);
      } catch (error) {
        // Before any part went in, the error is the database's own (a request maps it to 503).
        throw inserted === 0 ? error : new SeedInterruptedError(inserted, count, error);
      }
      inserted += part.length;
    }
    return subscriptions;
  }
}
