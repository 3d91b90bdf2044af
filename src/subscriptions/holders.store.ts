/**
 * The writes of a subscription's holders (subscriptions.rules.ts, HolderField): a hold's bulk
 * commands (its pause, which covers each subscription it reaches, and its release), its notice,
 * and an explicit pause giving a held subscription its own pause back. One of the stores of the
 * `subscriptions` collection (subscription.stores.ts), with the updates and outbox entries of
 * subscription.document.ts, so that a hold's changes and their events are written exactly as a
 * bulk request's are.
 */
import type { AnyBulkWriteOperation, Collection, Db, Filter, UpdateFilter } from 'mongodb';
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
import { holdRule, resumedByRelease, type HoldersMove } from './holders.rules.js';
import type { WriteCommand } from './command.js';
import { Grouping, writeGroups, writeOne } from './grouped-write.js';
import type { Operation, SubscriptionStatus } from './subscriptions.rules.js';

/** A hold's notice: its hold, the resume it announces, and when it is sent. */
export interface HoldNotice {
  readonly holdId: string;
  readonly resumeAt: string;
  readonly at: string;
}

/** Subscriptions one write of a hold's notice names at most. */
const NOTICE_PART = 1000;

/** A hold's command on one subscription, as a bulk command's outcome (CommandOutcome). */
export type HoldOutcome =
  { readonly outcome: 'applied' | 'noop' } | { readonly outcome: 'skipped'; readonly reason: 'cancelled' | 'not_found' };

/**
 * The mark a hold's release leaves on every subscription it names: its pause, should its chunk
 * come later (a hold released before its cover finished), passes over one that has it.
 */
export const releasedMark = (holdId: string): string => `${holdId}:released`;

/** A hold's rule (holders.rules.ts, holdRule) as MongoDB writes it: what it changes, as a filter, and its move of their holders as an update. */
function holdWrites(operation: Operation, holdId: string, at: string) {
  const rule = holdRule(operation, holdId, at);
  const moves: Record<HoldersMove, UpdateFilter<SubscriptionDocument>> = {
    join: { $addToSet: { holdIds: holdId } },
    leave: { $pull: { holdIds: holdId } },
    none: {},
  };
  // The filter restates `changes` as far as a filter can; the rest (no own pauseAt due by `at`) is decided on each document read.
  const filter: Filter<SubscriptionDocument> =
    operation === 'PAUSE' ? { status: 'fulfilled' } : { status: 'paused', ownPause: false, holdIds: [holdId] };
  // A change that clears every holder (the release's resume) needs no move of its own.
  const moved = rule.change.unset.includes('holdIds') ? {} : moves[rule.holders({ status: rule.from })];
  return { ...rule, filter, with: moved, leave: (doc: SubscriptionDocument) => moves[rule.holders(doc)] };
}

/** Subscriptions read alike: the statement that writes them, and the outcome it settles. */
interface Group {
  readonly write: (ids: string[]) => AnyBulkWriteOperation<SubscriptionDocument>;
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
    { holdId, resumeAt, at }: HoldNotice,
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
      NOTICE_PART,
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
    const statement = { filter: { merchantId, status: 'paused' as const }, update: { $unset: { ownPause: '' as const } } };
    // No projection: not every engine takes one on findAndModify (the `updateProjection` capability, db/workarounds.ts).
    return (await writeOne({ collection: this.collection }, { ids: [id], value: statement })) !== null;
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
    command: WriteCommand & { readonly cause: { readonly holdId: string } },
    operation: Operation,
  ): Promise<Map<string, HoldOutcome>> {
    const { merchantId, ids, requestId, cause, at } = command;
    const target = { collection: this.collection, statementsPerCommand: this.statementsPerCommand };
    const hold = holdWrites(operation, cause.holdId, at);
    const released = releasedMark(cause.holdId);
    // A pause passes over what its hold's release reached first; a release leaves its mark for a pause still to come.
    const guards = operation === 'PAUSE' ? [...commandMarks(requestId), released] : commandMarks(requestId);
    const notReached = { merchantId, bulkCommands: { $nin: guards } };
    const marks = (kind: 'applied' | 'noop') => (operation === 'PAUSE' ? [`${requestId}:${kind}`] : [`${requestId}:${kind}`, released]);
    const mark = (kind: 'applied' | 'noop') => ({ bulkCommands: { $each: marks(kind), $slice: -KEPT_COMMAND_MARKS } });
    const changing = (before: ShownSchedule, filter: Filter<SubscriptionDocument>): AnyBulkWriteOperation<SubscriptionDocument> => ({
      updateMany: {
        filter: { ...filter, ...notReached, ...hold.filter, ...whereEventFieldsAre(hold.change, before) },
        update: { ...commandUpdate(command, { from: hold.from, change: hold.change, before }, mark('applied')), ...hold.with },
      },
    });
    const outcomes = new Map<string, HoldOutcome>();
    const every = { ids: [...ids], value: {} };
    if ((await writeGroups(target, [every], (g) => changing(g.value, { _id: { $in: g.ids } }))).complete) {
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
            ...hold.leave(read),
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
      const groups = new Grouping<Group>();
      for (const id of open) {
        const doc = found.get(id);
        const settled = doc ? markedOutcome(doc, requestId, operation === 'PAUSE' ? released : undefined) : NOT_FOUND;
        if (settled) outcomes.set(id, settled);
        else if (hold.changes(doc!))
          groups.add(['change', whereEventFieldsAre(hold.change, doc!)], id, () => ({
            write: (ids) => changing(doc!, { _id: { $in: ids } }),
            outcome: APPLIED,
          }));
        else
          groups.add(['leave', doc!.status, doc!.ownPause ?? null, doc!.holdIds ?? null, rearmed(doc!) ?? null], id, () => ({
            write: (ids) => leaving(doc!, ids),
            outcome: leftAs(doc!),
          }));
      }
      const { complete } = await writeGroups(target, groups.all(), (g) => g.value.write(g.ids));
      // Where some did not match (changed meanwhile), the next read finds the marks of those that did.
      if (complete) for (const g of groups.all()) for (const id of g.ids) outcomes.set(id, g.value.outcome);
      if (livemodeOf(merchantId) && [...found.values()].some((d) => rearmed(d) !== undefined)) await this.pendingTimes?.note([at]);
      open = open.filter((id) => !outcomes.has(id));
      return open.length === 0 || undefined;
    });
    return outcomes;
  }
}

/** The outcome a subscription's mark of this request records, if it has one; `passedOver`: a mark that settles it as left alone. */
function markedOutcome(doc: SubscriptionDocument, requestId: string, passedOver?: string): HoldOutcome | undefined {
  const [applied, noop] = commandMarks(requestId);
  const kept = doc.bulkCommands ?? [];
  if (kept.includes(applied)) return APPLIED;
  return kept.includes(noop) || (passedOver !== undefined && kept.includes(passedOver)) ? leftAs(doc) : undefined;
}
