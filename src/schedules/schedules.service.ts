/** Dropping a subscription's schedule (`DELETE /v2/subscriptions/{id}/schedule`, docs/design.md §9). */
import { nowTimestamp } from '../lib/clock.js';
import type { KeyedMutex } from '../lib/keyed-mutex.js';
import type { SubscriptionsRepository } from '../subscriptions/subscriptions.repository.js';
import { InvalidTransitionError, SubscriptionNotFoundError, normaliseId, type Subscription } from '../subscriptions/subscriptions.rules.js';
import { dropSchedule } from './schedule.rules.js';

/** A concurrent writer can change the subscription between our read and our update; retry that many times. */
const MAX_ATTEMPTS = 5;

export class SchedulesService {
  constructor(
    private readonly repository: SubscriptionsRepository,
    /** The process's per-subscription mutex, shared with every other change of a subscription. */
    private readonly mutex: KeyedMutex,
  ) {}

  /** Drops the pending pause and resume; the subscription as it is afterwards. */
  async drop(merchantId: string, rawId: string): Promise<Subscription> {
    const id = normaliseId(rawId);
    if (id === undefined) throw new SubscriptionNotFoundError(rawId);
    return this.mutex.run(id, async () => {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const current = await this.repository.find(merchantId, id);
        if (!current) throw new SubscriptionNotFoundError(rawId);
        if (current.status === 'cancelled') throw new InvalidTransitionError(rawId, current.status, 'SCHEDULE');
        if (!current.schedule) return current;
        const expected = { status: current.status, schedule: current.schedule };
        const changed = await this.repository.change(merchantId, id, expected, dropSchedule(current.status), nowTimestamp(), { kind: 'api' });
        if (changed) return changed;
      }
      throw new Error(`subscription ${id} kept changing while its schedule was dropped; gave up after ${MAX_ATTEMPTS} attempts`);
    });
  }
}
