/**
 * When the next schedule falls due, in one small document, so that the workers' poll reads one
 * document by `_id` rather than querying the subscriptions while nothing is due. Built only where
 * no index serves the due query (the `scheduleClock` workaround, src/db/workarounds.ts): there the
 * query reads every subscription, which a poll every second would repeat without end (the
 * figures: docs/engine.md#the-figures-behind-the-workarounds).
 *
 * Every write that sets a pending time lowers the clock afterwards (`$min`, and a new version);
 * the poll, having applied what is due, sets it to the earliest time left unless a write lowered
 * it meanwhile (the version changed). A process that dies between its write and the note leaves a
 * time the clock does not know: the poll therefore also reads the subscriptions at start and every
 * FULL_SWEEP_MS whatever the clock says (docs/design.md §9).
 */
import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError } from '../db/mongo.js';
import { GUARDED } from '../db/guarded.js';
import type { PerKeyQueue } from '../lib/keyed-mutex.js';

/** Later than any timestamp: nothing pending. (`null` would not do: `$min` ranks it below every string.) */
const NOTHING_PENDING = '9999-12-31T23:59:59.999999Z';

interface ClockDocument {
  _id: 'next';
  at: string;
  version: number;
}

export interface ClockReading {
  /** The earliest pending time, or undefined when nothing is pending. */
  readonly at: string | undefined;
  readonly version: number;
}

export class ScheduleClock {
  private readonly collection: Collection<ClockDocument>;

  /** `guard`: the engine's per-document queue; the clock is built only where it queues (GUARDED.scheduleClock). */
  constructor(
    db: Db,
    private readonly guard: PerKeyQueue,
  ) {
    this.collection = db.collection<ClockDocument>('scheduleClock');
  }

  /** Called after a write that set pending times, with the earliest of them. */
  async note(earliest: string): Promise<void> {
    await this.guard.run(GUARDED.scheduleClock(), () =>
      this.collection.updateOne({ _id: 'next' }, { $min: { at: earliest }, $inc: { version: 1 } }, { upsert: true }),
    );
  }

  /** undefined when the clock was never set (a new database, or one written before the clock existed). */
  async read(): Promise<ClockReading | undefined> {
    const doc = await this.collection.findOne({ _id: 'next' });
    return doc ? { at: doc.at === NOTHING_PENDING ? undefined : doc.at, version: doc.version } : undefined;
  }

  /** Sets the earliest pending time found by a poll that read the clock as `read`, unless a write lowered it since. */
  async settle(read: ClockReading | undefined, earliest: string | undefined): Promise<void> {
    try {
      await this.guard.run(GUARDED.scheduleClock(), () =>
        this.collection.updateOne(
          { _id: 'next', version: read?.version ?? 0 },
          { $set: { at: earliest ?? NOTHING_PENDING } },
          { upsert: read === undefined },
        ),
      );
    } catch (error) {
      // A writer created the clock first: its time stands.
      if (!isDuplicateKeyError(error)) throw error;
    }
  }
}
