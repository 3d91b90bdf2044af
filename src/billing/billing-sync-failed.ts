/**
 * `subscription.billing_sync_failed` (docs/billing.md "When a push fails"): one event per push that
 * failed for good, carrying the subscription as it stands with its billingSync, the event whose change
 * was refused, and `cause: {kind: "billing", system: "stripe"}`; recorded and sent as every event is.
 * A push whose failure is recorded again (its pusher was killed before marking it failed) sends the
 * event stored the first time, whose recording and sending are idempotent by its id.
 */
import type { Event } from '../events/event.payload.js';
import type { EventsRepository } from '../events/events.repository.js';
import { shownAs } from '../events/event.payload.js';
import { uuidv7Named } from '../lib/ids.js';
import { subscriptionView } from '../subscriptions/subscriptions.handlers.js';
import type { Subscription } from '../subscriptions/subscriptions.rules.js';
import type { PushOutcomes } from './billing.pusher.js';
import type { Push } from './billing-pushes.repository.js';
import type { BillingSync, BillingSyncRepository } from './billing-sync.repository.js';

const TYPE = 'subscription.billing_sync_failed' as const;

/** Where the events go: stored, then sent to the merchant's webhooks (EventsRelay.recordEvents). */
export interface EventRecording {
  recordEvents(merchantId: string, events: readonly Event[]): Promise<unknown>;
}

export class BillingSyncFailures implements PushOutcomes {
  constructor(
    private readonly subscriptions: { get(merchantId: string, id: string): Promise<Subscription> },
    private readonly sync: Pick<BillingSyncRepository, 'of'>,
    /** The time of a merchant's data (a test mode's clock): the events' time. */
    private readonly timeOf: (merchantId: string) => Promise<string>,
    private readonly events: () => EventRecording,
    private readonly stored: Pick<EventsRepository, 'ofSubscriptions'>,
  ) {}

  async failed(pushes: readonly (Push & { readonly error: string })[]): Promise<void> {
    for (const merchantId of new Set(pushes.map((p) => p.merchantId))) {
      const own = pushes.filter((p) => p.merchantId === merchantId);
      const states = await this.sync.of(
        merchantId,
        own.map((p) => p.subscriptionId),
      );
      const before = await this.stored.ofSubscriptions(
        merchantId,
        TYPE,
        own.map((p) => p.subscriptionId),
      );
      const storedFor = new Map(before.map((event) => [(event.data as { failedEventId?: string }).failedEventId, event]));
      const at = await this.timeOf(merchantId);
      const events: Event[] = [];
      for (const push of own) {
        const again = storedFor.get(push.id);
        if (again) {
          events.push(again);
          continue;
        }
        const subscription = await this.subscriptions.get(merchantId, push.subscriptionId).catch(() => undefined);
        if (!subscription) continue;
        const billingSync: BillingSync = states.get(push.subscriptionId) ?? {
          system: 'stripe',
          state: 'failed',
          syncedAt: null,
          error: push.error,
        };
        events.push(
          shownAs(merchantId, {
            id: uuidv7Named(`${TYPE}:${push.id}`, Date.parse(at)),
            type: TYPE,
            createdAt: at,
            data: {
              subscription: { ...subscriptionView(subscription), billingSync },
              previousStatus: subscription.status,
              cause: { kind: 'billing', system: 'stripe' },
              failedEventId: push.id,
            },
          }),
        );
      }
      if (events.length > 0) await this.events().recordEvents(merchantId, events);
    }
  }
}
