/**
 * What a lifecycle change writes, shared by the single changes (lifecycle.ts) and the grouped
 * upsert of an import's rows (lifecycle.upsert.ts): a new subscription and its document, and the
 * outbox entry of a `subscription.created` or `subscription.updated`.
 */
import { randomUUID } from 'node:crypto';
import type { UpdateFilter } from 'mongodb';
import { currentTraceparent } from '../observability/tracing.js';
import type { NewSubscription, PatchOutcome } from './lifecycle.rules.js';
import type { OutboxEntry, SubscriptionDetails } from './outbox.js';
import type { SubscriptionDocument } from './subscription.document.js';
import type { ChangeCause, Subscription } from './subscriptions.rules.js';

export const detailsOf = (s: Pick<Subscription, 'planId' | 'cycle' | 'externalId' | 'metadata'>): SubscriptionDetails => ({
  planId: s.planId,
  cycle: s.cycle,
  ...(s.externalId !== undefined ? { externalId: s.externalId } : {}),
  ...(s.metadata !== undefined ? { metadata: s.metadata } : {}),
});

/** A lifecycle event's entry: its change's status and details, with what its type carries. */
export function lifecycleEntry(
  type: 'subscription.created' | 'subscription.updated',
  subscription: Subscription,
  cause: ChangeCause,
  extra: Pick<OutboxEntry, 'changed'> = {},
): OutboxEntry {
  const trace = currentTraceparent();
  return {
    key: randomUUID(),
    type,
    seq: 0,
    status: subscription.status,
    previousStatus: subscription.status,
    at: subscription.modifiedAt,
    cause,
    subscription: { status: subscription.status, modifiedAt: subscription.modifiedAt },
    details: detailsOf(subscription),
    ...extra,
    ...(trace ? { trace } : {}),
  };
}

/** The subscription a create makes of `input`, with id `id`, at `now`. */
export function newSubscription(merchantId: string, id: string, input: NewSubscription, now: string): Subscription {
  return {
    id,
    merchantId,
    planId: input.planId.toLowerCase(),
    status: input.status ?? 'fulfilled',
    cycle: input.cycle ?? 0,
    createdAt: now,
    modifiedAt: now,
    externalId: input.externalId,
    ...(input.metadata && Object.keys(input.metadata).length > 0 ? { metadata: { ...input.metadata } } : {}),
  };
}

/** A new subscription as stored, with its events in its outbox. */
export function createdDocument(subscription: Subscription, entries: readonly OutboxEntry[]): SubscriptionDocument {
  const { id, merchantId, planId, status, cycle, createdAt, modifiedAt, externalId, metadata } = subscription;
  return {
    _id: id,
    merchantId,
    planId,
    status,
    cycle,
    createdAt,
    modifiedAt,
    ...(externalId !== undefined ? { externalId } : {}),
    ...(metadata ? { metadata: { ...metadata } } : {}),
    ...(entries.length > 0 ? { outbox: [...entries] } : {}),
  };
}

/** Matches a subscription still as read: every change of it moves `modifiedAt` or `status`. */
export const whereUnchanged = (current: Subscription): Pick<SubscriptionDocument, 'modifiedAt' | 'status'> => ({
  modifiedAt: current.modifiedAt,
  status: current.status,
});

/** What a merge patch writes of `current` at `at`: the subscription after it, its update, and its `subscription.updated` unless `quiet`. */
export function patchWrite(
  current: Subscription,
  outcome: PatchOutcome,
  { at, cause, quiet }: { readonly at: string; readonly cause: ChangeCause; readonly quiet: boolean },
): { readonly after: Subscription; readonly update: UpdateFilter<SubscriptionDocument>; readonly entries: OutboxEntry[] } {
  const { metadata: _kept, ...rest } = current;
  const metadata = outcome.metadataRemoved ? undefined : (outcome.set.metadata ?? current.metadata);
  const after: Subscription = { ...rest, ...outcome.set, ...(metadata ? { metadata } : {}), modifiedAt: at };
  const entries = quiet ? [] : [lifecycleEntry('subscription.updated', after, cause, { changed: outcome.changed })];
  const update = {
    $set: { ...outcome.set, modifiedAt: at },
    ...(outcome.metadataRemoved ? { $unset: { metadata: '' as const } } : {}),
  };
  return { after, update, entries };
}
