/**
 * Bulk commands as the subscriptions they reach store them: each command's change and its mark on
 * the subscription go in one update of its document, so a chunk run again finds its commands done
 * (docs/design.md §6). One of the four stores of the `subscriptions` collection
 * (subscription.document.ts): it groups the subscriptions by what the rules make of them and
 * writes each group in one statement.
 */
import type { AnyBulkWriteOperation, Collection, Db, Filter, UpdateFilter } from 'mongodb';
import { livemodeOf } from '../merchants/livemode.js';
import { changedSince, walkCommands, type CommandFound, type CommandMark, type CommandState } from './bulk-commands.rules.js';
import type { PendingTimes } from './pending-times.js';
import {
  KEPT_COMMAND_MARKS,
  SHOWN_PROJECTION,
  commandMarks,
  commandUpdate,
  fieldsEventsRead,
  markOn,
  subscriptionsIn,
  whereEventFieldsAre,
  type ShownSchedule,
  type SubscriptionDocument,
} from './subscription.document.js';
import type { WriteCommand } from './command.js';
import { Grouping, writeGroups, type WriteGroup } from './grouped-write.js';
import type { Change, ChangeCause, CommandPlan, SubscriptionStatus } from './subscriptions.rules.js';

/** A no-op's mark, and the holder fields the plan gives back to those already in its target status (CommandPlan.alreadyUnset). */
function noopUpdate(plan: CommandPlan, push: UpdateFilter<SubscriptionDocument>['$push']): UpdateFilter<SubscriptionDocument> {
  if (plan.alreadyUnset.length === 0) return { $push: push };
  return { $push: push, $unset: Object.fromEntries(plan.alreadyUnset.map((f) => [f, ''])) };
}

/** One of the bulk commands applyTogether applies: its request, the cause its events carry, the subscriptions it names among those applied together. */
export interface TogetherCommand {
  readonly requestId: string;
  readonly cause: ChangeCause;
  readonly ids: readonly string[];
  /** The request's trace context (W3C traceparent), when tracing is on: its changes' events continue it. */
  readonly trace?: string | undefined;
}

/** A subscription applyTogether settled: its status after the write, and each command's mark on it, in the commands' order. */
export interface TogetherState {
  readonly status: SubscriptionStatus;
  readonly marks: readonly (CommandMark | undefined)[];
}

/** An undo's condition (CommandPlan.unchangedSince): its commands change and mark only what was not modified since. */
const unchangedSinceOf = (plan: CommandPlan): Filter<SubscriptionDocument> =>
  plan.unchangedSince === undefined ? {} : { modifiedAt: { $lte: plan.unchangedSince } };

/** How the bulk commands store writes (src/main/compose-stores.ts). */
export interface BulkCommandsStoreOptions {
  /** Told of every pending time written here, after the write. */
  readonly pendingTimes?: PendingTimes;
  /** At most this many statements per write command (db/mongo-helpers.ts); absent: no limit. */
  readonly statementsPerCommand?: number;
}

export class BulkCommandsStore {
  private readonly collection: Collection<SubscriptionDocument>;

  constructor(
    db: Db,
    private readonly options: BulkCommandsStoreOptions = {},
  ) {
    this.collection = subscriptionsIn(db);
  }

  /**
   * Applies one bulk command to the subscriptions it has not reached yet, marking each in the same
   * document update: those in `from` change to `to` (marked applied), those already in `to` are
   * marked noop. A repeated call changes nothing. Each change's event goes into the outbox in the
   * same update (one entry, the same in every document updated together: its key is the requestId,
   * and the event id is made from it and the subscription's id). An undo's command
   * (`plan.unchangedSince`) changes and marks none modified after its bound: those are skipped.
   */
  async applyCommand(
    command: WriteCommand,
    plan: CommandPlan,
  ): Promise<{ allApplied: boolean; allNoop: boolean; states?: Map<string, CommandState> }> {
    const { merchantId, ids, requestId } = command;
    const target = { collection: this.collection, statementsPerCommand: this.options.statementsPerCommand };
    const notReached = { _id: { $in: [...ids] }, merchantId, bulkCommands: { $nin: commandMarks(requestId) }, ...unchangedSinceOf(plan) };
    const mark = (kind: CommandMark) => ({ bulkCommands: { $each: [`${requestId}:${kind}`], $slice: -KEPT_COMMAND_MARKS } });
    /** Writes `change` and its events to the subscriptions in `from` not reached yet, marked `kind`: how many it changed. */
    const writing = async (from: SubscriptionStatus, change: Change, kind: CommandMark, expected: number) => {
      const reached = { ...notReached, status: from };
      const applying = (before: ShownSchedule, filter: Filter<SubscriptionDocument>): AnyBulkWriteOperation<SubscriptionDocument> => ({
        updateMany: {
          filter: { ...filter, ...whereEventFieldsAre(change, before) },
          update: commandUpdate(command, { from, change, before }, mark(kind)),
        },
      });
      // The usual case: none has a schedule the command keeps or drops, so every one changes in one update, with nothing read first.
      let { written } = await writeGroups(target, [{ ids: [...ids], value: {} }], (g) => applying(g.value, reached));
      if (written < expected && fieldsEventsRead(change).length > 0) {
        // The others: one update per set of pinned values, each filtered on them (at most a few in a chunk).
        const docs = await this.collection.find(reached, { projection: SHOWN_PROJECTION }).toArray();
        const groups = new Grouping<ShownSchedule>();
        for (const doc of docs) groups.add(whereEventFieldsAre(change, doc), doc._id, () => doc);
        written += (await writeGroups(target, groups.all(), (g) => applying(g.value, { ...reached, _id: { $in: g.ids } }))).written;
      }
      return written;
    };
    /** The command's update of subscriptions in `plan.from` whose shown fields are as in `before`, marked applied. */
    const applyingFrom = (before: ShownSchedule, filter: Filter<SubscriptionDocument>): AnyBulkWriteOperation<SubscriptionDocument> => ({
      updateMany: {
        filter: { ...filter, ...whereEventFieldsAre(plan.whenFrom, before) },
        update: commandUpdate(command, { from: plan.from, change: plan.whenFrom, before }, mark('applied')),
      },
    });
    if (!plan.whenAlready) {
      // The usual case: none has a schedule the command keeps or drops, so every one changes in one update, with nothing read first.
      const every = { ids: [...ids], value: {} };
      const { written: applied } = await writeGroups(target, [every], (g) => applyingFrom(g.value, { ...notReached, status: plan.from }));
      // Every one changed: none can be a no-op and there is nothing to read back.
      const result =
        applied === ids.length
          ? { allApplied: true, allNoop: false }
          : {
              allApplied: false,
              ...(await this.settleMixed(command, plan, applyingFrom, noopUpdate(plan, mark('noop')))),
            };
      if (livemodeOf(merchantId)) await this.options.pendingTimes?.note([plan.whenFrom.set.nextScheduledAt]);
      return result;
    }
    const applied = await writing(plan.from, plan.whenFrom, 'applied', ids.length);
    // Every one changed: none can be a no-op and there is nothing to read back.
    const allApplied = applied === ids.length;
    let noop = 0;
    if (!allApplied) {
      // Already in the target status: marked noop; a schedule given still replaces theirs, with its events.
      if (plan.whenAlready) noop = await writing(plan.already, plan.whenAlready, 'noop', ids.length - applied);
      else
        noop = (
          await writeGroups(target, [{ ids: [...ids], value: mark('noop') }], (g) => ({
            updateMany: { filter: { ...notReached, status: plan.already }, update: noopUpdate(plan, g.value) },
          }))
        ).written;
    }
    if (livemodeOf(merchantId))
      await this.options.pendingTimes?.note([plan.whenFrom.set.nextScheduledAt, plan.whenAlready?.set.nextScheduledAt]);
    // None changed and every one marked noop by this call: nothing to read back either.
    return { allApplied, allNoop: applied === 0 && noop === ids.length };
  }

  /**
   * After the command's first update changed some but not all of `ids` (and the command gives the
   * subscriptions already in its target status no schedule): reads every one's status, mark and
   * schedule once, then in one write each marks those already in the target status no-op and
   * changes those the first update skipped for their schedule (one update per set of schedule
   * values, filtered on them). When every write changed what the read expected, returns each
   * found subscription's state after them, so that the caller need not read them again; otherwise
   * (another writer changed some meanwhile) nothing, and the caller reads them (commandStates).
   * A mixed chunk (some applied, some no-ops) so costs one read instead of two, the skipped ones'
   * schedules and then every one's mark (how common such chunks are:
   * docs/performance.md#the-figures-behind-the-codes-choices).
   */
  private async settleMixed(
    { merchantId, ids, requestId }: WriteCommand,
    plan: CommandPlan,
    applyingFrom: (before: ShownSchedule, filter: Filter<SubscriptionDocument>) => AnyBulkWriteOperation<SubscriptionDocument>,
    markNoop: UpdateFilter<SubscriptionDocument>,
  ): Promise<{ allNoop: boolean; states?: Map<string, CommandState> }> {
    const docs = await this.collection
      .find({ _id: { $in: [...ids] }, merchantId }, { projection: { status: 1, bulkCommands: 1, modifiedAt: 1, ...SHOWN_PROJECTION } })
      .toArray();
    const states = new Map<string, CommandState>();
    const noops: string[] = [];
    const groups = new Grouping<ShownSchedule>();
    for (const doc of docs) {
      const mark = markOn(doc, requestId);
      states.set(doc._id, { status: doc.status, mark, modifiedAt: doc.modifiedAt });
      if (changedSince(plan.unchangedSince, doc)) continue;
      const walk = walkCommands(plan, doc.status, [mark]);
      if (walk.reached.length === 0) continue;
      if (walk.applied < 0) noops.push(doc._id);
      // One the first update skipped for its schedule: written again, filtered on it (else another writer changed it: left to the caller).
      else if (fieldsEventsRead(plan.whenFrom).length > 0) groups.add(whereEventFieldsAre(plan.whenFrom, doc), doc._id, () => doc);
    }
    const notReached = { merchantId, bulkCommands: { $nin: commandMarks(requestId) }, ...unchangedSinceOf(plan) };
    // The no-ops are one more group, marked only.
    const all: WriteGroup<ShownSchedule | undefined>[] = [...groups.all(), ...(noops.length > 0 ? [{ ids: noops, value: undefined }] : [])];
    const target = { collection: this.collection, statementsPerCommand: this.options.statementsPerCommand };
    const { complete } = await writeGroups(target, all, (g): AnyBulkWriteOperation<SubscriptionDocument> =>
      g.value === undefined
        ? { updateMany: { filter: { ...notReached, _id: { $in: g.ids }, status: plan.already }, update: markNoop } }
        : applyingFrom(g.value, { ...notReached, _id: { $in: g.ids }, status: plan.from }),
    );
    const allNoop = noops.length === ids.length;
    if (!complete) return { allNoop: false };
    for (const id of noops) states.set(id, { status: plan.already, mark: 'noop' });
    for (const g of groups.all()) for (const id of g.ids) states.set(id, { status: plan.whenFrom.status, mark: 'applied' });
    return { allNoop, states };
  }

  /**
   * Several bulk commands of one merchant and plan (one that gives a subscription already in the
   * target status nothing: `whenAlready` undefined), in their order, applied to the subscriptions
   * they name with one read and one write of each subscription instead of one or two per command.
   * Each subscription's commands are walked in order by the rules (walkCommands), as the sequential
   * path would apply them; subscriptions walked alike are written by one statement, with the events
   * of the request whose command changes them. The marks of all go in that one update, filtered on
   * the status read and on none of them being there yet, so that a subscription another writer
   * changed meanwhile is left as it is.
   *
   * Returns, for each subscription settled here, its status after the write and each command's mark
   * (undefined: the command did not reach it, nor does it need to: its status is neither `from` nor
   * the target). A subscription missing from the map (not found, or changed meanwhile) is left to
   * applyCommand, command by command, which finds any mark written here.
   *
   * Why, on any server: every document an update changes is written (and journaled, and
   * replicated) however the updates are grouped, and a run's commands often name a subscription
   * more than once; applied one after another, each writes it again (its change, then a no-op
   * mark per later command). Once per run writes fewer documents in fewer statements (the
   * figures: docs/performance.md#the-figures-behind-the-codes-choices).
   */
  async applyTogether(
    merchantId: string,
    plan: CommandPlan,
    commands: readonly TogetherCommand[],
    at: string,
  ): Promise<Map<string, TogetherState>> {
    const named = commands.map((c) => new Set(c.ids));
    const found = (doc: Pick<SubscriptionDocument, '_id' | 'bulkCommands'>) =>
      commands.map((c, i): CommandFound => (named[i]!.has(doc._id) ? markOn(doc, c.requestId) : 'unnamed'));
    const ids = [...new Set(commands.flatMap((c) => c.ids))];
    const docs = await this.collection
      .find({ _id: { $in: ids }, merchantId }, { projection: { status: 1, bulkCommands: 1, ...SHOWN_PROJECTION } })
      .toArray();
    const settled = new Map<string, TogetherState>();
    // Subscriptions written by one statement: the same status read, the same command applying, the same marks pushed and the
    // same schedule values. Their marks kept from before may differ (a run repeated with other companions), so each keeps its own.
    const grouping = new Grouping<{
      status: SubscriptionStatus;
      /** Its status after the write (walkCommands). */
      after: SubscriptionStatus;
      applied: number;
      pushed: readonly number[];
      before: ShownSchedule;
      marks: Map<string, readonly (CommandMark | undefined)[]>;
    }>();
    for (const doc of docs) {
      const { status, applied, reached: pushed, marks: marked } = walkCommands(plan, doc.status, found(doc));
      if (pushed.length === 0) {
        settled.set(doc._id, { status, marks: marked });
        continue;
      }
      const key = [doc.status, applied, pushed, applied >= 0 ? whereEventFieldsAre(plan.whenFrom, doc) : null];
      const group = grouping.add(key, doc._id, () => ({
        status: doc.status,
        after: status,
        applied,
        pushed,
        before: doc,
        marks: new Map(),
      }));
      group.value.marks.set(doc._id, marked);
    }
    const groups = grouping.all().map((g) => g.value);
    const target = { collection: this.collection, statementsPerCommand: this.options.statementsPerCommand };
    const { complete } = await writeGroups(target, grouping.all(), ({ ids: named, value }): AnyBulkWriteOperation<SubscriptionDocument> => {
      const { status, applied, pushed, before } = value;
      const mark = {
        bulkCommands: {
          $each: pushed.map((i) => `${commands[i]!.requestId}:${i === applied ? 'applied' : 'noop'}`),
          $slice: -KEPT_COMMAND_MARKS,
        },
      };
      const filter = {
        _id: { $in: named },
        merchantId,
        status,
        bulkCommands: { $nin: pushed.flatMap((i) => commandMarks(commands[i]!.requestId)) },
      };
      if (applied < 0) return { updateMany: { filter, update: noopUpdate(plan, mark) } };
      // Its events are the request's whose command made the change, in that request's trace (outbox.ts).
      return {
        updateMany: {
          filter: { ...filter, ...whereEventFieldsAre(plan.whenFrom, before) },
          update: commandUpdate({ ...commands[applied]!, merchantId, at }, { from: plan.from, change: plan.whenFrom, before }, mark),
        },
      };
    });
    if (complete) {
      for (const g of groups) for (const [id, reached] of g.marks) settled.set(id, { status: g.after, marks: reached });
    } else {
      // Another writer changed some meanwhile: those whose marks are all there were written (here, or by a run of the same chunks).
      const back = await this.collection
        .find({ _id: { $in: groups.flatMap((g) => [...g.marks.keys()]) }, merchantId }, { projection: { bulkCommands: 1 } })
        .toArray();
      const byId = new Map(back.map((d) => [d._id, d.bulkCommands ?? []]));
      for (const g of groups) {
        for (const [id, marked] of g.marks) {
          const kept = byId.get(id) ?? [];
          const found = g.pushed.map((i) => commandMarks(commands[i]!.requestId).find((m) => kept.includes(m)));
          if (found.some((m) => m === undefined)) continue;
          const reached = [...marked];
          g.pushed.forEach((i, k) => (reached[i] = found[k]!.endsWith(':applied') ? 'applied' : 'noop'));
          settled.set(id, { status: g.after, marks: reached });
        }
      }
    }
    if (livemodeOf(merchantId) && groups.some((g) => g.applied >= 0))
      await this.options.pendingTimes?.note([plan.whenFrom.set.nextScheduledAt]);
    return settled;
  }

  /** Each found subscription's status and whether the command reached it; absent ids are not in the map. */
  async commandStates(merchantId: string, ids: readonly string[], requestId: string): Promise<Map<string, CommandState>> {
    const docs = await this.collection
      .find({ _id: { $in: [...ids] }, merchantId }, { projection: { status: 1, bulkCommands: 1, modifiedAt: 1 } })
      .toArray();
    return new Map(docs.map((d) => [d._id, { status: d.status, mark: markOn(d, requestId), modifiedAt: d.modifiedAt }]));
  }
}
