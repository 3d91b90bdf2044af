/**
 * The outbox: a subscription's events, kept in its own document until they are in the `events`
 * collection. A change's entries (one per event the rules give it: its change of status, then its
 * schedule events) are written by the same update that makes the change, so no change can be
 * stored without its event and no transaction is needed: an update of one document is written
 * whole. src/events/events.relay.ts moves entries out; see docs/reliability.md, "How every change gets its event".
 */
import { currentTraceparent } from '../observability/tracing.js';
import type { components } from '../../generated/openapi.js';
import type { ChangeCause, RuledEvent, ScheduleTime, Subscription, SubscriptionStatus } from './subscriptions.rules.js';

export type EventType = components['schemas']['EventType'];

/**
 * The Subscription fields that no change of status or schedule alters: an event takes them from the
 * document when it is relayed, unless its entry carries them (`details`: a lifecycle change, lifecycle.ts).
 */
export const IMMUTABLE_FIELDS = ['id', 'merchantId', 'planId', 'cycle', 'createdAt', 'externalId', 'metadata'] as const;
/** What a lifecycle change (create, update, cancel) writes into its entry of the fields IMMUTABLE_FIELDS reads from the document. */
export type SubscriptionDetails = Pick<Subscription, 'planId' | 'cycle' | 'externalId' | 'metadata'>;
/** Every other field: what a change leaves them as is written into its outbox entry (test/unit/event-snapshot.test.ts checks that the two lists cover the schema). */
export const SNAPSHOT_FIELDS = ['status', 'modifiedAt', 'schedule', 'pauseReason'] as const;
export type SubscriptionSnapshot = Pick<Subscription, (typeof SNAPSHOT_FIELDS)[number]>;
/** Fields a read shows and an event does not: the holds that cover it now (an event names the hold that caused it in its `cause`), and where it stands with the billing system (src/billing/). */
export const READ_ONLY_FIELDS = ['holdIds', 'billingSync'] as const;

export interface OutboxEntry {
  /** With the subscription id, names the event: one bulk update pushes the same entry to every document. */
  readonly key: string;
  readonly type: EventType;
  /** The event's place among the events of its change (the status event first): their ids sort in this order. */
  readonly seq: number;
  /** `subscription.schedule_removed`: the pending times the change dropped. */
  readonly removed?: readonly ScheduleTime[];
  readonly status: SubscriptionStatus;
  readonly previousStatus: SubscriptionStatus;
  readonly at: string;
  readonly cause: ChangeCause;
  /**
   * The subscription's changeable fields as the change left them, so that its event shows what
   * the answer to the change showed, whatever changed since (docs/design.md, events). Absent in
   * a hold's notice, which changed nothing: it shows the subscription as stored.
   */
  readonly subscription?: SubscriptionSnapshot;
  /** The trace context the change was made in (W3C traceparent), when tracing is on: its deliveries continue it. */
  readonly trace?: string;
  /** A hold's notice: the hold's resumeAt it announces (the subscription changed nothing, so it shows as stored). */
  readonly announces?: string;
  /** A lifecycle change's: the fields it left that a change of status never alters. */
  readonly details?: SubscriptionDetails;
  /** `subscription.updated`: the fields it changed. */
  readonly changed?: readonly string[];
  /** `subscription.cancelled`: the reason given. */
  readonly reason?: string;
}

/**
 * The entry of a hold's notice (src/holds/): the same for every subscription it goes to, named by
 * the hold and its resumeAt, so that a repeat makes no second event.
 */
export function holdNoticeEntry(holdId: string, resumeAt: string, at: string): OutboxEntry {
  const trace = currentTraceparent();
  return {
    key: holdNoticeKey(holdId, resumeAt),
    type: 'subscription.resume_upcoming',
    seq: 0,
    status: 'paused',
    previousStatus: 'paused',
    at,
    cause: { kind: 'hold', holdId },
    announces: resumeAt,
    ...(trace ? { trace } : {}),
  };
}

export const holdNoticeKey = (holdId: string, resumeAt: string) => `notice:hold:${holdId}:${resumeAt}`;

/**
 * The entries of a change to `subscription`, one per event the rules gave it, in their order.
 * `key` must be unique per change of each document: a random one for a single change, the bulk
 * request's id for a bulk command (one update writes the same entries into every document it
 * changes, and a command changes a subscription at most once); each event after the status one
 * adds its kind to it.
 */
export function outboxEntries(
  previousStatus: SubscriptionStatus,
  subscription: SubscriptionSnapshot,
  cause: ChangeCause,
  key: string,
  events: readonly RuledEvent[],
  /** When the events happened: the change's modifiedAt, unless it changed none (a notice). */
  at: string = subscription.modifiedAt,
): OutboxEntry[] {
  const trace = currentTraceparent();
  return events.map((event, seq) => ({
    key: event.kind === 'status' ? key : `${key}:${event.kind}`,
    type: event.kind === 'status' ? eventTypeOf(subscription.status) : `subscription.${event.kind}`,
    seq,
    ...(event.kind === 'schedule_removed' ? { removed: event.removed } : {}),
    status: subscription.status,
    previousStatus,
    at,
    cause,
    subscription,
    ...(trace ? { trace } : {}),
  }));
}

export function eventTypeOf(status: SubscriptionStatus): EventType {
  if (status === 'cancelled') return 'subscription.cancelled';
  return status === 'paused' ? 'subscription.paused' : 'subscription.resumed';
}

/**
 * A subscription's events waiting in its outbox, as the stores hand them over (the events relay
 * makes the events of them: src/events/event.payload.ts).
 */
export interface PendingEvents {
  /** The subscription as stored when read: its events take the fields no change alters from it. */
  readonly subscription: Subscription;
  /** Its waiting entries, in order, exactly as stored: clearing them takes out the entries equal to these. */
  readonly entries: readonly OutboxEntry[];
}
