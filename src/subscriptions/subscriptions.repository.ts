/**
 * The one store of the subscriptions collection: every MongoDB call that reads or writes it, for
 * requests, bulk commands, due schedules and the events outbox. Documents map to the domain's
 * Subscription here; no _id or driver type leaves the repositories.
 */
import { randomUUID } from 'node:crypto';
import type { AnyBulkWriteOperation, Collection, Db, Filter, UpdateFilter } from 'mongodb';
import { bulkWriteInParts, deleteInParts } from '../db/mongo-helpers.js';
import { livemodeOf } from '../lib/livemode.js';
import { inTraceContext } from '../observability/tracing.js';
import { pageOf, type Page, type PageRequest } from '../lib/pagination.js';
import { outboxEntries, type OutboxEntry, type SubscriptionSnapshot } from './outbox.js';
import type { ScheduleClock } from './schedule.clock.js';
import {
  KEPT_PAUSE_TIMES,
  requestEvents,
  type Change,
  type ChangeCause,
  type CommandPlan,
  type RuleState,
  type PauseHistory,
  type Ruling,
  type StoredSchedule,
  type Subscription,
  type SubscriptionStatus,
} from './subscriptions.rules.js';

const SUBSCRIPTIONS_COLLECTION = 'subscriptions';

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
  /**
   * When the last pauses were applied here (oldest first; the last KEPT_PAUSE_TIMES),
   * pushed by the update that pauses it: what a pause policy's maxPausesPerYear counts (docs/design.md §11).
   */
  recentPauses?: string[];
  /** When it was last resumed (paused → fulfilled), set by the update that resumes it: what a pause policy's cooldownDays counts from. */
  lastResumedAt?: string;
  /** The workers' run that last applied a due schedule here, to tell which of a chunk's updates were its own. */
  scheduleRun?: string;
  /** Events of changes not yet in the `events` collection, pushed by the change's own update (src/subscriptions/outbox.ts). */
  outbox?: OutboxEntry[];
  /** A test mode's pending time, in place of `nextScheduledAt` (dueFieldOf). */
  testScheduledAt?: string;
  /** The active holds that cover it (src/subscriptions/holders.store.ts); may be left empty. */
  holdIds?: string[];
  /** false while paused by its holds alone; absent, a paused subscription holds its own pause (HolderField). */
  ownPause?: false;
}

/**
 * Where a subscription keeps its pending time: live ones in `nextScheduledAt` (the due_schedules
 * index, read by the live due poll), a test mode's in `testScheduledAt`, which that index and
 * poll never see: a test mode's schedules fall due only when its clock is advanced (dueOf, read
 * along the merchant's own subscriptions; docs/partners.md). Decided here, on every write.
 */
function dueFieldOf(merchantId: string): 'nextScheduledAt' | 'testScheduledAt' {
  return livemodeOf(merchantId) ? 'nextScheduledAt' : 'testScheduledAt';
}

/** The update as the merchant's mode stores it (dueFieldOf). */
function inModeOf(merchantId: string, update: UpdateFilter<SubscriptionDocument>): UpdateFilter<SubscriptionDocument> {
  if (livemodeOf(merchantId)) return update;
  const rename = (fields: object | undefined) =>
    fields && Object.fromEntries(Object.entries(fields).map(([k, v]) => [k === 'nextScheduledAt' ? 'testScheduledAt' : k, v]));
  return { ...update, $set: rename(update.$set), ...(update.$unset ? { $unset: rename(update.$unset) } : {}) };
}

/** How many bulk command marks a subscription keeps: a run repeated after more than this many later commands is not expected. */
export const KEPT_COMMAND_MARKS = 32;

export type CommandMark = 'applied' | 'noop';

/** A subscription's state as far as one bulk command is concerned. */
export interface CommandState {
  readonly status: SubscriptionStatus;
  /** Set once the command took effect here (it changed the status, or found it already there). */
  readonly mark: CommandMark | undefined;
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

/** What keptAsIn and snapshotAfter read of a document. */
export const SHOWN_PROJECTION = { pauseAt: 1, resumeAt: 1, pauseReason: 1 } as const;
/**
 * What a subscription is read with when it is answered (toSubscription): without the outbox (each
 * pending event holds a whole subscription), the bulk command marks (up to 32) and the workers'
 * bookkeeping, which a request never shows and the driver would otherwise decode on every read.
 */
const VIEW_PROJECTION = { outbox: 0, bulkCommands: 0, scheduleRun: 0 } as const;

export const marks = (requestId: string): [string, string] => [`${requestId}:applied`, `${requestId}:noop`];

/** What a subscription's changeable fields are read from: a document, or what a change leaves in it. */
type SnapshotSource = Pick<SubscriptionDocument, 'status' | 'modifiedAt'> & Partial<Pick<StoredSchedule, ShownScheduleField>>;

/** A subscription's changeable fields, as the read operation shows them (src/subscriptions/outbox.ts). */
export function snapshotOf(doc: SnapshotSource): SubscriptionSnapshot {
  const scheduled = doc.pauseAt !== undefined || doc.resumeAt !== undefined;
  return {
    status: doc.status,
    modifiedAt: doc.modifiedAt,
    ...(scheduled ? { schedule: { pauseAt: doc.pauseAt ?? null, resumeAt: doc.resumeAt ?? null } } : {}),
    ...(doc.status === 'paused' && doc.pauseReason !== undefined ? { pauseReason: doc.pauseReason } : {}),
  };
}

/**
 * A stored subscription as the read operation returns it, with the holds that cover it; an event's
 * subscription is its document with the changeable fields its change left.
 */
export function toSubscription(doc: SubscriptionDocument, snapshot?: SubscriptionSnapshot): Subscription {
  const { status, modifiedAt, ...schedule } = snapshot ?? snapshotOf(doc);
  const held = snapshot === undefined && doc.holdIds !== undefined && doc.holdIds.length > 0 ? { holdIds: doc.holdIds } : {};
  return {
    id: doc._id,
    merchantId: doc.merchantId,
    planId: doc.planId,
    status,
    cycle: doc.cycle,
    createdAt: doc.createdAt,
    modifiedAt,
    ...schedule,
    ...held,
  };
}

type ShownScheduleField = 'pauseAt' | 'resumeAt' | 'pauseReason';
const SHOWN_SCHEDULE_FIELDS: readonly ShownScheduleField[] = ['pauseAt', 'resumeAt', 'pauseReason'];
export type ShownSchedule = Partial<Pick<StoredSchedule, ShownScheduleField>>;

/** The shown schedule fields a change leaves as they are. */
const keptBy = (change: Change) => SHOWN_SCHEDULE_FIELDS.filter((f) => !(f in change.set) && !change.unset.includes(f));

/**
 * A filter on the fields a change leaves as they were in `before` (null: absent). An update that
 * records an event filters on them, so that the subscription its entry carries is exactly what
 * the update leaves, even when another writer changed those fields meanwhile (it then matches nothing).
 */
export function keptAsIn(change: Change, before: ShownSchedule): Filter<SubscriptionDocument> {
  return Object.fromEntries(keptBy(change).map((f) => [f, before[f] ?? null]));
}

/** The shown fields a request's change leaves or drops (whose drop is its `schedule_removed` event): a write that records its events filters on them. */
const pinnedBy = (change: Change) =>
  SHOWN_SCHEDULE_FIELDS.filter((f) => !(f in change.set) && (f !== 'pauseReason' || !change.unset.includes(f)));

/** keptAsIn, and the pending times the change drops as in `before`: the events of a request's change are exactly its write's. */
export function pinnedAs(change: Change, before: ShownSchedule): Filter<SubscriptionDocument> {
  return Object.fromEntries(pinnedBy(change).map((f) => [f, before[f] ?? null]));
}

/** The outbox entries of a request's change to subscriptions in `from` whose shown fields are as in `before` (filtered on with pinnedAs). */
function requestEntries(
  from: SubscriptionStatus,
  change: Change,
  before: ShownSchedule,
  at: string,
  cause: ChangeCause,
  key: string,
): OutboxEntry[] {
  return outboxEntries(from, snapshotAfter(change, before, at), cause, key, requestEvents(from, change, before));
}

/**
 * A bulk command's update of subscriptions in `merchantId`'s mode that are in `from` with shown
 * fields as in `before`: the change, the marks it pushes, and its request's events (continuing
 * `trace`, when given), as the merchant's mode stores them.
 */
export function commandUpdate(
  merchantId: string,
  from: SubscriptionStatus,
  change: Change,
  before: ShownSchedule,
  at: string,
  command: { readonly cause: ChangeCause; readonly requestId: string; readonly trace?: string | undefined },
  push: UpdateFilter<SubscriptionDocument>['$push'],
): UpdateFilter<SubscriptionDocument> {
  const entries = inTraceContext(command.trace, () => requestEntries(from, change, before, at, command.cause, command.requestId));
  return inModeOf(merchantId, withEvents(recordingPause({ ...updateFor(change, at), $push: push }, from, change, at), entries));
}

/** The changeable fields after `change` at `at` of a subscription whose kept fields are as in `before` (filtered on with keptAsIn). */
export function snapshotAfter(change: Change, before: ShownSchedule, at: string): SubscriptionSnapshot {
  const kept = Object.fromEntries(keptBy(change).flatMap((f) => (before[f] === undefined ? [] : [[f, before[f]]])));
  return snapshotOf({ status: change.status, modifiedAt: at, ...kept, ...change.set });
}

/** The update that makes a change; modifiedAt changes unless `at` is undefined. */
function updateFor(change: Change, at: string | undefined, extra: Partial<SubscriptionDocument> = {}): UpdateFilter<SubscriptionDocument> {
  const update: UpdateFilter<SubscriptionDocument> = {
    $set: { status: change.status, ...change.set, ...(at ? { modifiedAt: at } : {}), ...extra },
  };
  if (change.unset.length > 0) update.$unset = Object.fromEntries(change.unset.map((f) => [f, ''])) as Record<keyof StoredSchedule, ''>;
  return update;
}

/** A filter on exact schedule times; null matches a field that is absent (not scheduled). */
function exactSchedule(times: { readonly pauseAt: string | null; readonly resumeAt: string | null }): Filter<SubscriptionDocument> {
  return { pauseAt: times.pauseAt, resumeAt: times.resumeAt } as Filter<SubscriptionDocument>;
}

/**
 * A change made: the subscription as it left it, and `held`: its document with only the outbox
 * entries this change pushed, what the events relay would otherwise read back (EventsRelay.relaySoon).
 */
export interface Changed {
  readonly subscription: Subscription;
  readonly held: OutboxHolder;
}

/** What changeOrRead found: the change made, or the subscription as it was read when the change did not apply (null: none; undefined: not read). */
export type ChangeOrRead =
  | { readonly changed: Changed; readonly current?: undefined }
  | { readonly changed?: undefined; readonly current: Subscription | null | undefined };

/** The filter of change() on a document read: its status, and where given, its schedule times (a missing time is null). */
function isAsExpected(doc: SubscriptionDocument, expected: Expected): boolean {
  if (doc.status !== expected.status) return false;
  return (
    !expected.schedule || ((doc.pauseAt ?? null) === expected.schedule.pauseAt && (doc.resumeAt ?? null) === expected.schedule.resumeAt)
  );
}

/** What a conditional change expects to find: the status and, where given, the exact schedule times. */
export interface Expected {
  readonly status: SubscriptionStatus;
  readonly schedule?: { readonly pauseAt: string | null; readonly resumeAt: string | null };
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

/** What a pause policy reads of a subscription (PauseHistory). */
const HISTORY_PROJECTION = { recentPauses: 1, lastResumedAt: 1 } as const;

/** A bulk request's filter (docs/design.md §6a): each field given narrows the match; times as stored (§5). */
export interface SubscriptionFilter {
  readonly statuses?: readonly SubscriptionStatus[];
  readonly planIds?: readonly string[];
  readonly createdBefore?: string;
  readonly createdAfter?: string;
}

/** The filter as a query: always on one merchant, so that it is served from an index that starts with merchantId. */
function filterQuery(
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

/**
 * A change from `from` that pauses the subscription also records when (`recentPauses`), in the same
 * update, keeping the last KEPT_PAUSE_TIMES (`$slice`: FerretDB honours it with the project's patch,
 * docs/design.md §8); one that resumes it records when in `lastResumedAt`, the same way.
 */
function recordingPause(
  update: UpdateFilter<SubscriptionDocument>,
  from: SubscriptionStatus,
  change: Change,
  at: string,
): UpdateFilter<SubscriptionDocument> {
  if (from === 'paused' && change.status === 'fulfilled') return { ...update, $set: { ...(update.$set ?? {}), lastResumedAt: at } };
  if (from === 'paused' || change.status !== 'paused') return update;
  return { ...update, $push: { ...(update.$push ?? {}), recentPauses: { $each: [at], $slice: -KEPT_PAUSE_TIMES } } };
}

/**
 * The one way events go into the outbox: pushed, in order, by the update that makes the change
 * (of status or of schedule), so that no change is stored without its events (src/subscriptions/outbox.ts).
 */
function withEvents(update: UpdateFilter<SubscriptionDocument>, entries: readonly OutboxEntry[]): UpdateFilter<SubscriptionDocument> {
  if (entries.length === 0) return update;
  return { ...update, $push: { ...(update.$push ?? {}), outbox: { $each: [...entries] } } };
}

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
    held: d.holdIds !== undefined && d.holdIds.length > 0,
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

/** A subscription with events waiting in its outbox, as stored. */
export type OutboxHolder = SubscriptionDocument & { readonly outbox: OutboxEntry[] };

/** The fields a due schedule is decided on, exactly as read. */
export interface DueState extends RuleState {
  readonly status: SubscriptionStatus;
  /** Not decided on, but shown by the subscription a firing's event carries. */
  readonly pauseReason: string | null;
  readonly nextScheduledAt: string;
  /** Whether an active hold covers it: its own scheduled resume then ends its own pause only. */
  readonly held: boolean;
}

export interface DueSubscription extends DueState, PauseHistory {
  readonly id: string;
  readonly merchantId: string;
  /** When pauses were last applied to it, and it was last resumed: a due pause's pause policy reads them. */
  readonly recentPauses: readonly string[];
}

/** One ruling for the due subscriptions of one merchant that were read in exactly the same state. */
export interface FiringGroup {
  readonly merchantId: string;
  readonly state: DueState;
  readonly ruling: Ruling;
  readonly ids: readonly string[];
}

/** A no-op's mark, and the holder fields the plan gives back to those already in its target status (CommandPlan.alreadyUnset). */
function noopUpdate(plan: CommandPlan, push: UpdateFilter<SubscriptionDocument>['$push']): UpdateFilter<SubscriptionDocument> {
  if (plan.alreadyUnset.length === 0) return { $push: push };
  return { $push: push, $unset: Object.fromEntries(plan.alreadyUnset.map((f) => [f, ''])) };
}

/** Ids grouped by their merchant (id → merchant, or groups of one merchant's ids): each merchant's part of a filter names it. */
export function byMerchantOf(
  ids: ReadonlyMap<string, string> | Iterable<{ readonly merchantId: string; readonly ids: readonly string[] }>,
): Map<string, string[]> {
  const grouped = new Map<string, string[]>();
  const add = (merchantId: string, id: string) => {
    const group = grouped.get(merchantId);
    if (group) group.push(id);
    else grouped.set(merchantId, [id]);
  };
  if (ids instanceof Map) for (const [id, merchantId] of ids as ReadonlyMap<string, string>) add(merchantId, id);
  else
    for (const { merchantId, ids: own } of ids as Iterable<{ merchantId: string; ids: readonly string[] }>)
      for (const id of own) add(merchantId, id);
  for (const [merchantId, group] of grouped) if (group.length === 0) grouped.delete(merchantId);
  return grouped;
}

/**
 * One filter per merchant, naming it with its own ids (docs/sharding.md): `{merchantId, _id: {$in}}`,
 * read or written one merchant at a time, so that each command goes to one shard and every engine
 * serves it from the `_id` index. Until 2026-11-25 several merchants' ids went as one `$or` of
 * these filters, which the embedded FerretDB serves from no index: the events relay's read of
 * eight merchants' outboxes under `npm run load` read every subscription (446 ms per batch of 101).
 */
function ownedIds(byMerchant: ReadonlyMap<string, readonly string[]>): Filter<SubscriptionDocument>[] {
  return [...byMerchant].map(([merchantId, own]) => ({ merchantId, _id: { $in: [...own] } }));
}

/** How the store writes, decided by the composition root from the server's capabilities (src/main/composition.ts). */
export interface SubscriptionsStoreOptions {
  /** Told of every pending time written here, after the write (schedule.clock.ts); absent where the due query is served by an index. */
  readonly clock?: ScheduleClock;
  /** At most this many statements per write command (db/mongo-helpers.ts); absent: no limit. */
  readonly statementsPerCommand?: number;
  /** The conditional update answers only what a read shows (VIEW_PROJECTION); absent: the whole document (FerretDB v1 refuses a projection on findAndModify). */
  readonly updateProjection?: boolean;
  /** Deletes in parts of at most this many documents (db/workarounds.ts); absent: one statement. */
  readonly documentsPerDelete?: number;
}

export class SubscriptionsRepository {
  /** Shared with the holders store beside it (holders.store.ts), which writes a subscription's holders. */
  readonly collection: Collection<SubscriptionDocument>;
  private readonly pendingListeners: ((at: string) => void)[] = [];

  constructor(
    db: Db,
    readonly options: SubscriptionsStoreOptions = {},
  ) {
    this.collection = db.collection<SubscriptionDocument>(SUBSCRIPTIONS_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ merchantId: 1, _id: 1 }, { name: 'merchant_subscriptions' });
    await this.collection.createIndex({ nextScheduledAt: 1 }, { name: 'due_schedules' });
    // Bulk by filter (docs/design.md §6a): equality on merchantId, $in on status and planId, a range
    // on createdAt; with _id last, the ids and statuses it reads come from the index alone.
    await this.collection.createIndex({ merchantId: 1, status: 1, planId: 1, createdAt: 1, _id: 1 }, { name: 'merchant_filter' });
    await this.collection.createIndex({ 'outbox.key': 1 }, { name: 'subscription_outbox', sparse: true });
    // What a hold covers: its release reads them by merchant and hold.
    await this.collection.createIndex({ merchantId: 1, holdIds: 1 }, { name: 'merchant_hold_covers' });
  }

  /** Told the earliest of the pending times each write sets, after the write: this process's schedule worker (ScheduleWorker.wakeBy). */
  onPendingTimes(listener: (at: string) => void): void {
    this.pendingListeners.push(listener);
  }

  /** Tells the clock, where there is one, and the listeners of pending times just written. */
  private async noteTimes(times: readonly (string | undefined)[]): Promise<void> {
    const pending = times.filter((t): t is string => t !== undefined);
    if (pending.length === 0) return;
    const earliest = pending.reduce((a, b) => (a < b ? a : b));
    await this.options.clock?.note(earliest);
    for (const listener of this.pendingListeners) listener(earliest);
  }

  async find(merchantId: string, id: string): Promise<Subscription | undefined> {
    const doc = await this.collection.findOne({ _id: id, merchantId }, { projection: VIEW_PROJECTION });
    return doc ? toSubscription(doc) : undefined;
  }

  /**
   * One conditional atomic update: makes the change only if the subscription is still as expected;
   * the change's events (requestEvents: of status and of schedule) go into the outbox in the same
   * update, with the subscription as the update leaves it. The fields it keeps and the pending
   * times it drops are filtered on: first as expected (absent unless `expected.schedule` names
   * them: the usual case, one round trip as without events), else as read just before.
   */
  async change(
    merchantId: string,
    id: string,
    expected: Expected,
    change: Change,
    at: string,
    cause: ChangeCause,
  ): Promise<Changed | undefined> {
    return (await this.changeOrRead(merchantId, id, expected, change, at, cause)).changed;
  }

  /**
   * change(), and when it does not apply, the subscription as the change's own second try read it
   * (null: there is none; undefined: not read, or changed meanwhile), so that a caller that needs
   * it reads nothing again: a pause of a paused subscription costs two round trips, not three.
   */
  async changeOrRead(
    merchantId: string,
    id: string,
    expected: Expected,
    change: Change,
    at: string,
    cause: ChangeCause,
  ): Promise<ChangeOrRead> {
    const filter: Filter<SubscriptionDocument> = {
      _id: id,
      merchantId,
      status: expected.status,
      ...(expected.schedule ? exactSchedule(expected.schedule) : {}),
    };
    const recording = (before: ShownSchedule) => {
      const entries = requestEntries(expected.status, change, before, at, cause, randomUUID());
      return this.changeWhere(
        { ...filter, ...pinnedAs(change, before) },
        inModeOf(merchantId, withEvents(recordingPause(updateFor(change, at), expected.status, change, at), entries)),
        change,
        entries,
      );
    };
    const times = expected.schedule ?? {};
    const changed = await recording(Object.fromEntries(Object.entries(times).filter(([, v]) => v !== null)));
    if (changed) return { changed };
    if (pinnedBy(change).length === 0) return { current: undefined };
    // The whole subscription, not only its pinned fields: if it is not as expected, it is what the caller reads next.
    const doc = await this.collection.findOne({ _id: id, merchantId }, { projection: VIEW_PROJECTION });
    if (!doc) return { current: null };
    if (!isAsExpected(doc, expected)) return { current: toSubscription(doc) };
    const again = await recording(doc);
    return again ? { changed: again } : { current: undefined };
  }

  /**
   * `entries`: the outbox entries the update pushes. The document it answers with, held with only
   * those entries (the very objects written, so that the relay's `$pullAll` finds them equal),
   * is what the events relay needs of this change: it reads nothing back (EventsRelay.relaySoon).
   * On FerretDB the answer also holds older entries, not relayed yet: those are the sweep's or a
   * retry's, as on MongoDB, whose answer (VIEW_PROJECTION) holds no outbox.
   */
  private async changeWhere(
    filter: Filter<SubscriptionDocument>,
    update: UpdateFilter<SubscriptionDocument>,
    change: Change,
    entries: OutboxEntry[],
  ): Promise<Changed | undefined> {
    // VIEW_PROJECTION where the server takes it: FerretDB v1 refuses a projection on findAndModify ("fields" is not implemented).
    const doc = await this.collection.findOneAndUpdate(
      filter,
      update,
      this.options.updateProjection ? { returnDocument: 'after', projection: VIEW_PROJECTION } : { returnDocument: 'after' },
    );
    if (!doc) return undefined;
    if (livemodeOf(doc.merchantId)) await this.noteTimes([change.set.nextScheduledAt]);
    return { subscription: toSubscription(doc), held: { ...doc, outbox: entries } };
  }

  /**
   * Applies one bulk command to the subscriptions it has not reached yet, marking each in the same
   * document update: those in `from` change to `to` (marked applied), those already in `to` are
   * marked noop. A repeated call changes nothing. Each change's event goes into the outbox in the
   * same update (one entry, the same in every document updated together: its key is the requestId,
   * and the event id is made from it and the subscription's id).
   */
  async applyCommand(
    merchantId: string,
    ids: readonly string[],
    plan: CommandPlan,
    requestId: string,
    at: string,
    cause: ChangeCause,
  ): Promise<{ allApplied: boolean; allNoop: boolean; states?: Map<string, CommandState> }> {
    const notReached = { _id: { $in: [...ids] }, merchantId, bulkCommands: { $nin: marks(requestId) } };
    const mark = (kind: CommandMark) => ({ bulkCommands: { $each: [`${requestId}:${kind}`], $slice: -KEPT_COMMAND_MARKS } });
    /** Writes `change` and its events to the subscriptions in `from` not reached yet, marked `kind`: how many it changed. */
    const writing = async (from: SubscriptionStatus, change: Change, kind: CommandMark, expected: number) => {
      const reached = { ...notReached, status: from };
      const applying = (before: ShownSchedule, filter: Filter<SubscriptionDocument>): AnyBulkWriteOperation<SubscriptionDocument> => ({
        updateMany: {
          filter: { ...filter, ...pinnedAs(change, before) },
          update: commandUpdate(merchantId, from, change, before, at, { cause, requestId }, mark(kind)),
        },
      });
      // The usual case: none has a schedule the command keeps or drops, so every one changes in one update, with nothing read first.
      let written = await bulkWriteInParts(this.collection, [applying({}, reached)], this.options.statementsPerCommand);
      if (written < expected && pinnedBy(change).length > 0) {
        // The others: one update per set of pinned values, each filtered on them (at most a few in a chunk).
        const docs = await this.collection.find(reached, { projection: SHOWN_PROJECTION }).toArray();
        const groups = new Map<string, { before: ShownSchedule; ids: string[] }>();
        for (const doc of docs) {
          const key = JSON.stringify(pinnedAs(change, doc));
          const group = groups.get(key) ?? { before: doc, ids: [] };
          group.ids.push(doc._id);
          groups.set(key, group);
        }
        written += await bulkWriteInParts(
          this.collection,
          [...groups.values()].map((g) => applying(g.before, { ...reached, _id: { $in: g.ids } })),
          this.options.statementsPerCommand,
        );
      }
      return written;
    };
    /** The command's update of subscriptions in `plan.from` whose shown fields are as in `before`, marked applied. */
    const applyingFrom = (before: ShownSchedule, filter: Filter<SubscriptionDocument>): AnyBulkWriteOperation<SubscriptionDocument> => ({
      updateMany: {
        filter: { ...filter, ...pinnedAs(plan.whenFrom, before) },
        update: commandUpdate(merchantId, plan.from, plan.whenFrom, before, at, { cause, requestId }, mark('applied')),
      },
    });
    if (!plan.whenAlready) {
      // The usual case: none has a schedule the command keeps or drops, so every one changes in one update, with nothing read first.
      const applied = await bulkWriteInParts(
        this.collection,
        [applyingFrom({}, { ...notReached, status: plan.from })],
        this.options.statementsPerCommand,
      );
      // Every one changed: none can be a no-op and there is nothing to read back.
      const result =
        applied === ids.length
          ? { allApplied: true, allNoop: false }
          : {
              allApplied: false,
              ...(await this.settleMixed(merchantId, ids, plan, requestId, applyingFrom, noopUpdate(plan, mark('noop')))),
            };
      if (livemodeOf(merchantId)) await this.noteTimes([plan.whenFrom.set.nextScheduledAt]);
      return result;
    }
    const applied = await writing(plan.from, plan.whenFrom, 'applied', ids.length);
    // Every one changed: none can be a no-op and there is nothing to read back.
    const allApplied = applied === ids.length;
    let noop = 0;
    if (!allApplied) {
      // Already in the target status: marked noop; a schedule given still replaces theirs, with its events.
      if (plan.whenAlready) noop = await writing(plan.already, plan.whenAlready, 'noop', ids.length - applied);
      else noop = (await this.collection.updateMany({ ...notReached, status: plan.already }, noopUpdate(plan, mark('noop')))).modifiedCount;
    }
    if (livemodeOf(merchantId)) await this.noteTimes([plan.whenFrom.set.nextScheduledAt, plan.whenAlready?.set.nextScheduledAt]);
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
   * A mixed chunk (some applied, some no-ops: half of `npm run load`'s) so costs one read where it
   * cost two (the read of skipped ones' schedules, then that of every one's mark).
   */
  private async settleMixed(
    merchantId: string,
    ids: readonly string[],
    plan: CommandPlan,
    requestId: string,
    applyingFrom: (before: ShownSchedule, filter: Filter<SubscriptionDocument>) => AnyBulkWriteOperation<SubscriptionDocument>,
    markNoop: UpdateFilter<SubscriptionDocument>,
  ): Promise<{ allNoop: boolean; states?: Map<string, CommandState> }> {
    const docs = await this.collection
      .find({ _id: { $in: [...ids] }, merchantId }, { projection: { status: 1, bulkCommands: 1, ...SHOWN_PROJECTION } })
      .toArray();
    const [appliedMark, noopMark] = marks(requestId);
    const states = new Map<string, CommandState>();
    const noops: string[] = [];
    const groups = new Map<string, { before: ShownSchedule; ids: string[] }>();
    for (const doc of docs) {
      const kept = doc.bulkCommands ?? [];
      const mark = kept.includes(appliedMark) ? 'applied' : kept.includes(noopMark) ? 'noop' : undefined;
      states.set(doc._id, { status: doc.status, mark });
      if (mark) continue;
      if (doc.status === plan.already) noops.push(doc._id);
      else if (doc.status === plan.from && pinnedBy(plan.whenFrom).length > 0) {
        const key = JSON.stringify(pinnedAs(plan.whenFrom, doc));
        const group = groups.get(key) ?? { before: doc, ids: [] };
        group.ids.push(doc._id);
        groups.set(key, group);
      }
    }
    const notReached = { merchantId, bulkCommands: { $nin: marks(requestId) } };
    const writes: AnyBulkWriteOperation<SubscriptionDocument>[] = [
      ...[...groups.values()].map((g) => applyingFrom(g.before, { ...notReached, _id: { $in: g.ids }, status: plan.from })),
      ...(noops.length > 0
        ? [
            {
              updateMany: { filter: { ...notReached, _id: { $in: noops }, status: plan.already }, update: markNoop },
            } as AnyBulkWriteOperation<SubscriptionDocument>,
          ]
        : []),
    ];
    const expected = noops.length + [...groups.values()].reduce((n, g) => n + g.ids.length, 0);
    const written = writes.length > 0 ? await bulkWriteInParts(this.collection, writes, this.options.statementsPerCommand) : 0;
    const allNoop = noops.length === ids.length;
    if (written !== expected) return { allNoop: false };
    for (const id of noops) states.set(id, { status: plan.already, mark: 'noop' });
    for (const g of groups.values()) for (const id of g.ids) states.set(id, { status: plan.whenFrom.status, mark: 'applied' });
    return { allNoop, states };
  }

  /**
   * Several bulk commands of one merchant and plan (one that gives a subscription already in the
   * target status nothing: `whenAlready` undefined), in their order, applied to the subscriptions
   * they name with one read and one write of each subscription instead of one or two per command.
   * Each subscription's commands are walked in order as the sequential path would apply them: the
   * first not yet reached changes one in `plan.from` (marked applied, with its request's events),
   * and each other not yet reached marks noop once it is in the target status. The marks of all go
   * in the one update, filtered on the status read and on none of them being there yet, so that
   * a subscription another writer changed meanwhile is left as it is.
   *
   * Returns, for each subscription settled here, its status after the write and each command's mark
   * (undefined: the command did not reach it, nor does it need to: its status is neither `from` nor
   * the target). A subscription missing from the map (not found, or changed meanwhile) is left to
   * applyCommand, command by command, which finds any mark written here.
   *
   * Why: on FerretDB a write costs by the document written, however documents are grouped
   * (docs/benchmarks.md). Under `npm run load` a run's ten chunks of one merchant name each of its
   * subscriptions about twice, and one command in two finds it already in the target status, so
   * applied one after another they write most subscriptions two or three times.
   */
  async applyTogether(
    merchantId: string,
    plan: CommandPlan,
    commands: readonly TogetherCommand[],
    at: string,
  ): Promise<Map<string, TogetherState>> {
    const named = commands.map((c) => new Set(c.ids));
    const ids = [...new Set(commands.flatMap((c) => c.ids))];
    const docs = await this.collection
      .find({ _id: { $in: ids }, merchantId }, { projection: { status: 1, bulkCommands: 1, ...SHOWN_PROJECTION } })
      .toArray();
    const settled = new Map<string, TogetherState>();
    // Subscriptions written by one statement: the same status read, the same command applying, the same marks pushed and the
    // same schedule values. Their marks kept from before may differ (a run repeated with other companions), so each keeps its own.
    const groups = new Map<
      string,
      {
        status: SubscriptionStatus;
        applied: number;
        pushed: number[];
        before: ShownSchedule;
        marks: Map<string, (CommandMark | undefined)[]>;
      }
    >();
    for (const doc of docs) {
      const kept = doc.bulkCommands ?? [];
      let status = doc.status;
      let applied = -1;
      const pushed: number[] = [];
      const marked = commands.map((c, i): CommandMark | undefined => {
        if (!named[i]!.has(doc._id)) return undefined;
        const [appliedMark, noopMark] = marks(c.requestId);
        if (kept.includes(appliedMark)) return 'applied';
        if (kept.includes(noopMark)) return 'noop';
        if (status === plan.from) {
          applied = i;
          status = plan.whenFrom.status;
        } else if (status !== plan.already) return undefined;
        pushed.push(i);
        return applied === i ? 'applied' : 'noop';
      });
      if (pushed.length === 0) {
        settled.set(doc._id, { status, marks: marked });
        continue;
      }
      const key = JSON.stringify([doc.status, applied, pushed, applied >= 0 ? pinnedAs(plan.whenFrom, doc) : null]);
      const group = groups.get(key) ?? { status: doc.status, applied, pushed, before: doc, marks: new Map() };
      group.marks.set(doc._id, marked);
      groups.set(key, group);
    }
    const writes = [...groups.values()].map(
      ({ status, applied, pushed, before, marks: marked }): AnyBulkWriteOperation<SubscriptionDocument> => {
        const mark = {
          bulkCommands: {
            $each: pushed.map((i) => `${commands[i]!.requestId}:${i === applied ? 'applied' : 'noop'}`),
            $slice: -KEPT_COMMAND_MARKS,
          },
        };
        const filter = {
          _id: { $in: [...marked.keys()] },
          merchantId,
          status,
          bulkCommands: { $nin: pushed.flatMap((i) => marks(commands[i]!.requestId)) },
        };
        if (applied < 0) return { updateMany: { filter, update: noopUpdate(plan, mark) } };
        // Its events are the request's whose command made the change, in that request's trace (outbox.ts).
        return {
          updateMany: {
            filter: { ...filter, ...pinnedAs(plan.whenFrom, before) },
            update: commandUpdate(merchantId, plan.from, plan.whenFrom, before, at, commands[applied]!, mark),
          },
        };
      },
    );
    const expected = [...groups.values()].reduce((n, g) => n + g.marks.size, 0);
    const written = writes.length > 0 ? await bulkWriteInParts(this.collection, writes, this.options.statementsPerCommand) : 0;
    const after = (g: { applied: number }) => (g.applied >= 0 ? plan.whenFrom.status : plan.already);
    if (written === expected) {
      for (const g of groups.values()) for (const [id, reached] of g.marks) settled.set(id, { status: after(g), marks: reached });
    } else {
      // Another writer changed some meanwhile: those whose marks are all there were written (here, or by a run of the same chunks).
      const back = await this.collection
        .find({ _id: { $in: [...groups.values()].flatMap((g) => [...g.marks.keys()]) }, merchantId }, { projection: { bulkCommands: 1 } })
        .toArray();
      const byId = new Map(back.map((d) => [d._id, d.bulkCommands ?? []]));
      for (const g of groups.values()) {
        for (const [id, marked] of g.marks) {
          const kept = byId.get(id) ?? [];
          const found = g.pushed.map((i) => marks(commands[i]!.requestId).find((m) => kept.includes(m)));
          if (found.some((m) => m === undefined)) continue;
          const reached = [...marked];
          g.pushed.forEach((i, k) => (reached[i] = found[k]!.endsWith(':applied') ? 'applied' : 'noop'));
          settled.set(id, { status: after(g), marks: reached });
        }
      }
    }
    if (livemodeOf(merchantId) && [...groups.values()].some((g) => g.applied >= 0))
      await this.noteTimes([plan.whenFrom.set.nextScheduledAt]);
    return settled;
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
  async page(
    merchantId: string,
    status: SubscriptionStatus | undefined,
    { limit, startingAfter }: PageRequest,
  ): Promise<Page<Subscription>> {
    const filter = {
      merchantId,
      ...(status ? { status } : {}),
      ...(startingAfter ? { _id: { $gt: startingAfter } } : {}),
    };
    const docs = await this.collection
      .find(filter)
      .sort({ _id: 1 })
      .limit(limit + 1)
      .toArray();
    return pageOf(
      docs.map((d) => toSubscription(d)),
      limit,
      (s) => s.id,
    );
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
      .find(
        { nextScheduledAt: { $lte: now } },
        {
          projection: {
            merchantId: 1,
            status: 1,
            pauseAt: 1,
            resumeAt: 1,
            pauseReason: 1,
            nextScheduledAt: 1,
            holdIds: 1,
            ...HISTORY_PROJECTION,
          },
        },
      )
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
      .find(
        { merchantId, testScheduledAt: { $lte: upTo } },
        {
          projection: {
            merchantId: 1,
            status: 1,
            pauseAt: 1,
            resumeAt: 1,
            pauseReason: 1,
            testScheduledAt: 1,
            holdIds: 1,
            ...HISTORY_PROJECTION,
          },
        },
      )
      .sort({ testScheduledAt: 1, _id: 1 })
      .limit(limit)
      .toArray();
    return docs.map((d) => dueOfDocument(d, d.testScheduledAt!));
  }

  /** Removes every subscription of a test mode (never live data): how many. */
  async removeAllOf(merchantId: string): Promise<number> {
    if (livemodeOf(merchantId)) throw new Error("removeAllOf removes a test mode's subscriptions only");
    return deleteInParts(this.collection, { merchantId }, this.options.documentsPerDelete);
  }

  /**
   * Applies due schedules: the one write of a scheduled transition, with its event in the same
   * update. Each group is one conditional updateMany whose filter is the exact state its
   * subscriptions were read in, so a schedule changed or dropped since, or already applied by
   * another worker, matches nothing: a schedule never fires in an old version nor twice in
   * effect. The groups go in as few commands as the server allows. Returns the ids this call
   * changed (marked `runId`).
   */
  async fire(groups: readonly FiringGroup[], runId: string, at: string): Promise<Set<string>> {
    if (groups.length === 0) return new Set();
    const operations: AnyBulkWriteOperation<SubscriptionDocument>[] = groups.map(({ merchantId, state, ruling, ids }, group) => {
      const update = recordingPause(
        updateFor(ruling.change!, ruling.touches ? at : undefined, { scheduleRun: runId }),
        state.status,
        ruling.change!,
        at,
      );
      // One outbox entry per event for the whole group, named by the run and group (src/subscriptions/outbox.ts).
      // The filter pins every shown field the change keeps, so the entry's subscription is exactly what the update leaves.
      const entries = outboxEntries(
        state.status,
        snapshotAfter(ruling.change!, shown(state), at),
        { kind: 'schedule' },
        `${runId}:${group}`,
        ruling.events,
      );
      const write = withEvents(update, entries);
      const filter = {
        _id: { $in: [...ids] },
        merchantId,
        status: state.status,
        [dueFieldOf(merchantId)]: state.nextScheduledAt,
        ...exactSchedule(state),
        ...keptAsIn(ruling.change!, shown(state)),
        // Held or not as read: a hold placed or released meanwhile makes the group's ruling an old one.
        'holdIds.0': { $exists: state.held },
      };
      return { updateMany: { filter, update: inModeOf(merchantId, write) } };
    });
    const all = groups.flatMap((g) => g.ids);
    const modified = await bulkWriteInParts(this.collection, operations, this.options.statementsPerCommand);
    // A resume still pending after a scheduled pause: another worker's poll may be settling the clock.
    await this.noteTimes(groups.filter((g) => livemodeOf(g.merchantId)).map((g) => g.ruling.change?.set.nextScheduledAt));
    if (modified === all.length) return new Set(all);
    // Some were changed meanwhile (by a request, or another worker): read back which are ours.
    const ours = await Promise.all(
      ownedIds(byMerchantOf(groups)).map((own) =>
        this.collection.find({ ...own, scheduleRun: runId }, { projection: { _id: 1 } }).toArray(),
      ),
    );
    return new Set(ours.flat().map((d) => d._id));
  }

  /**
   * Subscriptions with events waiting: these (id → merchant), up to `limit`, read one merchant at
   * a time (ownedIds); or any, up to `limit` (the sweep: a background scan).
   */
  async outboxes(ids: ReadonlyMap<string, string> | undefined, limit: number): Promise<OutboxHolder[]> {
    const waiting = { 'outbox.key': { $exists: true } };
    if (!ids) return (await this.collection.find(waiting).limit(limit).toArray()) as OutboxHolder[];
    const holders = await Promise.all(ownedIds(byMerchantOf(ids)).map((own) => this.collection.find({ ...own, ...waiting }).toArray()));
    return holders.flat().slice(0, limit) as OutboxHolder[];
  }

  /** Subscriptions with a pending time at or before `now`, counted up to `cap` (served by the due_schedules index): `subsvc status`. */
  async countDue(now: string, cap: number): Promise<number> {
    return this.collection.countDocuments({ nextScheduledAt: { $lte: now } }, { limit: cap });
  }

  /** Subscriptions holding events not relayed yet, counted up to `cap` (the sparse subscription_outbox index): `subsvc status`. */
  async countOutboxes(cap: number): Promise<number> {
    return this.collection.countDocuments({ 'outbox.key': { $exists: true } }, { limit: cap });
  }

  /**
   * The time of the oldest outbox entry among the first `sample` subscriptions holding some (no
   * index orders the entries' times: an estimate, exact while the backlog is under the sample).
   */
  async oldestOutboxEntry(sample: number): Promise<number | undefined> {
    const holders = await this.collection
      .find({ 'outbox.key': { $exists: true } }, { projection: { 'outbox.at': 1 } })
      .limit(sample)
      .toArray();
    let oldest: number | undefined;
    for (const holder of holders) {
      for (const entry of holder.outbox ?? []) {
        const at = Date.parse(entry.at);
        if (oldest === undefined || at < oldest) oldest = at;
      }
    }
    return oldest;
  }

  /**
   * Takes the relayed entries out of their subscriptions' outboxes, in one update per merchant
   * (the relay clears one merchant's at a time): each document loses the entries equal to one in
   * the list, and holds none of the others' (entries pushed meanwhile stay). Measured on FerretDB,
   * 400 outboxes cleared so took 350-370 ms, against 400-540 ms as one update per subscription.
   * (FerretDB ignores `$pull` with a condition, such as `{key: {$in: [...]}}`, changing nothing:
   * hence the exact entries.)
   */
  async clearOutboxes(relayed: readonly OutboxHolder[]): Promise<void> {
    if (relayed.length === 0) return;
    // A bulk command's entry is the same in every document it changed: listed once.
    const entries = new Map<string, OutboxEntry>();
    for (const { outbox } of relayed) for (const entry of outbox) entries.set(JSON.stringify(entry), entry);
    const pullAll = { $pullAll: { outbox: [...entries.values()] } };
    for (const own of ownedIds(byMerchantOf(new Map(relayed.map((h) => [h._id, h.merchantId])))))
      await this.collection.updateMany(own, pullAll);
  }

  /**
   * The id and status of up to `limit` of the merchant's subscriptions that match the filter, read
   * once: the snapshot a bulk request by filter accepts, and what its dry run counts.
   */
  async matching(merchantId: string, filter: SubscriptionFilter, limit: number, withHistory = false): Promise<({ id: string } & Owned)[]> {
    // Without the history, the ids and statuses come from the merchant_filter index alone.
    const projection = { _id: 1, status: 1, ...(withHistory ? HISTORY_PROJECTION : {}) };
    const docs = await this.collection.find(filterQuery(merchantId, filter), { projection }).limit(limit).toArray();
    return docs.map((d) => ({ id: d._id, ...ownedOf(d) }));
  }

  async countMatching(merchantId: string, filter: SubscriptionFilter): Promise<number> {
    return this.collection.countDocuments(filterQuery(merchantId, filter));
  }

  async insertMany(subscriptions: readonly Subscription[]): Promise<void> {
    if (subscriptions.length === 0) return;
    await this.collection.insertMany(
      subscriptions.map(({ id, holdIds, ...rest }) => ({ _id: id, ...rest, ...(holdIds ? { holdIds: [...holdIds] } : {}) })),
      { ordered: false },
    );
  }
}
