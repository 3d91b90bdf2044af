/**
 * Test and demo data: subscriptions created directly in the database (`subsvc subscriptions seed`,
 * the `npm start` demo, the tests and scripts). Not part of the API: merchants' subscriptions come
 * from their billing system.
 */
import { randomUUID } from 'node:crypto';
import { nowTimestamp } from '../lib/clock.js';
import type { SubscriptionsRepository } from './subscriptions.repository.js';
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

export class SubscriptionSeeder {
  constructor(private readonly repository: SubscriptionsRepository) {}

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
    await this.repository.insertMany(subscriptions);
    return subscriptions;
  }
}
