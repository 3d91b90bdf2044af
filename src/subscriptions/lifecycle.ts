/**
 * A subscription's lifecycle: created from the merchant's billing system, updated (plan, cycle,
 * metadata, externalId), cancelled. Each write is one update of the subscription's own document
 * that carries its event in the outbox (outbox.ts), as every change of status does; a cancel is a
 * row of the rules table (subscriptions.rules.ts, CANCEL).
 */
import { randomUUID } from 'node:crypto';
import type { Filter } from 'mongodb';
import type { ChangeNotifier } from './change-notifier.js';
import type { PerKeyQueue } from '../lib/keyed-mutex.js';
import { RETRY } from '../retry-policies.js';
import { untilSettled } from '../lib/retry.js';
import type { CancelCommand, CreateCommand, UpdateCommand } from './command.js';
import { patchOutcome } from './lifecycle.rules.js';
import type { LifecycleStore } from './lifecycle.store.js';
import { LifecycleUpserts, type UpsertCommand, type UpsertOutcome } from './lifecycle.upsert.js';
import type { PendingEvents } from './outbox.js';
import { outboxEntries } from './outbox.js';
import { createdDocument, detailsOf, lifecycleEntry, newSubscription, patchWrite, whereUnchanged } from './lifecycle.entries.js';
import { snapshotAfter, updateFor, type SubscriptionDocument } from './subscription.document.js';
import { ExternalIdInUseError, StatusNotPatchableError, SubscriptionNotFoundError } from './subscriptions.errors.js';
import { decide, normaliseId, type Subscription } from './subscriptions.rules.js';
import type { ClockOf } from './subscriptions.service.js';
import type { SubscriptionsStore } from './subscriptions.store.js';

/** What the lifecycle writes with. */
export interface LifecycleDeps {
  readonly store: LifecycleStore;
  readonly subscriptions: Pick<SubscriptionsStore, 'find'>;
  readonly mutex: PerKeyQueue;
  readonly clockOf: ClockOf;
  /** The events relay listens here (SubscriptionsService.changes). */
  readonly changes: ChangeNotifier<PendingEvents>;
}

export class LifecycleService {
  private readonly upserts: LifecycleUpserts;

  constructor(private readonly deps: LifecycleDeps) {
    this.upserts = new LifecycleUpserts({ ...deps, single: this });
  }

  /** An import's rows upserted by externalId, together (lifecycle.upsert.ts): each row's outcome, in order. */
  upsertAll(command: UpsertCommand): Promise<UpsertOutcome[]> {
    return this.upserts.upsertAll(command);
  }

  /** Creates it, or ExternalIdInUseError naming the subscription that has its externalId. */
  async create({ merchantId, subscription: input, cause, id = randomUUID(), quiet }: CreateCommand): Promise<Subscription> {
    const claim = await this.deps.store.claim(merchantId, input.externalId, id);
    if (!claim.claimed) throw new ExternalIdInUseError(input.externalId, claim.heldBy);
    const now = (await this.deps.clockOf(merchantId)).timestamp();
    const subscription = newSubscription(merchantId, id, input, now);
    const entries = quiet ? [] : [lifecycleEntry('subscription.created', subscription, cause)];
    if (!(await this.deps.store.insert(createdDocument(subscription, entries)))) return this.get(merchantId, id);
    if (entries.length > 0) this.deps.changes.notify(merchantId, [id], [{ subscription, entries }]);
    return subscription;
  }

  async findByExternalId(merchantId: string, externalId: string): Promise<Subscription | undefined> {
    return this.deps.store.findByExternalId(merchantId, externalId);
  }

  /** A merge patch: 200 with the subscription; `subscription.updated` naming the fields changed, when one did. */
  async update({ merchantId, id: rawId, patch, cause, quiet = false }: UpdateCommand): Promise<Subscription> {
    if (patch.status !== undefined) throw new StatusNotPatchableError();
    const id = normaliseId(rawId);
    if (id === undefined) throw new SubscriptionNotFoundError(rawId);
    return this.deps.mutex.run(id, async () => {
      const settled = await untilSettled(RETRY.concurrentWriter, async () => {
        const current = await this.get(merchantId, id, rawId);
        const outcome = patchOutcome(current, patch);
        if (outcome.changed.length === 0) return current;
        const newExternalId = outcome.set.externalId;
        if (newExternalId !== undefined) {
          const claim = await this.deps.store.claim(merchantId, newExternalId, id);
          if (!claim.claimed) throw new ExternalIdInUseError(newExternalId, claim.heldBy);
        }
        const now = (await this.deps.clockOf(merchantId)).timestamp();
        const { update, entries } = patchWrite(current, outcome, { at: now, cause, quiet });
        const expected = { ...whereUnchanged(current), externalId: current.externalId ?? null } as Filter<SubscriptionDocument>;
        const changed = await this.deps.store.changeWhere(merchantId, id, { expected, update }, entries);
        if (!changed) {
          if (newExternalId !== undefined) await this.deps.store.release(merchantId, newExternalId, id);
          return undefined;
        }
        if (newExternalId !== undefined && current.externalId !== undefined)
          await this.deps.store.release(merchantId, current.externalId, id);
        if (entries.length > 0) this.deps.changes.notify(merchantId, [id], [changed.held]);
        return changed.subscription;
      });
      if (settled) return settled;
      throw new Error(`subscription ${id} kept changing while it was updated`);
    });
  }

  /**
   * Cancels it from any status (the rules' CANCEL): its schedule, pending notice and holders go,
   * with one `subscription.cancelled` event; a cancelled one is answered as it is.
   */
  async cancel({ merchantId, id: rawId, reason, cause, quiet }: CancelCommand): Promise<Subscription> {
    const id = normaliseId(rawId);
    if (id === undefined) throw new SubscriptionNotFoundError(rawId);
    return this.deps.mutex.run(id, async () => {
      const settled = await untilSettled(RETRY.concurrentWriter, async () => {
        const current = await this.get(merchantId, id, rawId);
        const { change } = decide({ status: current.status, pauseAt: null, resumeAt: null }, { kind: 'CANCEL' });
        if (!change) return current;
        const at = (await this.deps.clockOf(merchantId)).timestamp();
        const events = quiet ? [] : [{ kind: 'status' as const }];
        const entries = outboxEntries(current.status, snapshotAfter(change, {}, at), cause, randomUUID(), events).map((entry) => ({
          ...entry,
          details: detailsOf(current),
          ...(reason !== undefined ? { reason } : {}),
        }));
        const write = { expected: { status: current.status }, update: updateFor(change, at) };
        const changed = await this.deps.store.changeWhere(merchantId, id, write, entries);
        if (!changed) return undefined;
        if (entries.length > 0) this.deps.changes.notify(merchantId, [id], [changed.held]);
        return changed.subscription;
      });
      if (settled) return settled;
      throw new Error(`subscription ${id} kept changing while it was cancelled`);
    });
  }

  private async get(merchantId: string, id: string, rawId: string = id): Promise<Subscription> {
    const found = await this.deps.subscriptions.find(merchantId, id);
    if (!found) throw new SubscriptionNotFoundError(rawId);
    return found;
  }
}
