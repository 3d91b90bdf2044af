/**
 * The writes of a subscription's holders (subscriptions.rules.ts, HolderField): a
 * hold covering the subscriptions it is placed over, its bulk commands (its pause, its release),
 * and an explicit pause giving a held subscription its own pause back. One of the stores of the
 * `subscriptions` collection (subscription.stores.ts), with the updates and outbox entries of
 * subscription.document.ts, so that a hold's changes and their events are written exactly as a
 * bulk request's are.
 */
import type { AnyBulkWriteOperation, Collection, Db, Filter, UpdateFilter } from 'mongodb';
import { bulkWriteInParts } from '../db/mongo-helpers.js';
import { livemodeOf } from '../merchants/livemode.js';
import { partsOf } from '../lib/parts.js';
import { RETRY } from '../retry-policies.js';
import { untilSettled } from '../lib/retry.js';
import {
  KEPT_COMMAND_MARKS,
  SHOWN_PROJECTION,
  commandMarks,
  commandUpdate,
  dueFieldOf,
  subscriptionsIn,
  whereEventFieldsAre,
  type ShownSchedule,
  type SubscriptionDocument,
} from './subscription.document.js';
import { holdNoticeEntry } from './outbox.js';
import type { PendingTimes } from './pending-times.js';
import { HOLD_RELEASE, planHoldPause, releaseResumes, resumedByRelease } from './holders.rules.js';
import type { Change, ChangeCause, Operation, SubscriptionStatus } from './subscriptions.rules.js';

/** Subscriptions one write of a hold's cover names at most. */
const COVER_PART = 1000;

/** A hold's command on one subscription, as a bulk command's outcome (CommandOutcome). */
export type HoldOutcome =
  { readonly outcome: 'applied' | 'noop' } | { readonly outcome: 'skipped'; readonly reason: 'cancelled' | 'not_found' };

/** What a hold's command changes, and on which subscriptions: those it alone decides for. */
interface HoldChange {
  readonly from: SubscriptionStatus;
  readonly change: Change;
  /** The subscriptions it changes, as a filter and as a test of a document read. */
  readonly filter: Filter<SubscriptionDocument>;
  readonly changes: (doc: SubscriptionDocument) => boolean;
  /** What it writes to the others, beside its no-op mark. */
  readonly leave: UpdateFilter<SubscriptionDocument>;
  /** Whether it brings forward, on the others, their own resume's notice a hold kept waiting (subscriptions.rules.ts, FIRE). */
  readonly rearmsNotice: boolean;
}

/**
 * A hold's pause changes the `fulfilled` subscriptions it still covers (one that left it meanwhile,
 * by an explicit resume, is left alone); its release at `at` resumes those it alone holds
 * (holders.rules.ts, releaseResumes) and takes itself out of every other one's holders. The
 * release's filter names the holders; the rest of the rule (no own pauseAt due by `at`) is decided
 * on each document read, whose pending times the update then filters on exactly (whereEventFieldsAre;
 * the first update of all, on none pending).
 */
function holdChange(operation: Operation, holdId: string, at: string): HoldChange {
  if (operation === 'PAUSE')
    return {
      from: 'fulfilled',
      change: planHoldPause().whenFrom,
      filter: { status: 'fulfilled', holdIds: holdId },
      changes: (doc) => doc.status === 'fulfilled' && (doc.holdIds ?? []).includes(holdId),
      leave: {},
      rearmsNotice: false,
    };
  return {
    from: 'paused',
    change: HOLD_RELEASE,
    filter: { status: 'paused', ownPause: false, holdIds: [holdId] },
    changes: (doc) => releaseResumes(doc, holdId, at),
    leave: { $pull: { holdIds: holdId } },
    rearmsNotice: true,
  };
}

interface Group {
  readonly write: (ids: string[]) => AnyBulkWriteOperation<SubscriptionDocument>;
  readonly ids: string[];
  readonly outcome: HoldOutcome;
}

const APPLIED: HoldOutcome = { outcome: 'applied' };
const NOT_FOUND: HoldOutcome = { outcome: 'skipped', reason: 'not_found' };
const leftAs = (doc: SubscriptionDocument): HoldOutcome =>
  doc.status === 'cancelled' ? { outcome: 'skipped', reason: 'cancelled' } : { outcome: 'noop' };

const HOLDER_PROJECTION = { status: 1, ownPause: 1, holdIds: 1, noticeAt: 1, bulkCommands: 1, ...SHOWN_PROJECTION } as const;

export class HoldersStore {
  private readonly collection: Collection<SubscriptionDocument>;
  private readonly statementsPerCommand: number | undefined;
  private readonly pendingTimes: PendingTimes | undefined;

  constructor(db: Db, writes: { readonly statementsPerCommand?: number | undefined; readonly pendingTimes?: PendingTimes } = {}) {
    this.collection = subscriptionsIn(db);
    this.statementsPerCommand = writes.statementsPerCommand;
    this.pendingTimes = writes.pendingTimes;
  }

  /**
   * The merchant's subscriptions a hold placed now covers: every one not cancelled, in id order; at
   * most `limit` of them. Sorted here, not by the query, so that the merchant_filter index alone
   * can serve it (merchantId, status and _id are all in it) and stop at the limit.
   */
  async coverable(merchantId: string, limit: number): Promise<string[]> {
    const docs = await this.collection
      .find({ merchantId, status: { $ne: 'cancelled' } }, { projection: { _id: 1 } })
      .limit(limit)
      .toArray();
    return docs.map((d) => d._id).sort();
  }

  /** Adds the hold to these subscriptions' holders (those not cancelled), a part at a time, each part under `guard` (the caller's per-subscription queue). */
  async cover(
    merchantId: string,
    ids: readonly string[],
    holdId: string,
    guard: (ids: readonly string[], task: () => Promise<void>) => Promise<void>,
  ): Promise<void> {
    for (const part of partsOf(ids, COVER_PART))
      await guard(part, async () => {
        await this.collection.updateMany(
          { _id: { $in: [...part] }, merchantId, status: { $ne: 'cancelled' } },
          { $addToSet: { holdIds: holdId } },
        );
      });
  }

  /** The subscriptions the hold covers (of `status`, if given), in id order. */
  async coveredBy(merchantId: string, holdId: string, status?: SubscriptionStatus): Promise<string[]> {
    const docs = await this.collection
      .find({ merchantId, holdIds: holdId, ...(status ? { status } : {}) }, { projection: { _id: 1 } })
      .sort({ _id: 1 })
      .toArray();
    return docs.map((d) => d._id);
  }

  /**
   * Pushes a hold's notice (holdNoticeEntry) into the outbox of each subscription its release at
   * `resumeAt` will resume (holders.rules.ts, resumedByRelease): covered by it alone, with no pause
   * of its own, started or scheduled, keeping it paused then. The filter is that rule, which each
   * update repeats, so that one changed meanwhile is passed over. A part at a time, each under
   * `guard` (the caller's per-subscription queue: where the engine's updates are not atomic, an
   * entry pushed beside another writer's update of the same subscription, such as the relay
   * clearing its outbox, would be lost); one that has the entry already is passed over. Returns
   * the ids it went to.
   */
  async pushNotice(
    merchantId: string,
    holdId: string,
    resumeAt: string,
    at: string,
    guard: (ids: readonly string[], task: () => Promise<void>) => Promise<void>,
  ): Promise<string[]> {
    const entry = holdNoticeEntry(holdId, resumeAt, at);
    const noOwnPauseDue = { pauseAt: { $not: { $lte: resumeAt } } };
    const filter: Filter<SubscriptionDocument> = {
      merchantId,
      holdIds: [holdId],
      $or: [
        { status: 'fulfilled', ...noOwnPauseDue },
        { status: 'paused', ownPause: false, ...noOwnPauseDue },
        { status: { $in: ['fulfilled', 'paused'] }, resumeAt: { $lte: resumeAt } },
      ],
      'outbox.key': { $ne: entry.key },
    };
    const docs = await this.collection
      .find(filter, { projection: { status: 1, ownPause: 1, holdIds: 1, pauseAt: 1, resumeAt: 1 } })
      .sort({ _id: 1 })
      .toArray();
    const sent: string[] = [];
    for (const part of partsOf(
      docs.filter((d) => resumedByRelease(d, holdId, resumeAt)).map((d) => d._id),
      COVER_PART,
    )) {
      const ids = [...part];
      await guard(ids, async () => {
        await this.collection.updateMany({ ...filter, _id: { $in: ids } }, { $push: { outbox: entry } });
      });
      sent.push(...ids);
    }
    return sent;
  }

  /** An explicit pause of a paused subscription: it holds its own pause again (ownPause absent). False when it is not paused any more. */
  async claimOwnPause(merchantId: string, id: string): Promise<boolean> {
    const result = await this.collection.updateOne({ _id: id, merchantId, status: 'paused' }, { $unset: { ownPause: '' } });
    return result.matchedCount === 1;
  }

  /**
   * Applies a hold's bulk command to the subscriptions it has not reached yet, marking each in the
   * same update as its change, as SubscriptionsRepository.applyCommand does: first one update of
   * every one the hold changes with no schedule to keep or drop (the usual case: one round trip),
   * then, for the others, one read and one update per set of subscriptions read alike, filtered on
   * what was read, so that a subscription another writer changed meanwhile is read again.
   * Returns the outcome of each settled; the rest kept changing.
   */
  async apply(
    merchantId: string,
    ids: readonly string[],
    operation: Operation,
    requestId: string,
    cause: ChangeCause & { readonly holdId: string },
    at: string,
  ): Promise<Map<string, HoldOutcome>> {
    const hold = holdChange(operation, cause.holdId, at);
    const notReached = { merchantId, bulkCommands: { $nin: commandMarks(requestId) } };
    const mark = (kind: 'applied' | 'noop') => ({ bulkCommands: { $each: [`${requestId}:${kind}`], $slice: -KEPT_COMMAND_MARKS } });
    const changing = (before: ShownSchedule, filter: Filter<SubscriptionDocument>): AnyBulkWriteOperation<SubscriptionDocument> => ({
      updateMany: {
        filter: { ...filter, ...notReached, ...hold.filter, ...whereEventFieldsAre(hold.change, before) },
        update: commandUpdate(merchantId, hold.from, hold.change, before, at, { cause, requestId }, mark('applied')),
      },
    });
    const outcomes = new Map<string, HoldOutcome>();
    if ((await bulkWriteInParts(this.collection, [changing({}, { _id: { $in: [...ids] } })], this.statementsPerCommand)) === ids.length) {
      for (const id of ids) outcomes.set(id, APPLIED);
      return outcomes;
    }
    // A notice a hold kept waiting (its time passed while held) falls due again once the hold is gone.
    const rearmed = (read: SubscriptionDocument) =>
      hold.rearmsNotice && read.noticeAt !== undefined && read.noticeAt <= at ? read.noticeAt : undefined;
    const leaving = (read: SubscriptionDocument, ids: string[]): AnyBulkWriteOperation<SubscriptionDocument> => {
      const notice = rearmed(read);
      return {
        updateMany: {
          // Exactly as read: a subscription whose holders changed meanwhile is read again, never left paused without one.
          filter: {
            _id: { $in: ids },
            ...notReached,
            status: read.status,
            ownPause: read.ownPause ?? null,
            holdIds: read.holdIds ?? null,
            ...(notice !== undefined ? { noticeAt: notice } : {}),
          } as Filter<SubscriptionDocument>,
          // Due at the release: its event says when it was sent, and names the same resume as ever.
          update: {
            ...hold.leave,
            $push: mark('noop'),
            ...(notice !== undefined ? { $set: { noticeAt: at }, $min: { [dueFieldOf(merchantId)]: at } } : {}),
          },
        },
      };
    };
    let open = [...ids];
    await untilSettled(RETRY.concurrentWriter, async () => {
      const docs = await this.collection.find({ _id: { $in: open }, merchantId }, { projection: HOLDER_PROJECTION }).toArray();
      const found = new Map(docs.map((d) => [d._id, d]));
      const groups = new Map<string, Group>();
      const add = (key: string, id: string, write: Group['write'], outcome: HoldOutcome) => {
        const group = groups.get(key) ?? { write, ids: [], outcome };
        group.ids.push(id);
        groups.set(key, group);
      };
      for (const id of open) {
        const doc = found.get(id);
        const settled = doc ? markedOutcome(doc, requestId) : NOT_FOUND;
        if (settled) outcomes.set(id, settled);
        else if (hold.changes(doc!))
          add(
            JSON.stringify(['change', whereEventFieldsAre(hold.change, doc!)]),
            id,
            (ids) => changing(doc!, { _id: { $in: ids } }),
            APPLIED,
          );
        else
          add(
            JSON.stringify(['leave', doc!.status, doc!.ownPause ?? null, doc!.holdIds ?? null, rearmed(doc!) ?? null]),
            id,
            (ids) => leaving(doc!, ids),
            leftAs(doc!),
          );
      }
      const all = [...groups.values()];
      const expected = all.reduce((n, g) => n + g.ids.length, 0);
      const writes = all.map((g) => g.write(g.ids));
      const written = writes.length > 0 ? await bulkWriteInParts(this.collection, writes, this.statementsPerCommand) : 0;
      // Where some did not match (changed meanwhile), the next read finds the marks of those that did.
      if (written === expected) for (const g of all) for (const id of g.ids) outcomes.set(id, g.outcome);
      if (livemodeOf(merchantId) && [...found.values()].some((d) => rearmed(d) !== undefined)) await this.pendingTimes?.note([at]);
      open = open.filter((id) => !outcomes.has(id));
      return open.length === 0 || undefined;
    });
    return outcomes;
  }
}

/** The outcome a subscription's mark of this request records, if it has one. */
function markedOutcome(doc: SubscriptionDocument, requestId: string): HoldOutcome | undefined {
  const [applied, noop] = commandMarks(requestId);
  const kept = doc.bulkCommands ?? [];
  if (kept.includes(applied)) return APPLIED;
  return kept.includes(noop) ? leftAs(doc) : undefined;
}
