/**
 * Every MongoDB call about the pause history (docs/analytics.md#how-the-figures-are-kept): one
 * document per pause in `pauses`, from its start to its end, and one per merchant and UTC day in
 * `pauseDays` holding that day's pauses as cells (analytics.rules.ts). A read adds up at most a
 * document per day, however long the history, which is what keeps it flat.
 *
 * Exactly once through any crash: a pause's writes are keyed by its events' ids, so repeating them
 * changes nothing, and a day's cells are never added to but computed again from its pauses. Each
 * write to a day's pauses raises the day's `seq` afterwards; its cells are computed again whenever
 * `seq` is ahead of the `seq` they were computed at (`basedOn`), and a computation stores its cells
 * only over older ones, so two at once, or one overtaken by a new pause, leave the newest.
 */
import type { AnyBulkWriteOperation, Collection, Db } from 'mongodb';
import { bulkWriteInParts } from '../db/mongo-helpers.js';
import { cellsOf, type Cell, type CauseKind, type Pause, type PauseEnd } from './analytics.rules.js';

interface PauseDocument extends Pause {
  /** The id of the `subscription.paused` event that started it. */
  _id: string;
  merchantId: string;
  subscriptionId: string;
  /** Present while it has not ended: at most one such pause per subscription. */
  open?: true;
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

export class PauseHistoryRepository {
  private readonly pauses: Collection<PauseDocument>;
  private readonly days: Collection<PauseDayDocument>;

  constructor(
    db: Db,
    /** Statements per bulk write where the engine needs parts (src/db/workarounds.ts); undefined: one. */
    private readonly statementsPerCommand?: number,
  ) {
    this.pauses = db.collection<PauseDocument>('pauses');
    this.days = db.collection<PauseDayDocument>('pauseDays');
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      this.pauses.createIndex({ merchantId: 1, day: 1 }, { name: 'merchant_pause_days' }),
      this.pauses.createIndex({ merchantId: 1, subscriptionId: 1 }, { name: 'merchant_subscription_pauses' }),
      this.days.createIndex({ merchantId: 1, day: 1 }, { name: 'merchant_days' }),
    ]);
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
    const writes: AnyBulkWriteOperation<PauseDocument>[] = started.map((start) => {
      const end = endOf.get(start.eventId);
      const fields = { subscriptionId: start.subscriptionId, day: dayOf(start.at), startedAt: start.at };
      const described = { reason: start.reason, cause: start.cause, planId: start.planId };
      return {
        updateOne: {
          filter: { _id: start.eventId, merchantId },
          update: end
            ? { $setOnInsert: { ...fields, ...described }, $set: ending(end), $unset: { open: '' } }
            : { $setOnInsert: { ...fields, ...described, open: true } },
          upsert: true,
        },
      };
    });
    for (const end of closes)
      writes.push({
        updateOne: {
          filter: { merchantId, subscriptionId: end.subscriptionId, open: true, startedAt: { $lte: end.at } },
          update: { $set: ending(end), $unset: { open: '' } },
        },
      });
    await bulkWriteInParts(this.pauses, writes, this.statementsPerCommand);
    const days = new Set(started.map((s) => dayOf(s.at)));
    if (closes.length > 0) {
      // The days of the stored pauses they closed (this time, or by a run of this record that a crash cut short).
      const closed = await this.pauses
        .find(
          {
            merchantId,
            subscriptionId: { $in: [...new Set(closes.map((c) => c.subscriptionId))] },
            endEventId: { $in: closes.map((c) => c.eventId) },
          },
          { projection: { day: 1 } },
        )
        .toArray();
      for (const { day } of closed) days.add(day);
    }
    await this.markChanged(merchantId, [...days]);
  }

  private async markChanged(merchantId: string, days: readonly string[]): Promise<void> {
    await bulkWriteInParts(
      this.days,
      days.map((day) => ({
        updateOne: {
          filter: { _id: `${merchantId}:${day}`, merchantId },
          update: { $inc: { seq: 1 }, $setOnInsert: { day, basedOn: 0, cells: [] } },
          upsert: true,
        },
      })),
      this.statementsPerCommand,
    );
  }

  /** The cells of each of the merchant's days in [from, to] that had a pause, each computed again first when its pauses changed since. */
  async daysBetween(merchantId: string, from: string, to: string): Promise<DayCells[]> {
    const stored = await this.days.find({ merchantId, day: { $gte: from, $lte: to } }).toArray();
    const days: DayCells[] = [];
    // One day at a time: a history stored at once leaves many days to compute, which together would take every connection.
    for (const doc of stored) days.push({ day: doc.day, cells: doc.seq > doc.basedOn ? await this.computeAgain(doc) : doc.cells });
    return days;
  }

  private async computeAgain({ _id, merchantId, day, seq }: PauseDayDocument): Promise<Cell[]> {
    const pauses = await this.pauses
      .find({ merchantId, day }, { projection: { _id: 0, merchantId: 0, subscriptionId: 0, open: 0, endEventId: 0 } })
      .toArray();
    const cells = cellsOf(pauses);
    await this.days.updateOne({ _id, merchantId, basedOn: { $lt: seq } }, { $set: { basedOn: seq, cells } });
    return cells;
  }
}
