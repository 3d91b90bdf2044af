/**
 * Due schedules: the subscriptions whose pending time has come, read for the schedule workers (or a
 * test clock's advance), and `fire`, the one write of a scheduled transition; and the notices of
 * scheduled resumes a change of resumeNoticeHours moves (notice.rules.ts). One of the four
 * stores of the `subscriptions` collection (subscription.document.ts).
 */
import type { AnyBulkWriteOperation, Collection, Db, Filter, UpdateFilter } from 'mongodb';
import { bulkWriteInParts } from '../db/mongo-helpers.js';
import { byMerchantOf } from '../merchants/by-merchant.js';
import { livemodeOf } from '../merchants/livemode.js';
import { earliestOf } from './notice.rules.js';
import { outboxEntries } from './outbox.js';
import type { PendingTimes } from './pending-times.js';
import type { DueCommand } from './command.js';
import type { DueState, DueSubscription, FiringGroup } from './due.rules.js';
import { writeGroups, type WriteGroup } from './grouped-write.js';
import {
  HISTORY_PROJECTION,
  dueFieldOf,
  inModeOf,
  recordingPause,
  snapshotAfter,
  subscriptionsIn,
  updateFor,
  whereKeptFieldsAre,
  whereOwnIds,
  whereScheduleIs,
  withEvents,
  type ShownSchedule,
  type SubscriptionDocument,
} from './subscription.document.js';
import type { SubscriptionStatus } from './subscriptions.rules.js';

/** What a due schedule is decided and shown by (DueSubscription), beside its mode's pending time. */
const DUE_PROJECTION = {
  merchantId: 1,
  status: 1,
  pauseAt: 1,
  resumeAt: 1,
  pauseReason: 1,
  noticeAt: 1,
  modifiedAt: 1,
  holdIds: 1,
  ownPause: 1,
  ...HISTORY_PROJECTION,
} as const;

/** A due subscription as the due reads return it, pending at `pendingAt` (its mode's field: dueFieldOf). */
function dueOfDocument(d: SubscriptionDocument, pendingAt: string): DueSubscription {
  return {
    id: d._id,
    merchantId: d.merchantId,
    status: d.status,
    pauseAt: d.pauseAt ?? null,
    resumeAt: d.resumeAt ?? null,
    pauseReason: d.pauseReason ?? null,
    nextScheduledAt: pendingAt,
    noticeAt: d.noticeAt ?? null,
    modifiedAt: d.modifiedAt,
    held: d.holdIds !== undefined && d.holdIds.length > 0,
    heldOnly: d.ownPause === false,
    recentPauses: d.recentPauses ?? [],
    ...(d.lastResumedAt !== undefined ? { lastResumedAt: d.lastResumedAt } : {}),
  };
}

/** A due state's schedule fields as a document holds them (absent rather than null). */
function shown(state: DueState): ShownSchedule {
  return Object.fromEntries(
    Object.entries({ pauseAt: state.pauseAt, resumeAt: state.resumeAt, pauseReason: state.pauseReason }).filter(([, v]) => v !== null),
  );
}

/** A scheduled resume whose notice was not sent yet, as read (DueStore.upcomingResumes). */
export interface PendingResume {
  readonly id: string;
  readonly status: SubscriptionStatus;
  readonly pauseAt: string | null;
  readonly resumeAt: string;
  readonly noticeAt: string | null;
}

/** How the due store writes (src/main/compose-stores.ts). */
export interface DueStoreOptions {
  /** Told of every pending time written here, after the write. */
  readonly pendingTimes?: PendingTimes;
  /** At most this many statements per write command (db/mongo-helpers.ts); absent: no limit. */
  readonly statementsPerCommand?: number;
}

export class DueStore {
  private readonly collection: Collection<SubscriptionDocument>;

  constructor(
    db: Db,
    private readonly options: DueStoreOptions = {},
  ) {
    this.collection = subscriptionsIn(db);
  }

  /** The earliest pending time of any subscription (served by the due_schedules index). */
  async earliestScheduled(): Promise<string | undefined> {
    const doc = await this.collection.findOne(
      { nextScheduledAt: { $exists: true } },
      { sort: { nextScheduledAt: 1 }, projection: { nextScheduledAt: 1 } },
    );
    return doc?.nextScheduledAt;
  }

  /** Up to `limit` subscriptions with a pending time at or before `now`, earliest first (served by the due_schedules index). */
  async due(now: string, limit: number): Promise<DueSubscription[]> {
    const docs = await this.collection
      .find({ nextScheduledAt: { $lte: now } }, { projection: { nextScheduledAt: 1, ...DUE_PROJECTION } })
      .sort({ nextScheduledAt: 1 })
      .limit(limit)
      .toArray();
    return docs.map((d) => dueOfDocument(d, d.nextScheduledAt!));
  }

  /**
   * Up to `limit` of a test mode's subscriptions with a pending time at or before `upTo` (its
   * clock's), earliest first: what an advance of its clock applies (src/test-mode/). Read along
   * the merchant's own subscriptions (merchant_subscriptions): no index serves live data for it.
   */
  async dueOf(merchantId: string, upTo: string, limit: number): Promise<DueSubscription[]> {
    if (livemodeOf(merchantId)) throw new Error("dueOf reads a test mode only: live schedules are the due poll's");
    const docs = await this.collection
      .find({ merchantId, testScheduledAt: { $lte: upTo } }, { projection: { testScheduledAt: 1, ...DUE_PROJECTION } })
      .sort({ testScheduledAt: 1, _id: 1 })
      .limit(limit)
      .toArray();
    return docs.map((d) => dueOfDocument(d, d.testScheduledAt!));
  }

  /**
   * Applies due schedules: the one write of a scheduled transition, with its event in the same
   * update, through the grouped write (grouped-write.ts). Each group is one conditional statement
   * whose filter is the exact state its subscriptions were read in, so a schedule changed or
   * dropped since, or already applied by another worker, matches nothing: a schedule never fires
   * in an old version nor twice in effect. The groups go in as few commands as the server allows.
   * Returns the ids this call changed (marked with the command's `requestId`, its run).
   */
  async fire(command: DueCommand): Promise<Set<string>> {
    const { groups, requestId: runId, at, cause } = command;
    if (groups.length === 0) return new Set();
    const numbered = groups.map((group, index): WriteGroup<FiringGroup & { readonly index: number }> => ({
      ids: [...group.ids],
      value: { ...group, index },
    }));
    const target = { collection: this.collection, statementsPerCommand: this.options.statementsPerCommand };
    const { complete } = await writeGroups(target, numbered, ({ ids, value }) => {
      const { merchantId, state, ruling, index } = value;
      const update = recordingPause(
        updateFor(ruling.change!, ruling.touches ? at : undefined, { scheduleRun: runId }),
        state.status,
        ruling.change!,
        at,
      );
      // One outbox entry per event for the whole group, named by the run and group (src/subscriptions/outbox.ts).
      // The filter pins every shown field the change keeps, so the entry's subscription is exactly what the update leaves.
      // A notice is named by its resume and time instead: two processes sending it make one event.
      const notice = ruling.due === 'notice';
      const entries = outboxEntries(
        state.status,
        snapshotAfter(ruling.change!, shown(state), ruling.touches ? at : state.modifiedAt),
        cause,
        notice ? `notice:${state.resumeAt}` : `${runId}:${index}`,
        ruling.events,
        notice ? state.noticeAt! : at,
      );
      const write = withEvents(update, entries);
      const filter = {
        _id: { $in: ids },
        merchantId,
        status: state.status,
        [dueFieldOf(merchantId)]: state.nextScheduledAt,
        ...({ noticeAt: state.noticeAt } as Filter<SubscriptionDocument>),
        ...(notice ? { modifiedAt: state.modifiedAt } : {}),
        ...whereScheduleIs(state),
        ...whereKeptFieldsAre(ruling.change!, shown(state)),
        // Held or not as read: a hold placed or released meanwhile makes the group's ruling an old one.
        'holdIds.0': { $exists: state.held },
        ...({ ownPause: state.heldOnly ? false : null } as Filter<SubscriptionDocument>),
      };
      return { updateMany: { filter, update: inModeOf(merchantId, write) } };
    });
    // A resume still pending after a scheduled pause: another worker's poll may be settling the clock.
    await this.options.pendingTimes?.note(groups.filter((g) => livemodeOf(g.merchantId)).map((g) => g.ruling.change?.set.nextScheduledAt));
    if (complete) return new Set(groups.flatMap((g) => g.ids));
    // Some were changed meanwhile (by a request, or another worker): read back which are ours.
    const ours = await Promise.all(
      whereOwnIds(byMerchantOf(groups)).map((own) =>
        this.collection.find({ ...own, scheduleRun: runId }, { projection: { _id: 1 } }).toArray(),
      ),
    );
    return new Set(ours.flat().map((d) => d._id));
  }

  /** The merchant's scheduled resumes whose notice was not sent: what a change of resumeNoticeHours moves. */
  async upcomingResumes(merchantId: string): Promise<PendingResume[]> {
    const docs = await this.collection
      .find(
        { merchantId, status: { $ne: 'cancelled' }, resumeAt: { $exists: true }, noticeFor: { $exists: false } },
        { projection: { status: 1, pauseAt: 1, resumeAt: 1, noticeAt: 1 } },
      )
      .toArray();
    return docs.map((d) => ({
      id: d._id,
      status: d.status,
      pauseAt: d.pauseAt ?? null,
      resumeAt: d.resumeAt!,
      noticeAt: d.noticeAt ?? null,
    }));
  }

  /**
   * Gives these resumes the notice time `noticeAt` makes of their resumeAt (null: none), with
   * their pending time the earliest left: one updateMany per schedule read, filtered on it and on
   * no notice sent, so that a schedule changed or noticed meanwhile is left as it is.
   */
  async setNotices(merchantId: string, pending: readonly PendingResume[], noticeAt: (resumeAt: string) => string | null): Promise<void> {
    const groups = new Map<string, { state: PendingResume; ids: string[] }>();
    for (const p of pending) {
      const key = JSON.stringify([p.status, p.pauseAt, p.resumeAt, p.noticeAt]);
      const group = groups.get(key) ?? { state: p, ids: [] };
      group.ids.push(p.id);
      groups.set(key, group);
    }
    const times: string[] = [];
    const writes = [...groups.values()].map(({ state, ids }): AnyBulkWriteOperation<SubscriptionDocument> => {
      const notice = noticeAt(state.resumeAt);
      const next = earliestOf(state.pauseAt, notice, state.resumeAt)!;
      times.push(next);
      const update: UpdateFilter<SubscriptionDocument> = notice
        ? { $set: { noticeAt: notice, nextScheduledAt: next } }
        : { $set: { nextScheduledAt: next }, $unset: { noticeAt: '' } };
      const filter = {
        _id: { $in: ids },
        merchantId,
        status: state.status,
        noticeFor: { $exists: false },
        ...whereScheduleIs(state),
        ...({ noticeAt: state.noticeAt } as Filter<SubscriptionDocument>),
      };
      return { updateMany: { filter, update: inModeOf(merchantId, update) } };
    });
    await bulkWriteInParts(this.collection, writes, this.options.statementsPerCommand);
    if (livemodeOf(merchantId)) await this.options.pendingTimes?.note(times);
  }

  /** Subscriptions with a pending time at or before `now`, counted up to `cap` (served by the due_schedules index): `subsvc status`. */
  async countDue(now: string, cap: number): Promise<number> {
    return this.collection.countDocuments({ nextScheduledAt: { $lte: now } }, { limit: cap });
  }
}
