/**
 * The MongoDB calls of due schedules. A schedule lives in its subscription's document (so a
 * change of status and of schedule is one atomic update), with `nextScheduledAt`, the earliest
 * pending time, indexed for the workers' poll (docs/design.md §9).
 */
import type { AnyBulkWriteOperation, Collection, Db } from 'mongodb';
import { SUBSCRIPTIONS_COLLECTION, exactSchedule, updateFor, type SubscriptionDocument } from '../subscriptions/subscriptions.repository.js';
import { outboxEntry } from '../events/outbox.js';
import { bulkWriteInParts } from '../lib/mongo-helpers.js';
import { ScheduleClock } from './schedule.clock.js';
import type { DueState, Firing } from './schedule.rules.js';

export interface DueSubscription extends DueState {
  readonly id: string;
  readonly merchantId: string;
}

/** One firing planned for the subscriptions of one merchant that were read in exactly the same state. */
export interface FiringGroup {
  readonly merchantId: string;
  readonly state: DueState;
  readonly firing: Firing;
  readonly ids: readonly string[];
}

export class SchedulesRepository {
  private readonly collection: Collection<SubscriptionDocument>;
  /** When the next schedule falls due: read before querying the subscriptions (schedule.clock.ts). */
  readonly clock: ScheduleClock;

  constructor(db: Db) {
    this.collection = db.collection<SubscriptionDocument>(SUBSCRIPTIONS_COLLECTION);
    this.clock = new ScheduleClock(db);
  }

  /** The earliest pending time of any subscription (served by the due_schedules index). */
  async earliest(): Promise<string | undefined> {
    const doc = await this.collection.findOne({ nextScheduledAt: { $exists: true } }, { sort: { nextScheduledAt: 1 }, projection: { nextScheduledAt: 1 } });
    return doc?.nextScheduledAt;
  }

  /** Up to `limit` subscriptions with a pending time at or before `now`, earliest first (served by the due_schedules index). */
  async due(now: string, limit: number): Promise<DueSubscription[]> {
    const docs = await this.collection
      .find({ nextScheduledAt: { $lte: now } }, { projection: { merchantId: 1, status: 1, pauseAt: 1, resumeAt: 1, nextScheduledAt: 1 } })
      .sort({ nextScheduledAt: 1 })
      .limit(limit)
      .toArray();
    return docs.map((d) => ({
      id: d._id,
      merchantId: d.merchantId,
      status: d.status,
      pauseAt: d.pauseAt ?? null,
      resumeAt: d.resumeAt ?? null,
      nextScheduledAt: d.nextScheduledAt!,
    }));
  }

  /**
   * Applies due schedules: the one write of a scheduled transition (an event outbox entry belongs
   * in this same update). Each group is one conditional updateMany whose filter is the exact state
   * its subscriptions were read in, so a schedule changed or dropped since, or already applied by
   * another worker, matches nothing: a schedule never fires in an old version nor twice in
   * effect. The groups go in as few round trips as FerretDB allows (lib/mongo-helpers.ts). Returns the ids this call changed (marked `runId`).
   */
  async fire(groups: readonly FiringGroup[], runId: string, at: string): Promise<Set<string>> {
    if (groups.length === 0) return new Set();
    const operations: AnyBulkWriteOperation<SubscriptionDocument>[] = groups.map(({ merchantId, state, firing, ids }, group) => {
      const update = updateFor(firing.change, firing.touches ? at : undefined, { scheduleRun: runId });
      // A change of status carries its event, in the same update; one entry for the whole group, named by the run and group (src/events/outbox.ts).
      if (firing.change.status !== state.status) update.$push = { outbox: outboxEntry(state.status, firing.change.status, at, { kind: 'schedule' }, `${runId}:${group}`) };
      return { updateMany: { filter: { _id: { $in: [...ids] }, merchantId, status: state.status, nextScheduledAt: state.nextScheduledAt, ...exactSchedule(state) }, update } };
    });
    const all = groups.flatMap((g) => g.ids);
    const modified = await bulkWriteInParts(this.collection, operations);
    // A resume still pending after a scheduled pause: another worker's poll may be settling the clock.
    await this.clock.note(groups.map((g) => g.firing.change.set.nextScheduledAt));
    if (modified === all.length) return new Set(all);
    // Some were changed meanwhile (by a request, or another worker): read back which are ours.
    const byMerchant = new Map<string, string[]>();
    for (const { merchantId, ids } of groups) byMerchant.set(merchantId, [...(byMerchant.get(merchantId) ?? []), ...ids]);
    const filters = [...byMerchant].map(([merchantId, ids]) => ({ merchantId, _id: { $in: ids } }));
    const ours = await this.collection.find({ ...(filters.length === 1 ? filters[0]! : { $or: filters }), scheduleRun: runId }, { projection: { _id: 1 } }).toArray();
    return new Set(ours.map((d) => d._id));
  }
}
