/**
 * Every MongoDB call about the pause history (docs/analytics.md#how-the-figures-are-kept): one
 * document per pause in `pauses`, from its start to its end; per merchant and UTC day, a document
 * in `pauseDays` holding that day's pauses added up as cells (analytics.rules.ts) and the parts of
 * `pauseDayParts` that list the day's pause ids; and in `pauseSteps`, each subscription's latest
 * pause starts and ends, from which each pause's end is decided. A read adds up at most a document
 * per day, however long the history.
 *
 * Every call names its documents by `_id` (a read, `_id: {$in}`), which every engine serves from
 * the `_id` index, the embedded one included (docs/engine.md): no filter here needs another index.
 *
 * A pause ends with the step that follows it in its subscription's events, in the order of their
 * ids (the events list's): relays may record steps late, twice or at once, so a step is first added
 * to its subscription's steps, and the pauses it lands beside are decided again from them, each
 * decision kept only over one made from fewer steps (`endSeq`).
 *
 * Exactly once through any crash: a pause's writes are keyed by its events' ids, so repeating them
 * changes nothing, and a day's cells are never added to but computed again from its pauses. Each
 * record raises the `seq` of the days it touched after writing their pauses; a day's cells are
 * computed again whenever `seq` is ahead of the `seq` they were computed at (`basedOn`), and a
 * computation stores its cells only over older ones, so two at once, or one overtaken by a new
 * pause, leave the newest.
 */
import type { AnyBulkWriteOperation, Collection, Db, UpdateFilter } from 'mongodb';
import { GUARDED } from '../db/guarded.js';
import { bulkWriteInParts, insertElseWrite, insertNew } from '../db/mongo-helpers.js';
import { UNQUEUED, type PerKeyQueue } from '../lib/keyed-mutex.js';
import { addDays, cellsOf, type Cell, type CauseKind, type Pause, type PauseEnd } from './analytics.rules.js';

interface PauseDocument extends Pause {
  /** The id of the `subscription.paused` event that started it. */
  _id: string;
  merchantId: string;
  subscriptionId: string;
  /** The id of the event that ended it. */
  endEventId?: string;
  /** The `seq` of its subscription's steps its end (or that it has none) was decided from. */
  endSeq?: number;
}

interface PauseDayDocument {
  /** `<merchantId>:<day>` */
  _id: string;
  merchantId: string;
  day: string;
  seq: number;
  basedOn: number;
  cells: Cell[];
  /** The keys of the day's `pauseDayParts`: one per record that started pauses that day. */
  parts: string[];
}

/** Some of a day's pause ids, as the records that began with the same pause wrote them (`<merchantId>:<day>:<first pause id>`). */
interface PauseDayPartDocument {
  _id: string;
  merchantId: string;
  ids: string[];
}

/** A start (its pause's day) or an end, as a subscription's steps keep it: built alike each time, so that adding it again adds nothing. */
type KeptStep = { readonly id: string; readonly day: string } | { readonly id: string; readonly at: string; readonly by: PauseEnd };

/** A subscription's latest pause steps (`<merchantId>:<subscriptionId>`), raising `seq` at each record that adds some. */
interface PauseStepsDocument {
  _id: string;
  merchantId: string;
  steps: KeptStep[];
  seq: number;
}

/** A pause that started, as its event tells it. */
export interface PauseStarted {
  readonly eventId: string;
  readonly subscriptionId: string;
  readonly at: string;
  readonly reason: string | null;
  readonly cause: CauseKind;
  readonly planId: string;
}

/** A pause that ended, as its event tells it. */
export interface PauseEnded {
  readonly eventId: string;
  readonly subscriptionId: string;
  readonly at: string;
  readonly by: PauseEnd;
}

/** A pause's start or end, as its event tells it (the relays' batches may hold them in any order). */
export type PauseStep = { readonly start: PauseStarted } | { readonly end: PauseEnded };

export interface DayCells {
  readonly day: string;
  readonly cells: readonly Cell[];
}

const dayOf = (timestamp: string) => timestamp.slice(0, 10);
const isStart = (step: KeptStep): step is { readonly id: string; readonly day: string } => 'day' in step;
const kept = (step: PauseStep): KeptStep =>
  'start' in step ? { id: step.start.eventId, day: dayOf(step.start.at) } : { id: step.end.eventId, at: step.end.at, by: step.end.by };
const subscriptionOf = (step: PauseStep) => ('start' in step ? step.start.subscriptionId : step.end.subscriptionId);

/** How many ids one `_id: {$in}` read names at most (the embedded engine serves up to 30,000). */
const IDS_PER_READ = 10_000;
/**
 * How many of a subscription's latest steps are kept: a step older than all of them is taken as
 * recorded before. A relay repeats or delays a batch by minutes at most (the sweep's period), in
 * which a subscription changes a few times, not this many.
 */
const STEPS_KEPT = 16;

export class PauseHistoryRepository {
  private readonly pauses: Collection<PauseDocument>;
  private readonly days: Collection<PauseDayDocument>;
  private readonly parts: Collection<PauseDayPartDocument>;
  private readonly steps: Collection<PauseStepsDocument>;

  constructor(
    db: Db,
    /** Statements per bulk write where the engine needs parts (src/db/workarounds.ts); undefined: one. */
    private readonly statementsPerCommand?: number,
    /**
     * Where the engine's conditional update is not atomic, a merchant's records, and a read's store
     * of a day's cells, queue here one after another (src/db/guarded.ts): a decision must not
     * overwrite one made from more steps, nor stored cells a record's mark of their day.
     */
    private readonly guard: PerKeyQueue = UNQUEUED,
  ) {
    this.pauses = db.collection<PauseDocument>('pauses');
    this.days = db.collection<PauseDayDocument>('pauseDays');
    this.parts = db.collection<PauseDayPartDocument>('pauseDayParts');
    this.steps = db.collection<PauseStepsDocument>('pauseSteps');
  }

  /**
   * Records the merchant's pauses that started and ended (steps of any subscriptions, in any
   * order, some perhaps recorded before), then marks each day they touch for its cells to be
   * computed again.
   */
  record(merchantId: string, steps: readonly PauseStep[]): Promise<void> {
    return this.guard.run(GUARDED.pauseHistory(merchantId), () => this.recordNow(merchantId, steps));
  }

  private async recordNow(merchantId: string, steps: readonly PauseStep[]): Promise<void> {
    const started = [...new Map(steps.flatMap((step) => ('start' in step ? [[step.start.eventId, step.start] as const] : []))).values()];
    // Each pause is stored as it started (one stored already by a repeated record stays as it is);
    // its end is decided below, from its subscription's steps.
    await insertNew(
      this.pauses,
      started.map((start) => ({
        _id: start.eventId,
        merchantId,
        subscriptionId: start.subscriptionId,
        day: dayOf(start.at),
        startedAt: start.at,
        reason: start.reason,
        cause: start.cause,
        planId: start.planId,
      })),
      this.statementsPerCommand,
    );
    // Each day's new pause ids, in a part named by its first id: a repeated record, or another relay's
    // record of more of the same events, adds its ids to the same part.
    const startedOn = new Map<string, string[]>();
    for (const start of started) startedOn.set(dayOf(start.at), [...(startedOn.get(dayOf(start.at)) ?? []), start.eventId]);
    const partKeys = new Map([...startedOn].map(([day, ids]) => [day, `${merchantId}:${day}:${ids[0]!}`]));
    await bulkWriteInParts(
      this.parts,
      [...startedOn].map(([day, ids]) => ({
        updateOne: { filter: { _id: partKeys.get(day)!, merchantId }, update: { $addToSet: { ids: { $each: ids } } }, upsert: true },
      })),
      this.statementsPerCommand,
    );
    // Each subscription's steps here, by the `_id` of its steps document.
    const addedTo = new Map<string, KeptStep[]>();
    for (const step of steps) {
      const key = `${merchantId}:${subscriptionOf(step)}`;
      addedTo.set(key, [...(addedTo.get(key) ?? []), kept(step)]);
    }
    // A subscription's first pause makes its steps: inserted, else added to.
    await insertElseWrite(
      this.steps,
      [...addedTo].map(([_id, added]) => ({ _id, merchantId, steps: added, seq: 1 })),
      ({ _id, steps: added }) => ({
        updateOne: { filter: { _id, merchantId }, update: { $addToSet: { steps: { $each: added } }, $inc: { seq: 1 } } },
      }),
      this.statementsPerCommand,
    );
    const keys = [...addedTo.keys()];
    const stored: PauseStepsDocument[] = [];
    for (let i = 0; i < keys.length; i += IDS_PER_READ)
      stored.push(...(await this.steps.find({ _id: { $in: keys.slice(i, i + IDS_PER_READ) }, merchantId }).toArray()));
    const decisions: AnyBulkWriteOperation<PauseDocument>[] = [];
    const trims: AnyBulkWriteOperation<PauseStepsDocument>[] = [];
    const days = new Set(startedOn.keys());
    for (const doc of stored) {
      const ordered = [...new Map(doc.steps.map((step) => [step.id, step])).values()].sort((a, b) =>
        a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
      );
      const window = ordered.slice(-STEPS_KEPT);
      // A step decides its own pause, if it starts one, and the pause just before it, which it may end.
      const added = new Set(addedTo.get(doc._id)!.map((step) => step.id));
      const decide = new Set<number>();
      window.forEach((step, i) => {
        if (!added.has(step.id)) return;
        if (isStart(step)) decide.add(i);
        if (i > 0 && isStart(window[i - 1]!)) decide.add(i - 1);
      });
      for (const i of decide) {
        const start = window[i] as { id: string; day: string };
        const next = window[i + 1];
        // A start with nothing after it was never given an end (steps only leave from the oldest): it stays as inserted.
        if (!next) continue;
        const filter = { _id: start.id, merchantId, $nor: [{ endSeq: { $gte: doc.seq } }] };
        const update: UpdateFilter<PauseDocument> = isStart(next)
          ? { $set: { endSeq: doc.seq }, $unset: { endedAt: '', endedBy: '', endEventId: '' } }
          : { $set: { endedAt: next.at, endedBy: next.by, endEventId: next.id, endSeq: doc.seq } };
        decisions.push({ updateOne: { filter, update } });
        days.add(start.day);
      }
      if (ordered.length > STEPS_KEPT)
        trims.push({ updateOne: { filter: { _id: doc._id, merchantId }, update: { $pullAll: { steps: ordered.slice(0, -STEPS_KEPT) } } } });
    }
    await bulkWriteInParts(this.pauses, decisions, this.statementsPerCommand);
    await this.markChanged(merchantId, [...days], partKeys);
    await bulkWriteInParts(this.steps, trims, this.statementsPerCommand);
  }

  private async markChanged(merchantId: string, days: readonly string[], partKeys: ReadonlyMap<string, string>): Promise<void> {
    await bulkWriteInParts(
      this.days,
      days.map((day) => {
        const part = partKeys.get(day);
        return {
          updateOne: {
            filter: { _id: `${merchantId}:${day}`, merchantId },
            update: {
              $inc: { seq: 1 },
              ...(part ? { $addToSet: { parts: part } } : {}),
              $setOnInsert: { day, basedOn: 0, cells: [], ...(part ? {} : { parts: [] }) },
            },
            upsert: true,
          },
        };
      }),
      this.statementsPerCommand,
    );
  }

  /** The cells of each of the merchant's days in [from, to] that had a pause, each computed again first when its pauses changed since. */
  async daysBetween(merchantId: string, from: string, to: string): Promise<DayCells[]> {
    const ids: string[] = [];
    for (let day = from; day <= to; day = addDays(day, 1)) ids.push(`${merchantId}:${day}`);
    const stored = await this.days.find({ _id: { $in: ids }, merchantId }).toArray();
    const days: DayCells[] = [];
    // One day at a time: a history stored at once leaves many days to compute, which together would take every connection.
    for (const doc of stored.sort((a, b) => a.day.localeCompare(b.day)))
      days.push({ day: doc.day, cells: doc.seq > doc.basedOn ? await this.computeAgain(doc) : doc.cells });
    return days;
  }

  private async computeAgain({ _id, merchantId, seq, parts }: PauseDayDocument): Promise<Cell[]> {
    const listed = await this.parts.find({ _id: { $in: parts }, merchantId }).toArray();
    const ids = [...new Set(listed.flatMap((part) => part.ids))];
    const pauses: PauseDocument[] = [];
    for (let i = 0; i < ids.length; i += IDS_PER_READ)
      pauses.push(...(await this.pauses.find({ _id: { $in: ids.slice(i, i + IDS_PER_READ) }, merchantId }).toArray()));
    const cells = cellsOf(pauses);
    // Queued with the merchant's records: where a conditional update writes the whole document back,
    // this write beside a record's mark of the day would undo the mark, and the day would never be
    // computed again.
    await this.guard.run(GUARDED.pauseHistory(merchantId), () =>
      this.days.updateOne({ _id, merchantId, basedOn: { $lt: seq } }, { $set: { basedOn: seq, cells } }),
    );
    return cells;
  }
}
