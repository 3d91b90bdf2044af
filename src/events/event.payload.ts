/**
 * The one builder of an event as the API and its webhooks show it: a subscription's events from the
 * outbox entries its changes left (handed over by the outbox store, src/subscriptions/outbox.ts),
 * a completed bulk request's event, and `livemode` on every one (shownAs).
 */
import { uuidv7Named } from '../lib/ids.js';
import { livemodeOf } from '../merchants/livemode.js';
import type { BulkRequestView } from '../bulk/bulk.status.js';
import type { ImportView } from '../imports/imports.service.js';
import type { OutboxEntry, PendingEvents } from '../subscriptions/outbox.js';
import type { Subscription } from '../subscriptions/subscriptions.rules.js';
import type { components } from '../../generated/openapi.js';

/** An event as the API shows it. */
export type Event = components['schemas']['Event'];

/** An event as made, before the API shows it. */
export interface RecordedEvent {
  readonly id: string;
  readonly type: Event['type'];
  readonly createdAt: string;
  readonly data: object;
}

/**
 * An event as the API and its webhooks show it: `livemode` on it and on the object it carries,
 * from the id that owns it (src/merchants/livemode.ts), so events stored before test mode show it too.
 */
export function shownAs(merchantId: string, { id, type, createdAt, data }: RecordedEvent): Event {
  const livemode = livemodeOf(merchantId);
  const shown = 'subscription' in data ? { ...data, subscription: { ...(data.subscription as object), livemode } } : { ...data, livemode };
  return { id, type, createdAt, data: shown, livemode } as Event;
}

/** The event's id: relaying an entry twice stores one event, and ids sort by time, then by their order within a change. */
export function subscriptionEventId(entry: OutboxEntry, subscriptionId: string): string {
  return uuidv7Named(`${entry.key}:${subscriptionId}`, Date.parse(entry.at), entry.seq);
}

/**
 * The subscription as the read showed it right after the change: the fields no change alters as
 * stored, the others as the change's own update wrote them into its entry (a hold's notice changed
 * nothing, and has none: the subscription as it stands).
 */
function subscriptionAfter(stored: Subscription, entry: OutboxEntry): Subscription {
  if (!entry.subscription) return stored;
  const { status, modifiedAt, ...shown } = entry.subscription;
  const { id, merchantId, planId, cycle, createdAt, externalId, metadata } = stored;
  const details = entry.details ?? { planId, cycle, externalId, metadata };
  return {
    id,
    merchantId,
    planId: details.planId,
    status,
    cycle: details.cycle,
    createdAt,
    modifiedAt,
    ...shown,
    ...(details.externalId !== undefined ? { externalId: details.externalId } : {}),
    ...(details.metadata !== undefined ? { metadata: details.metadata } : {}),
  };
}

/** The types that carry the pending times (`schedule`): the schedule events. */
const SCHEDULE_EVENT_TYPES = new Set([
  'subscription.pause_scheduled',
  'subscription.resume_scheduled',
  'subscription.schedule_removed',
  'subscription.resume_upcoming',
]);

/** A subscription's events, one per entry waiting in its outbox, in order. */
export function subscriptionEvents({ subscription: stored, entries }: PendingEvents): Event[] {
  return entries.map((entry) => {
    const { type } = entry;
    const subscription = subscriptionAfter(stored, entry);
    // The schedule events also carry the pending times the change left, and what it dropped.
    const schedule = SCHEDULE_EVENT_TYPES.has(type) ? { schedule: subscription.schedule ?? { pauseAt: null, resumeAt: null } } : {};
    return shownAs(stored.merchantId, {
      id: subscriptionEventId(entry, stored.id),
      type,
      createdAt: entry.at,
      data: {
        subscription,
        previousStatus: entry.previousStatus,
        cause: entry.cause,
        ...schedule,
        ...(entry.removed ? { removed: [...entry.removed] } : {}),
        ...(entry.changed ? { changed: [...entry.changed] } : {}),
        ...(entry.reason !== undefined ? { reason: entry.reason } : {}),
        // The resume a notice announces (docs/webhooks.md).
        ...resumeAnnounced(type, entry, subscription),
      },
    });
  });
}

/** The resume a notice announces: a hold's release, or the subscription's own scheduled resume. */
function resumeAnnounced(type: string, entry: OutboxEntry, subscription: Subscription): { resumeAt?: string } {
  if (type !== 'subscription.resume_upcoming') return {};
  const resumeAt = entry.announces ?? subscription.schedule?.resumeAt;
  return resumeAt ? { resumeAt } : {};
}

/** Each event's trace context, from its outbox entry (when the change was traced). */
export function eventTraces(pending: readonly PendingEvents[]): Map<string, string> {
  const traces = new Map<string, string>();
  for (const { subscription, entries } of pending)
    for (const entry of entries) if (entry.trace) traces.set(subscriptionEventId(entry, subscription.id), entry.trace);
  return traces;
}

/** A bulk request's `bulk_request.completed`: its id comes from the request and its stored completion time, the same on every run. */
export function bulkRequestCompletedEvent(merchantId: string, view: BulkRequestView): Event {
  const completedAt = view.completedAt ?? view.createdAt;
  const id = uuidv7Named(`bulk_request.completed:${view.requestId}`, Date.parse(completedAt));
  return shownAs(merchantId, { id, type: 'bulk_request.completed' as const, createdAt: completedAt, data: view });
}

/** An import's `subscription_import.completed`: its id comes from the import and its completion time, the same on every run. */
export function importCompletedEvent(merchantId: string, view: ImportView): Event {
  const completedAt = view.completedAt ?? view.createdAt;
  const id = uuidv7Named(`subscription_import.completed:${view.id}`, Date.parse(completedAt));
  return shownAs(merchantId, { id, type: 'subscription_import.completed' as const, createdAt: completedAt, data: view });
}
