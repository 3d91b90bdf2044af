/**
 * Every MongoDB call about subscriptions but the due schedules' (schedules.repository.ts, on the
 * same documents). Documents map to the domain's Subscription here; no _id or driver type leaves
 * the repositories.
 */
import { randomUUID } from 'node:crypto';
import type { Collection, Db, Filter, UpdateFilter } from 'mongodb';
import { outboxEntry, type OutboxEntry } from '../events/outbox.js';
import { pageOf, type Page, type PageRequest } from '../lib/pagination.js';
import { ScheduleClock } from '../schedules/schedule.clock.js';
import type { Change, CommandPlan, StoredSchedule } from '../schedules/schedule.rules.js';
import type { ChangeCause, Subscription, SubscriptionStatus } from './subscriptions.rules.js';

export const SUBSCRIPTIONS_COLLECTION = 'subscriptions';

/** A subscription as stored: its schedule fields are present only while set (docs/design.md §9). */
export interface SubscriptionDocument extends Partial<StoredSchedule> {
  _id: string;
  merchantId: string;
  planId: string;
  status: SubscriptionStatus;
  cycle: number;
  createdAt: string;
  modifiedAt: string;
  /**
   * The last bulk commands that reached this subscription, as `<requestId>:applied|noop`: written
   * in the same update as the change they made, so that a chunk run again (a worker killed
   * mid-chunk, a lock that expired, two workers holding the same chunk) finds its command done
   * and never applies it a second time, however the subscription changed since (docs/design.md §6).
   */
  bulkCommands?: string[];
  /** The workers' run that last applied a due schedule here, to tell which of a chunk's updates were its own. */
  scheduleRun?: string;
  /** Events of status changes not yet in the `events` collection, pushed by the change's own update (src/events/outbox.ts). */
  outbox?: OutboxEntry[];
}

/** How many bulk command marks a subscription keeps: a run repeated after more than this many later commands is not expected. */
const KEPT_COMMAND_MARKS = 32;

export type CommandMark = 'applied' | 'noop';

/** A subscription's state as far as one bulk command is concerned. */
export interface CommandState {
  readonly status: SubscriptionStatus;
  /** Set once the command took effect here (it changed the status, or found it already there). */
  readonly mark: CommandMark | undefined;
}

const marks = (requestId: string): [string, string] => [`${requestId}:applied`, `${requestId}:noop`];

/** A stored subscription as the read operation returns it (also the `subscription` of its events). */
export function toSubscription(doc: SubscriptionDocument): Subscription {
  const scheduled = doc.pauseAt !== undefined || doc.resumeAt !== undefined;
  return {
    id: doc._id,
    merchantId: doc.merchantId,
    planId: doc.planId,
    status: doc.status,
    cycle: doc.cycle,
    createdAt: doc.createdAt,
    modifiedAt: doc.modifiedAt,
    ...(scheduled ? { schedule: { pauseAt: doc.pauseAt ?? null, resumeAt: doc.resumeAt ?? null } } : {}),
    ...(doc.status === 'paused' && doc.pauseReason !== undefined ? { pauseReason: doc.pauseReason } : {}),
  };
}

/** The update that makes a change; modifiedAt changes unless `at` is undefined. */
export function updateFor(change: Change, at: string | undefined, extra: Partial<SubscriptionDocument> = {}): UpdateFilter<SubscriptionDocument> {
  const update: UpdateFilter<SubscriptionDocument> = { $set: { status: change.status, ...change.set, ...(at ? { modifiedAt: at } : {}), ...extra } };
  if (change.unset.length > 0) update.$unset = Object.fromEntries(change.unset.map((f) => [f, ''])) as Record<keyof StoredSchedule, ''>;
  return update;
}

/** A filter on exact schedule times; null matches a field that is absent (not scheduled). */
export function exactSchedule(times: { readonly pauseAt: string | null; readonly resumeAt: string | null }): Filter<SubscriptionDocument> {
  return { pauseAt: times.pauseAt, resumeAt: times.resumeAt } as Filter<SubscriptionDocument>;
}

/** What a conditional change expects to find: the status and, where given, the exact schedule times. */
export interface Expected {
  readonly status: SubscriptionStatus;
  readonly schedule?: { readonly pauseAt: string | null; readonly resumeAt: string | null };
}

/** A bulk request's filter (docs/design.md §6a): each field given narrows the match; times as stored (§5). */
export interface SubscriptionFilter {
  readonly statuses?: readonly SubscriptionStatus[];
  readonly planIds?: readonly string[];
  readonly createdBefore?: string;
  readonly createdAfter?: string;
}

/** The filter as a query: always on one merchant, so that it is served from an index that starts with merchantId. */
function filterQuery(merchantId: string, { statuses, planIds, createdBefore, createdAfter }: SubscriptionFilter): Filter<SubscriptionDocument> {
  const createdAt = { ...(createdAfter !== undefined ? { $gt: createdAfter } : {}), ...(createdBefore !== undefined ? { $lt: createdBefore } : {}) };
  return {
    merchantId,
    ...(statuses ? { status: { $in: [...statuses] } } : {}),
    ...(planIds ? { planId: { $in: [...planIds] } } : {}),
    ...(Object.keys(createdAt).length > 0 ? { createdAt } : {}),
  };
}

export class SubscriptionsRepository {
  private readonly collection: Collection<SubscriptionDocument>;
  /** Told of every pending time written here, after the write (schedule.clock.ts). */
  private readonly clock: ScheduleClock;

  constructor(db: Db) {
    this.collection = db.collection<SubscriptionDocument>(SUBSCRIPTIONS_COLLECTION);
    this.clock = new ScheduleClock(db);
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ merchantId: 1, _id: 1 }, { name: 'merchant_subscriptions' });
    await this.collection.createIndex({ nextScheduledAt: 1 }, { name: 'due_schedules' });
    // Bulk by filter (docs/design.md §6a): equality on merchantId, $in on status and planId, a range
    // on createdAt; with _id last, the ids and statuses it reads come from the index alone.
    await this.collection.createIndex({ merchantId: 1, status: 1, planId: 1, createdAt: 1, _id: 1 }, { name: 'merchant_filter' });
  }

  async find(merchantId: string, id: string): Promise<Subscription | undefined> {
    const doc = await this.collection.findOne({ _id: id, merchantId });
    return doc ? toSubscription(doc) : undefined;
  }

  /**
   * One conditional atomic update: makes the change only if the subscription is still as expected;
   * a change of status carries its event in the outbox, in the same update.
   */
  async change(merchantId: string, id: string, expected: Expected, change: Change, at: string, cause: ChangeCause): Promise<Subscription | undefined> {
    const schedule = expected.schedule ? exactSchedule(expected.schedule) : {};
    const event = change.status === expected.status ? {} : { $push: { outbox: outboxEntry(expected.status, change.status, at, cause, randomUUID()) } };
    const doc = await this.collection.findOneAndUpdate({ _id: id, merchantId, status: expected.status, ...schedule }, { ...updateFor(change, at), ...event }, {
      returnDocument: 'after',
    });
    if (doc) await this.clock.note([change.set.nextScheduledAt]);
    return doc ? toSubscription(doc) : undefined;
  }

  /**
   * Applies one bulk command to the subscriptions it has not reached yet, marking each in the same
   * document update: those in `from` change to `to` (marked applied), those already in `to` are
   * marked noop. At most two updates whatever the number of ids; a repeated call changes nothing. Each
   * change's event goes into the outbox in the same update (one entry, the same in every document:
   * its key is the requestId, and the event id is made from it and the subscription's id).
   */
  async applyCommand(
    merchantId: string,
    ids: readonly string[],
    plan: CommandPlan,
    requestId: string,
    at: string,
    cause: ChangeCause,
  ): Promise<{ allApplied: boolean }> {
    const notReached = { _id: { $in: [...ids] }, merchantId, bulkCommands: { $nin: marks(requestId) } };
    const mark = (kind: CommandMark) => ({ bulkCommands: { $each: [`${requestId}:${kind}`], $slice: -KEPT_COMMAND_MARKS } });
    const applied = await this.collection.updateMany(
      { ...notReached, status: plan.from },
      { ...updateFor(plan.whenFrom, at), $push: { ...mark('applied'), outbox: outboxEntry(plan.from, plan.whenFrom.status, at, cause, requestId) } },
    );
    // The usual case: every one changed, so none can be a no-op and there is nothing to read back.
    const allApplied = applied.modifiedCount === ids.length;
    if (!allApplied) {
      const noop = plan.whenAlready ? updateFor(plan.whenAlready, at) : {};
      await this.collection.updateMany({ ...notReached, status: plan.already }, { ...noop, $push: mark('noop') });
    }
    await this.clock.note([plan.whenFrom.set.nextScheduledAt, plan.whenAlready?.set.nextScheduledAt]);
    return { allApplied };
  }

  /** Each found subscription's status and whether the command reached it; absent ids are not in the map. */
  async commandStates(merchantId: string, ids: readonly string[], requestId: string): Promise<Map<string, CommandState>> {
    const docs = await this.collection
      .find({ _id: { $in: [...ids] }, merchantId }, { projection: { status: 1, bulkCommands: 1 } })
      .toArray();
    const [applied, noop] = marks(requestId);
    return new Map(
      docs.map((d) => {
        const kept = d.bulkCommands ?? [];
        const mark = kept.includes(applied) ? 'applied' : kept.includes(noop) ? 'noop' : undefined;
        return [d._id, { status: d.status, mark }];
      }),
    );
  }

  /** The merchant's subscriptions in `_id` order after `startingAfter`: a walk along the {merchantId, _id} index. */
  async page(merchantId: string, status: SubscriptionStatus | undefined, { limit, startingAfter }: PageRequest): Promise<Page<Subscription>> {
    const filter = {
      merchantId,
      ...(status ? { status } : {}),
      ...(startingAfter ? { _id: { $gt: startingAfter } } : {}),
    };
    const docs = await this.collection.find(filter).sort({ _id: 1 }).limit(limit + 1).toArray();
    return pageOf(docs.map(toSubscription), limit, (s) => s.id);
  }

  /** The status of each of these ids that is a subscription of the merchant (others are absent): one query. */
  async ownedStatuses(merchantId: string, ids: readonly string[]): Promise<Map<string, SubscriptionStatus>> {
    const docs = await this.collection
      .find({ _id: { $in: [...ids] }, merchantId }, { projection: { _id: 1, status: 1 } })
      .toArray();
    return new Map(docs.map((d) => [d._id, d.status]));
  }

  /**
   * The id and status of up to `limit` of the merchant's subscriptions that match the filter, read
   * once: the snapshot a bulk request by filter accepts, and what its dry run counts.
   */
  async matching(merchantId: string, filter: SubscriptionFilter, limit: number): Promise<{ id: string; status: SubscriptionStatus }[]> {
    const docs = await this.collection.find(filterQuery(merchantId, filter), { projection: { _id: 1, status: 1 } }).limit(limit).toArray();
    return docs.map((d) => ({ id: d._id, status: d.status }));
  }

  async countMatching(merchantId: string, filter: SubscriptionFilter): Promise<number> {
    return this.collection.countDocuments(filterQuery(merchantId, filter));
  }

  async insertMany(subscriptions: readonly Subscription[]): Promise<void> {
    if (subscriptions.length === 0) return;
    await this.collection.insertMany(
      subscriptions.map(({ id, ...rest }) => ({ _id: id, ...rest })),
      { ordered: false },
    );
  }
}
