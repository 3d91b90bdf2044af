/**
 * A subscription as the `subscriptions` collection stores it, shared by the four stores that read
 * and write it (subscriptions.store.ts, bulk-commands.store.ts, due.store.ts, outbox.store.ts): the
 * stored type, how a merchant's mode stores it, the filters the stores' writes match on and the
 * updates they make. Nothing here leaves the stores: they map documents to the domain's types.
 */
import type { Collection, Db, Filter, UpdateFilter } from 'mongodb';
import { livemodeOf } from '../merchants/livemode.js';
import { inTraceContext } from '../observability/tracing.js';
import type { CommandMark } from './bulk-commands.rules.js';
import { outboxEntries, type OutboxEntry, type PendingEvents, type SubscriptionSnapshot } from './outbox.js';
import { KEPT_PAUSE_TIMES } from '../pause-policy/pause-policy.rules.js';
import type { WriteCommand } from './command.js';
import {
  requestEvents,
  type Change,
  type ChangeCause,
  type StoredSchedule,
  type Subscription,
  type SubscriptionStatus,
} from './subscriptions.rules.js';

const SUBSCRIPTIONS_COLLECTION = 'subscriptions';

/** The one collection the four stores share. */
export function subscriptionsIn(db: Db): Collection<SubscriptionDocument> {
  return db.collection<SubscriptionDocument>(SUBSCRIPTIONS_COLLECTION);
}

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
  /** The active holds that cover it (holders.store.ts); may be left empty. */
  holdIds?: string[];
  /** false while paused by its holds alone; absent, a paused subscription holds its own pause (subscriptions.rules.ts, HolderField). */
  ownPause?: false;
  /** Its id in the merchant's billing system, and the merchant's metadata (lifecycle.store.ts); absent for one seeded. */
  externalId?: string;
  metadata?: Record<string, string>;
}

/**
 * Where a subscription keeps its pending time: live ones in `nextScheduledAt` (the due_schedules
 * index, read by the live due poll), a test mode's in `testScheduledAt`, which that index and
 * poll never see: a test mode's schedules fall due only when its clock is advanced (dueOf, read
 * along the merchant's own subscriptions; docs/partners.md). Decided here, on every write.
 */
export function dueFieldOf(merchantId: string): 'nextScheduledAt' | 'testScheduledAt' {
  return livemodeOf(merchantId) ? 'nextScheduledAt' : 'testScheduledAt';
}

/** The update as the merchant's mode stores it (dueFieldOf). */
export function inModeOf(merchantId: string, update: UpdateFilter<SubscriptionDocument>): UpdateFilter<SubscriptionDocument> {
  if (livemodeOf(merchantId)) return update;
  const rename = (fields: object | undefined) =>
    fields && Object.fromEntries(Object.entries(fields).map(([k, v]) => [k === 'nextScheduledAt' ? 'testScheduledAt' : k, v]));
  return { ...update, $set: rename(update.$set), ...(update.$unset ? { $unset: rename(update.$unset) } : {}) };
}

/** How many bulk command marks a subscription keeps: a run repeated after more than this many later commands is not expected. */
export const KEPT_COMMAND_MARKS = 32;

/** The two marks a bulk request's command can leave on a subscription: applied, then noop. */
export const commandMarks = (requestId: string): [string, string] => [`${requestId}:applied`, `${requestId}:noop`];

/** The mark a bulk request's command left on this subscription, if any. */
export function markOn(doc: Pick<SubscriptionDocument, 'bulkCommands'>, requestId: string): CommandMark | undefined {
  const kept = doc.bulkCommands ?? [];
  const [applied, noop] = commandMarks(requestId);
  return kept.includes(applied) ? 'applied' : kept.includes(noop) ? 'noop' : undefined;
}

/** What whereKeptFieldsAre and snapshotAfter read of a document. */
export const SHOWN_PROJECTION = { pauseAt: 1, resumeAt: 1, pauseReason: 1 } as const;
/**
 * What a subscription is read with when it is answered (toSubscription): without the outbox (each
 * pending event holds a whole subscription), the bulk command marks (up to 32) and the workers'
 * bookkeeping, which a request never shows and the driver would otherwise decode on every read.
 */
export const VIEW_PROJECTION = { outbox: 0, bulkCommands: 0, scheduleRun: 0 } as const;
/** What a pause policy reads of a subscription (PauseHistory). */
export const HISTORY_PROJECTION = { recentPauses: 1, lastResumedAt: 1 } as const;

type ShownScheduleField = 'pauseAt' | 'resumeAt' | 'pauseReason';
const SHOWN_SCHEDULE_FIELDS: readonly ShownScheduleField[] = ['pauseAt', 'resumeAt', 'pauseReason'];
/** The schedule fields a subscription shows, as a document holds them (absent rather than null). */
export type ShownSchedule = Partial<Pick<StoredSchedule, ShownScheduleField>>;

/** What a subscription's changeable fields are read from: a document, or what a change leaves in it. */
type SnapshotSource = Pick<SubscriptionDocument, 'status' | 'modifiedAt'> & ShownSchedule;

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

/** A stored subscription as the read operation returns it; an event's subscription is its document with the changeable fields its change left. */
export function toSubscription(doc: SubscriptionDocument, snapshot: SubscriptionSnapshot = snapshotOf(doc)): Subscription {
  const { status, modifiedAt, ...schedule } = snapshot;
  return {
    id: doc._id,
    merchantId: doc.merchantId,
    planId: doc.planId,
    status,
    cycle: doc.cycle,
    createdAt: doc.createdAt,
    modifiedAt,
    ...schedule,
    ...(doc.externalId !== undefined ? { externalId: doc.externalId } : {}),
    ...(doc.metadata !== undefined ? { metadata: doc.metadata } : {}),
  };
}

/** A stored subscription as a read shows it: toSubscription, with the holds that cover it while one does. */
export function toHeldSubscription(doc: SubscriptionDocument): Subscription {
  const held = doc.holdIds !== undefined && doc.holdIds.length > 0;
  return { ...toSubscription(doc), ...(held ? { holdIds: doc.holdIds } : {}) };
}

/** A subscription's waiting events as the stores hand them over: `entries`, where given, in place of its whole outbox. */
export function pendingEventsOf(doc: SubscriptionDocument, entries: readonly OutboxEntry[] = doc.outbox ?? []): PendingEvents {
  return { subscription: toSubscription(doc), entries };
}

/** The shown schedule fields a change leaves as they are. */
const fieldsKeptBy = (change: Change) => SHOWN_SCHEDULE_FIELDS.filter((f) => !(f in change.set) && !change.unset.includes(f));

/**
 * Matches subscriptions whose fields the change leaves are as in `before` (null: absent). An
 * update that records an event filters on them, so that the subscription its entry carries is
 * exactly what the update leaves, even when another writer changed those fields meanwhile (it
 * then matches nothing).
 */
export function whereKeptFieldsAre(change: Change, before: ShownSchedule): Filter<SubscriptionDocument> {
  return Object.fromEntries(fieldsKeptBy(change).map((f) => [f, before[f] ?? null]));
}

/** The shown fields a request's change leaves or drops (whose drop is its `schedule_removed` event): its events read them. */
export const fieldsEventsRead = (change: Change) =>
  SHOWN_SCHEDULE_FIELDS.filter((f) => !(f in change.set) && (f !== 'pauseReason' || !change.unset.includes(f)));

/** Matches subscriptions whose fields a request's change keeps or drops are as in `before`: its events are exactly its write's. */
export function whereEventFieldsAre(change: Change, before: ShownSchedule): Filter<SubscriptionDocument> {
  return Object.fromEntries(fieldsEventsRead(change).map((f) => [f, before[f] ?? null]));
}

/** Matches subscriptions with exactly these schedule times; null matches a field that is absent (not scheduled). */
export function whereScheduleIs(times: {
  readonly pauseAt: string | null;
  readonly resumeAt: string | null;
}): Filter<SubscriptionDocument> {
  return { pauseAt: times.pauseAt, resumeAt: times.resumeAt } as Filter<SubscriptionDocument>;
}

/**
 * One filter per merchant, naming it with its own ids (docs/sharding.md): `{merchantId, _id: {$in}}`,
 * read or written one merchant at a time, so that each command goes to one shard and every engine
 * serves it from the `_id` index, which not every engine does for a `$or` of these filters
 * (docs/design.md §8).
 */
export function whereOwnIds(byMerchant: ReadonlyMap<string, readonly string[]>): Filter<SubscriptionDocument>[] {
  return [...byMerchant].map(([merchantId, own]) => ({ merchantId, _id: { $in: [...own] } }));
}

/** The changeable fields after `change` at `at` of a subscription whose kept fields are as in `before` (filtered on with whereKeptFieldsAre). */
export function snapshotAfter(change: Change, before: ShownSchedule, at: string): SubscriptionSnapshot {
  const kept = Object.fromEntries(fieldsKeptBy(change).flatMap((f) => (before[f] === undefined ? [] : [[f, before[f]]])));
  return snapshotOf({ status: change.status, modifiedAt: at, ...kept, ...change.set });
}

/** A change to subscriptions in `from` whose shown fields are as in `before` (filtered on with whereEventFieldsAre). */
export interface ChangeFrom {
  readonly from: SubscriptionStatus;
  readonly change: Change;
  readonly before: ShownSchedule;
}

/** The outbox entries of a request's change, at `at` for `cause`, its entry named `key`. */
export function requestEntries(
  { from, change, before }: ChangeFrom,
  { at, cause, key }: { readonly at: string; readonly cause: ChangeCause; readonly key: string },
): OutboxEntry[] {
  return outboxEntries(from, snapshotAfter(change, before, at), cause, key, requestEvents(from, change, before));
}

/** The update that makes a change; modifiedAt changes unless `at` is undefined. */
export function updateFor(
  change: Change,
  at: string | undefined,
  extra: Partial<SubscriptionDocument> = {},
): UpdateFilter<SubscriptionDocument> {
  const update: UpdateFilter<SubscriptionDocument> = {
    $set: { status: change.status, ...change.set, ...(at ? { modifiedAt: at } : {}), ...extra },
  };
  if (change.unset.length > 0) update.$unset = Object.fromEntries(change.unset.map((f) => [f, ''])) as Record<keyof StoredSchedule, ''>;
  return update;
}

/**
 * A change that starts the subscription's own pause (by default, one from `from` that pauses it;
 * Change.records) also records when (`recentPauses`), in the same update, keeping the last
 * KEPT_PAUSE_TIMES (`$slice`, which test/subscriptions/bounded-lists.test.ts checks the server honours); one
 * that ends it (by default, one that resumes it) records when in `lastResumedAt`, the same way.
 */
export function recordingPause(
  update: UpdateFilter<SubscriptionDocument>,
  from: SubscriptionStatus,
  change: Change,
  at: string,
): UpdateFilter<SubscriptionDocument> {
  const records =
    change.records ??
    (from === 'paused' && change.status === 'fulfilled' ? 'resume' : from !== 'paused' && change.status === 'paused' ? 'pause' : 'nothing');
  if (records === 'resume') return { ...update, $set: { ...(update.$set ?? {}), lastResumedAt: at } };
  if (records === 'nothing') return update;
  return { ...update, $push: { ...(update.$push ?? {}), recentPauses: { $each: [at], $slice: -KEPT_PAUSE_TIMES } } };
}

/**
 * The one way events go into the outbox: pushed, in order, by the update that makes the change
 * (of status or of schedule), so that no change is stored without its events (src/subscriptions/outbox.ts).
 */
export function withEvents(
  update: UpdateFilter<SubscriptionDocument>,
  entries: readonly OutboxEntry[],
): UpdateFilter<SubscriptionDocument> {
  if (entries.length === 0) return update;
  return { ...update, $push: { ...(update.$push ?? {}), outbox: { $each: [...entries] } } };
}

/**
 * A bulk command's update of subscriptions in its merchant's mode: the change, the marks it
 * pushes, and its request's events (continuing its trace, when given), as the merchant's mode stores them.
 */
export function commandUpdate(
  command: Omit<WriteCommand, 'ids'>,
  write: ChangeFrom,
  push: UpdateFilter<SubscriptionDocument>['$push'],
): UpdateFilter<SubscriptionDocument> {
  const { merchantId, at, cause, requestId } = command;
  const { from, change } = write;
  const entries = inTraceContext(command.trace, () => requestEntries(write, { at, cause, key: requestId }));
  return inModeOf(merchantId, withEvents(recordingPause({ ...updateFor(change, at), $push: push }, from, change, at), entries));
}
