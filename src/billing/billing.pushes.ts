/**
 * Pushes to Stripe leave through the outbox as webhook deliveries do: when the events relay stores
 * a subscription's `subscription.paused` or `subscription.resumed` event, this sink records a push
 * named by the event's id beside its deliveries, before the outbox entry is cleared. So every
 * applied change, whatever caused it, gets its push at least once, even across a process killed
 * mid-relay; a change that came from the billing system itself is not sent back.
 */
import type { EventSink } from '../events/events.relay.js';
import type { Event } from '../events/event.payload.js';
import type { BillingPushesRepository, Push } from './billing-pushes.repository.js';
import type { BillingSyncRepository } from './billing-sync.repository.js';

const ACTIONS = { 'subscription.paused': 'pause', 'subscription.resumed': 'resume' } as const;

/** Whose changes are pushed: merchants with a connection (undefined: none). */
export interface ConnectionLookup {
  hasConnection(merchantId: string): Promise<boolean>;
}

export class BillingPushRecorder {
  private readonly listeners: (() => void)[] = [];

  constructor(
    private readonly pushes: BillingPushesRepository,
    private readonly connections: ConnectionLookup,
    private readonly sync: BillingSyncRepository,
  ) {}

  /** Called after pushes were recorded: the pusher of this process takes them at once. */
  onRecorded(listener: () => void): void {
    this.listeners.push(listener);
  }

  async record(merchantId: string, events: readonly Event[]): Promise<void> {
    const changes = events.flatMap((event) => {
      if (!(event.type in ACTIONS) || !('subscription' in event.data)) return [];
      const { subscription, cause } = event.data;
      if (cause.kind === 'billing') return [];
      const resumeAt = event.type === 'subscription.paused' ? subscription.schedule?.resumeAt : undefined;
      return [{ event, subscriptionId: subscription.id, resumeAt }];
    });
    if (changes.length === 0 || !(await this.connections.hasConnection(merchantId))) return;
    const externalIds = await this.pushes.externalIds(merchantId, [...new Set(changes.map((c) => c.subscriptionId))]);
    const pushes: Omit<Push, 'attempts' | 'createdAt'>[] = changes.flatMap(({ event, subscriptionId, resumeAt }) => {
      const externalId = externalIds.get(subscriptionId);
      if (externalId === undefined) return [];
      const action = ACTIONS[event.type as keyof typeof ACTIONS];
      const resumesAt = resumeAt ? Math.floor(Date.parse(resumeAt) / 1000) : undefined;
      return [{ id: event.id, merchantId, subscriptionId, externalId, action, ...(resumesAt ? { resumesAt } : {}) }];
    });
    if (pushes.length === 0) return;
    await this.pushes.insert(pushes);
    await this.sync.set(
      [...new Set(pushes.map((p) => p.subscriptionId))].map((subscriptionId) => ({ merchantId, subscriptionId, state: 'pending' })),
    );
    for (const listener of this.listeners) listener();
  }

  /** The webhooks' sink, with the pushes recorded first. */
  around(sink: EventSink): EventSink {
    return {
      fanOut: async (merchantId, events, traces, held) => {
        await this.record(merchantId, events);
        return sink.fanOut(merchantId, events, traces, held);
      },
      sendFirst: (merchantId, deliveryIds, withinMs) => sink.sendFirst(merchantId, deliveryIds, withinMs),
    };
  }
}
