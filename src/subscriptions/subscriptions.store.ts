/**
 * The subscriptions themselves: find, page and change one, read what bulk acceptance and a pause
 * policy need, insert and remove. One of the four stores of the `subscriptions` collection
 * (subscription.document.ts); documents map to the domain's Subscription here.
 */
import type { SingleCommand } from './command.js';
import { randomUUID } from 'node:crypto';
import type { Collection, Db, Filter } from 'mongodb';
import { writeOne } from './grouped-write.js';
import { deleteInParts, pageAlongIds } from '../db/mongo-helpers.js';
import { livemodeOf } from '../merchants/livemode.js';
import type { Page, PageRequest } from '../lib/pagination.js';
import type { HolderState } from './holders.rules.js';
import type { OutboxEntry, PendingEvents } from './outbox.js';
import type { PauseHistory } from '../pause-policy/pause-policy.rules.js';
import type { PendingTimes } from './pending-times.js';
import {
  HISTORY_PROJECTION,
  VIEW_PROJECTION,
  fieldsEventsRead,
  inModeOf,
  pendingEventsOf,
  recordingPause,
  requestEntries,
  subscriptionsIn,
  toHeldSubscription,
  updateFor,
  whereEventFieldsAre,
  whereScheduleIs,
  withEvents,
  type ShownSchedule,
  type SubscriptionDocument,
} from './subscription.document.js';
import type { Change, Subscription, SubscriptionStatus } from './subscriptions.rules.js';

/**
 * A change made: the subscription as it left it, and `held`: the events this change pushed to its
 * outbox, what the events relay would otherwise read back (EventsRelay.relaySoon).
 */
export interface Changed {
  readonly subscription: Subscription;
  readonly held: PendingEvents;
}

/** What changeOrRead found: the change made, or the subscription as it was read when the change did not apply (null: none; undefined: not read). */
export type ChangeOrRead =
  | { readonly changed: Changed; readonly current?: undefined }
  | { readonly changed?: undefined; readonly current: Subscription | null | undefined };

/** The filter of change() on a document read: its status, and where given, its schedule times (a missing time is null). */
function isAsExpected(doc: SubscriptionDocument, expected: Expected): boolean {
  if (doc.status !== expected.status) return false;
  if (expected.heldOnly !== undefined && (doc.ownPause === false) !== expected.heldOnly) return false;
  return (
    !expected.schedule || ((doc.pauseAt ?? null) === expected.schedule.pauseAt && (doc.resumeAt ?? null) === expected.schedule.resumeAt)
  );
}

/** What a conditional change expects to find: the status and, where given, the exact schedule times. */
export interface Expected {
  readonly status: SubscriptionStatus;
  readonly schedule?: { readonly pauseAt: string | null; readonly resumeAt: string | null };
  /** Paused by its holds alone (`ownPause: false`), or not; absent: either. */
  readonly heldOnly?: boolean;
}

/** What bulk acceptance and a pause under a policy read of a subscription. */
export interface Owned extends PauseHistory {
  readonly status: SubscriptionStatus;
  /** Empty unless asked for. */
  readonly recentPauses: readonly string[];
  /** Undefined unless asked for, or never resumed. */
  readonly lastResumedAt?: string | undefined;
  /** Read by ownedStatuses: what an undo compares with when the undone request applied its command. */
  readonly modifiedAt?: string;
}

const ownedOf = (
  doc: Pick<SubscriptionDocument, 'status' | 'recentPauses' | 'lastResumedAt'> & Partial<Pick<SubscriptionDocument, 'modifiedAt'>>,
): Owned => ({
  status: doc.status,
  ...(doc.modifiedAt !== undefined ? { modifiedAt: doc.modifiedAt } : {}),
  recentPauses: doc.recentPauses ?? [],
  ...(doc.lastResumedAt !== undefined ? { lastResumedAt: doc.lastResumedAt } : {}),
});

/** A bulk request's filter (docs/design.md §6a): each field given narrows the match; times as stored (§5). */
export interface SubscriptionFilter {
  readonly statuses?: readonly SubscriptionStatus[];
  readonly planIds?: readonly string[];
  readonly createdBefore?: string;
  readonly createdAfter?: string;
}

/** The filter as a query: always on one merchant, so that it is served from an index that starts with merchantId. */
function whereSelected(
  merchantId: string,
  { statuses, planIds, createdBefore, createdAfter }: SubscriptionFilter,
): Filter<SubscriptionDocument> {
  const createdAt = {
    ...(createdAfter !== undefined ? { $gt: createdAfter } : {}),
    ...(createdBefore !== undefined ? { $lt: createdBefore } : {}),
  };
  return {
    merchantId,
    ...(statuses ? { status: { $in: [...statuses] } } : {}),
    ...(planIds ? { planId: { $in: [...planIds] } } : {}),
    ...(Object.keys(createdAt).length > 0 ? { createdAt } : {}),
  };
}

/** How the subscriptions store writes, decided by the composition root from the server's capabilities (src/main/composition.ts). */
export interface SubscriptionsStoreOptions {
  /** Told of every pending time written here, after the write. */
  readonly pendingTimes?: PendingTimes;
  /** The conditional update answers only what a read shows (VIEW_PROJECTION); absent: the whole document (the server lacks `updateProjection`: db/workarounds.ts). */
  readonly updateProjection?: boolean;
  /** Deletes in parts of at most this many documents (db/workarounds.ts); absent: one statement. */
  readonly documentsPerDelete?: number;
}

export class SubscriptionsStore {
  private readonly collection: Collection<SubscriptionDocument>;

  constructor(
    db: Db,
    private readonly options: SubscriptionsStoreOptions = {},
  ) {
    this.collection = subscriptionsIn(db);
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ merchantId: 1, _id: 1 }, { name: 'merchant_subscriptions' });
    await this.collection.createIndex({ nextScheduledAt: 1 }, { name: 'due_schedules' });
    // Bulk by filter (docs/design.md §6a): equality on merchantId, $in on status and planId, a range
    // on createdAt; with _id last, the ids and statuses it reads come from the index alone.
    await this.collection.createIndex({ merchantId: 1, status: 1, planId: 1, createdAt: 1, _id: 1 }, { name: 'merchant_filter' });
    await this.collection.createIndex({ 'outbox.key': 1 }, { name: 'subscription_outbox', sparse: true });
    // What a hold covers: its release reads them by merchant and hold (holders.store.ts).
    await this.collection.createIndex({ merchantId: 1, holdIds: 1 }, { name: 'merchant_hold_covers' });
    // `GET /v2/subscriptions?externalId=…` (lifecycle.store.ts): equality on both, one merchant at a time.
    await this.collection.createIndex({ merchantId: 1, externalId: 1 }, { name: 'merchant_external_ids' });
  }

  async find(merchantId: string, id: string): Promise<Subscription | undefined> {
    const doc = await this.collection.findOne({ _id: id, merchantId }, { projection: VIEW_PROJECTION });
    return doc ? toHeldSubscription(doc) : undefined;
  }

  /**
   * One conditional atomic update: makes the change only if the subscription is still as expected;
   * the change's events (requestEvents: of status and of schedule) go into the outbox in the same
   * update, with the subscription as the update leaves it. The fields it keeps and the pending
   * times it drops are filtered on: first as expected (absent unless `expected.schedule` names
   * them: the usual case, one round trip as without events), else as read just before.
   */
  async change(command: SingleCommand, expected: Expected, change: Change): Promise<Changed | undefined> {
    return (await this.changeOrRead(command, expected, change)).changed;
  }

  /**
   * change(), and when it does not apply, the subscription as the change's own second try read it
   * (null: there is none; undefined: not read, or changed meanwhile), so that a caller that needs
   * it reads nothing again: a pause of a paused subscription costs two round trips, not three.
   */
  async changeOrRead(command: SingleCommand, expected: Expected, change: Change): Promise<ChangeOrRead> {
    const { merchantId, id, at, cause } = command;
    const filter: Filter<SubscriptionDocument> = {
      merchantId,
      status: expected.status,
      ...(expected.schedule ? whereScheduleIs(expected.schedule) : {}),
      ...(expected.heldOnly === undefined ? {} : { ownPause: expected.heldOnly ? false : { $exists: false } }),
    };
    // A group of one (grouped-write.ts): its statement is filtered on the state expected and its event fields as in `before`.
    const recording = async (before: ShownSchedule): Promise<Changed | undefined> => {
      const entries = requestEntries({ from: expected.status, change, before }, { at, cause, key: randomUUID() });
      const update = inModeOf(merchantId, withEvents(recordingPause(updateFor(change, at), expected.status, change, at), entries));
      const statement = { filter: { ...filter, ...whereEventFieldsAre(change, before) }, update };
      // VIEW_PROJECTION where the server takes one on findAndModify (the `updateProjection` capability, db/workarounds.ts).
      const projection = this.options.updateProjection ? VIEW_PROJECTION : undefined;
      const doc = await writeOne({ collection: this.collection, projection }, { ids: [id], value: statement });
      return doc ? this.changed(doc, change, entries) : undefined;
    };
    const times = expected.schedule ?? {};
    const changed = await recording(Object.fromEntries(Object.entries(times).filter(([, v]) => v !== null)));
    if (changed) return { changed };
    if (fieldsEventsRead(change).length === 0) return { current: undefined };
    // The whole subscription, not only its pinned fields: if it is not as expected, it is what the caller reads next.
    const doc = await this.collection.findOne({ _id: id, merchantId }, { projection: VIEW_PROJECTION });
    if (!doc) return { current: null };
    if (!isAsExpected(doc, expected)) return { current: toHeldSubscription(doc) };
    const again = await recording(doc);
    return again ? { changed: again } : { current: undefined };
  }

  /**
   * `entries`: the outbox entries the update pushed. The subscription it answers with, held with
   * only those entries (the very objects written, so that the relay's `$pullAll` finds them equal),
   * is what the events relay needs of this change: it reads nothing back (EventsRelay.relaySoon).
   * Older entries not relayed yet (the whole document's answer holds them) are the sweep's or a
   * retry's, as where the answer (VIEW_PROJECTION) holds no outbox.
   */
  private async changed(doc: SubscriptionDocument, change: Change, entries: OutboxEntry[]): Promise<Changed> {
    if (livemodeOf(doc.merchantId)) await this.options.pendingTimes?.note([change.set.nextScheduledAt]);
    const held = pendingEventsOf(doc, entries);
    return { subscription: held.subscription, held };
  }

  /** The merchant's subscriptions in `_id` order after `startingAfter`: a walk along the {merchantId, _id} index. */
  page(merchantId: string, status: SubscriptionStatus | undefined, page: PageRequest): Promise<Page<Subscription>> {
    return pageAlongIds(this.collection, { merchantId, ...(status ? { status } : {}) }, page, false, (d) => toHeldSubscription(d));
  }

  /**
   * The status of each of these ids that is a subscription of the merchant (others are absent): one
   * query; with the PauseHistory too when asked (a pause policy reads it: readsHistory).
   */
  async ownedStatuses(merchantId: string, ids: readonly string[], withHistory = false): Promise<Map<string, Owned>> {
    const docs = await this.collection
      .find(
        { _id: { $in: [...ids] }, merchantId },
        { projection: { _id: 1, status: 1, modifiedAt: 1, ...(withHistory ? HISTORY_PROJECTION : {}) } },
      )
      .toArray();
    return new Map(docs.map((d) => [d._id, ownedOf(d)]));
  }

  /** A subscription's status and PauseHistory, or undefined when the merchant has none with this id. */
  async pauseHistory(merchantId: string, id: string): Promise<Owned | undefined> {
    const doc = await this.collection.findOne({ _id: id, merchantId }, { projection: { _id: 1, status: 1, ...HISTORY_PROJECTION } });
    return doc ? ownedOf(doc) : undefined;
  }

  /** Removes every subscription of a test mode (never live data): how many. */
  async removeAllOf(merchantId: string): Promise<number> {
    if (livemodeOf(merchantId)) throw new Error("removeAllOf removes a test mode's subscriptions only");
    return deleteInParts(this.collection, { merchantId }, this.options.documentsPerDelete);
  }

  /**
   * The id and status of up to `limit` of the merchant's subscriptions that match the filter, read
   * once: the snapshot a bulk request by filter accepts, and what its dry run counts.
   */
  async matching(merchantId: string, filter: SubscriptionFilter, limit: number, withHistory = false): Promise<({ id: string } & Owned)[]> {
    // Without the history, the ids and statuses come from the merchant_filter index alone.
    const projection = { _id: 1, status: 1, ...(withHistory ? HISTORY_PROJECTION : {}) };
    const docs = await this.collection.find(whereSelected(merchantId, filter), { projection }).limit(limit).toArray();
    return docs.map((d) => ({ id: d._id, ...ownedOf(d) }));
  }

  /**
   * The merchant's subscriptions that may resume by `until`: those with a resumeAt by then, and
   * those held (a hold's release may resume them), as the holders' rules read them (holders.rules.ts).
   */
  async resumeCandidates(merchantId: string, until: string): Promise<(HolderState & { readonly planId: string })[]> {
    const docs = await this.collection
      .find(
        { merchantId, status: { $ne: 'cancelled' }, $or: [{ resumeAt: { $lte: until } }, { holdIds: { $exists: true } }] },
        { projection: { _id: 0, status: 1, planId: 1, ownPause: 1, holdIds: 1, pauseAt: 1, resumeAt: 1 } },
      )
      .toArray();
    return docs.filter((d) => d.resumeAt !== undefined || (d.holdIds?.length ?? 0) > 0);
  }

  async insertMany(subscriptions: readonly Subscription[]): Promise<void> {
    if (subscriptions.length === 0) return;
    await this.collection.insertMany(
      subscriptions.map(({ id, holdIds, ...rest }) => ({ _id: id, ...rest, ...(holdIds ? { holdIds: [...holdIds] } : {}) })),
      { ordered: false },
    );
  }
}
