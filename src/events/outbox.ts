/**
 * The outbox: a subscription's events, kept in its own document until they are in the `events`
 * collection. An entry is written by the same update that changes the status, so no change can
 * be stored without its event, even on FerretDB, which has no transactions (MongoDB is atomic per
 * document). events.relay.ts moves entries out; see docs in README "Events and webhooks".
 */
import { uuidv7Named } from '../lib/ids.js';
import { currentTraceparent } from '../observability/tracing.js';
import type { components } from '../../generated/openapi.js';
import type { ChangeCause, SubscriptionStatus } from '../subscriptions/subscriptions.rules.js';

export type EventType = components['schemas']['EventType'];

export interface OutboxEntry {
  /** With the subscription id, names the event: one bulk update pushes the same entry to every document. */
  readonly key: string;
  readonly status: SubscriptionStatus;
  readonly previousStatus: SubscriptionStatus;
  readonly at: string;
  readonly cause: ChangeCause;
  /** The trace context the change was made in (W3C traceparent), when tracing is on: its deliveries continue it. */
  readonly trace?: string;
}

/**
 * The entry for a change. `key` must be unique per change of each document: a random one for a
 * single change, the bulk request's id for a bulk command (one update writes the same entry into
 * every document it changes, and a command changes a subscription at most once).
 */
export function outboxEntry(previousStatus: SubscriptionStatus, status: SubscriptionStatus, at: string, cause: ChangeCause, key: string): OutboxEntry {
  const trace = currentTraceparent();
  return { key, status, previousStatus, at, cause, ...(trace ? { trace } : {}) };
}

export function eventTypeOf(status: SubscriptionStatus): EventType {
  return status === 'paused' ? 'subscription.paused' : 'subscription.resumed';
}

/** The event's id: relaying an entry twice stores one event, and ids still sort by time. */
export function subscriptionEventId(entry: OutboxEntry, subscriptionId: string): string {
  return uuidv7Named(`${entry.key}:${subscriptionId}`, Date.parse(entry.at));
}
