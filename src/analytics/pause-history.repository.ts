/**
 * Every MongoDB call about the pause history (docs/analytics.md#how-the-figures-are-kept): one
 * document per pause in `pauses`, from its start to its end; per merchant and UTC day, a document
 * in `pauseDays` holding that day's pauses added up as cells (analytics.rules.ts) and the parts of
 * `pauseDayParts` that list the day's pause ids; and in `openPauses`, each paused subscription's
 * pause not ended yet. A read adds up at most a document per day, however long the history.
 *
 * Every call names its documents by `_id` (a read, `_id: {$in}`), which every engine serves from
 * the `_id` index, the embedded one included (docs/engine.md): no filter here needs another index.
 *
 * Exactly once through any crash: a pause's writes are keyed by its events' ids, so repeating them
 * changes nothing, and a day's cells are never added to but computed again from its pauses. Each
 * record raises the `seq` of the days it touched after writing their pauses, and before it lets
 * go of what it read (an open pause's pointer); a day's cells are computed again whenever `seq`
 * is ahead of the `seq` they were computed at (`basedOn`), and a computation stores its cells only
 * over older ones, so two at once, or one overtaken by a new pause, leave the newest.
 */
import type { AnyBulkWriteOperation, Collection, Db } from 'mongodb';
import { bulkWriteInParts, insertElseWrite, insertNew } from '../db/mongo-helpers.js';
import { isDuplicateKeyError } from '../db/mongo.js';
import { addDays, cellsOf, type Cell, type CauseKind, type Pause, type PauseEnd } from './analytics.rules.js';

interface PauseDocument extends Pause {
  /** The id of the `subscription.paused` event that started it. */
  _id: string;
  merchantId: string;
  subscriptionId: string;
  /** The id of the event that ended it. */
  endEventId?: string;
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

/** A subscription's pause not ended yet (`<merchantId>:<subscriptionId>`). */
interface OpenPauseDocument {
  _id: string;
  merchantId: string;
  pauseId?: string;
  day: string;
  /** An end recorded before its pause was: the pause's start closes it. */
  pendingEnd?: PauseEnded;
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

/** A pause's start or end, in the order of the events that tell them. */
export type PauseStep = { readonly start: PauseStarted } | { readonly end: PauseEnded };

export interface DayCells {
  readonly day: string;
  readonly cells: readonly Cell[];
}

const dayOf = (timestamp: string) => timestamp.slice(0, 10);
const ending = (end: PauseEnded) => ({ endedAt: end.at, endedBy: end.by, endEventId: end.eventId });

/** How many ids one `_id: {$in}` read names at most (the embedded engine serves up to 30,000). */
const IDS_PER_READ = 10_000;

export class PauseHistoryRepository {
  private readonly pauses: Collection<PauseDocument>;
  private readonly days: Collection<PauseDayDocument>;
  private readonly parts: Collection<PauseDayPartDocument>;
  private readonly open: Collection<OpenPauseDocument>;

  constructor(
    db: Db,
    /** Statements per bulk write where the engine needs parts (src/db/workarounds.ts); undefined: one. */
    private readonly statementsPerCommand?: number,
  ) {
    this.pauses = db.collection<PauseDocument>('pauses');
    this.days = db.collection<PauseDayDocument>('pauseDays');
    this.parts = db.collection<PauseDayPartDocument>('pauseDayParts');
    this.open = db.collection<OpenPauseDocument>('openPauses');
  }

  /** Leaves the end in the pointer unless one is there; the pointer as it was. An insert that lost a race is an update once more (as bulkWriteInParts does). */
  private async pendingEnd(_id: string, merchantId: string, end: PauseEnded): Promise<OpenPauseDocument | null> {
    const leave = () =>
      this.open.findOneAndUpdate({ _id, merchantId }, { $setOnInsert: { pendingEnd: end } }, { upsert: true, returnDocument: 'before' });
    try {
      return await leave();
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      return leave();
    }
  }

  /**
   * Records the merchant's pauses that started and ended, in the order their events were made
   * (an end closes its subscription's pause started before it: in these steps, or stored), then
   * marks each day they touch for its cells to be computed again.
   */
  async record(merchantId: string, steps: readonly PauseStep[]): Promise<void> {
    const started = steps.flatMap((step) => ('start' in step ? [step.start] : []));
    const startedHere = new Map<string, PauseStarted>();
    const closes: PauseEnded[] = [];
    const endOf = new Map<string, PauseEnded>();
    for (const step of steps) {
      if ('start' in step) startedHere.set(step.start.subscriptionId, step.start);
      else {
        const start = startedHere.get(step.end.subscriptionId);
        startedHere.delete(step.end.subscriptionId);
        if (start) endOf.set(start.eventId, step.end);
        else closes.push(step.end);
      }
    }
    const openKey = (subscriptionId: string) => `${merchantId}:${subscriptionId}`;
    // The stored pauses these ends close: a close repeated after its pointer went has nothing left to do.
    const pointers =
      closes.length === 0 ? [] : await this.open.find({ _id: { $in: closes.map((c) => openKey(c.subscriptionId)) }, merchantId }).toArray();
    const pointerOf = new Map(pointers.map((p) => [p._id, p]));
    const stored = (start: PauseStarted) => ({
      subscriptionId: start.subscriptionId,
      day: dayOf(start.at),
      startedAt: start.at,
      reason: start.reason,
      cause: start.cause,
      planId: start.planId,
    });
    // A pause still open is inserted (one stored already by a repeated record stays as it is); one
    // that ended in these steps too is an upsert, since a repeat may find it stored without its end.
    await insertNew(
      this.pauses,
      started.filter((start) => !endOf.has(start.eventId)).map((start) => ({ _id: start.eventId, merchantId, ...stored(start) })),
      this.statementsPerCommand,
    );
    const writes: AnyBulkWriteOperation<PauseDocument>[] = started.flatMap((start) => {
      const end = endOf.get(start.eventId);
      return end
        ? [
            {
              updateOne: {
                filter: { _id: start.eventId, merchantId },
                update: { $setOnInsert: stored(start), $set: ending(end) },
                upsert: true,
              },
            },
          ]
        : [];
    });
    const closed: { end: PauseEnded; pointer: OpenPauseDocument }[] = [];
    const unmatched: PauseEnded[] = [];
    for (const end of closes) {
      const pointer = pointerOf.get(openKey(end.subscriptionId));
      if (pointer?.pauseId === undefined) unmatched.push(end);
      else {
        closed.push({ end, pointer });
        writes.push({ updateOne: { filter: { _id: pointer.pauseId, merchantId }, update: { $set: ending(end) } } });
      }
    }
    await bulkWriteInParts(this.pauses, writes, this.statementsPerCommand);
    // An end whose pause is not recorded yet (two relays at once took the pause and its end apart)
    // waits in the pointer for its start; one whose start came meanwhile closes it here.
    for (const end of unmatched) {
      const before = await this.pendingEnd(openKey(end.subscriptionId), merchantId, end);
      if (before?.pauseId === undefined) continue;
      await this.pauses.updateOne({ _id: before.pauseId, merchantId }, { $set: ending(end) });
      closed.push({ end, pointer: before });
    }
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
    const stillOpen = started.filter((start) => !endOf.has(start.eventId));
    // Most subscriptions have no pointer (a closed pause's goes): inserted, else set.
    await insertElseWrite(
      this.open,
      stillOpen.map((start) => ({ _id: openKey(start.subscriptionId), merchantId, pauseId: start.eventId, day: dayOf(start.at) })),
      ({ _id, pauseId, day }) => ({ updateOne: { filter: { _id, merchantId }, update: { $set: { pauseId, day } } } }),
      this.statementsPerCommand,
    );
    // A pause whose end came first: the end waiting in its pointer closes it.
    const waiting =
      stillOpen.length === 0
        ? []
        : await this.open.find({ _id: { $in: stillOpen.map((s) => openKey(s.subscriptionId)) }, merchantId }).toArray();
    for (const pointer of waiting) {
      const start = stillOpen.find((s) => s.eventId === pointer.pauseId);
      const end = pointer.pendingEnd;
      if (!start || !end || end.at < start.at) continue;
      await this.pauses.updateOne({ _id: start.eventId, merchantId }, { $set: ending(end) });
      closed.push({ end, pointer });
    }
    const days = new Set([...startedOn.keys(), ...closed.map(({ pointer }) => pointer.day)]);
    await this.markChanged(merchantId, [...days], partKeys);
    // Let go of the pointers last: a record cut short before this finds them again when repeated.
    await bulkWriteInParts(
      this.open,
      closed.map(({ pointer }) => ({ deleteOne: { filter: { _id: pointer._id, merchantId, pauseId: pointer.pauseId } } })),
      this.statementsPerCommand,
    );
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
    await this.days.updateOne({ _id, merchantId, basedOn: { $lt: seq } }, { $set: { basedOn: seq, cells } });
    return cells;
  }
}
