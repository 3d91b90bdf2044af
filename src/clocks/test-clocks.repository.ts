/**
 * Every MongoDB call about test clocks (`testClocks`): one document per test mode that has been
 * advanced, keyed by the test mode's id (also its `merchantId`, docs/sharding.md). A test mode
 * without one reads the real time (docs/partners.md "Test clocks").
 */
import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError } from '../db/mongo.js';
import { GUARDED } from '../db/guarded.js';
import type { PerKeyQueue } from '../lib/keyed-mutex.js';

interface ClockDocument {
  _id: string;
  merchantId: string;
  /** A timestamp (docs/design.md §5): where the clock stands. */
  now: string;
}

export class TestClocksRepository {
  private readonly collection: Collection<ClockDocument>;

  /** `guard`: where the server's conditional update is not atomic, each move queues on it (GUARDED.testClock); UNQUEUED on MongoDB. */
  constructor(
    db: Db,
    private readonly guard: PerKeyQueue,
  ) {
    this.collection = db.collection<ClockDocument>('testClocks');
  }

  /** Where the test mode's clock stands; undefined: never advanced (it reads the real time). */
  async timeOf(merchantId: string): Promise<string | undefined> {
    return (await this.collection.findOne({ _id: merchantId, merchantId }, { projection: { now: 1 } }))?.now;
  }

  /** Moves the clock to `to` if it still stands at `from` (undefined: never advanced); false when another advance moved it first. */
  move(merchantId: string, from: string | undefined, to: string): Promise<boolean> {
    return this.guard.run(GUARDED.testClock(merchantId), async () => {
      if (from !== undefined)
        return (await this.collection.updateOne({ _id: merchantId, merchantId, now: from }, { $set: { now: to } })).matchedCount === 1;
      try {
        await this.collection.insertOne({ _id: merchantId, merchantId, now: to });
        return true;
      } catch (error) {
        if (isDuplicateKeyError(error)) return false;
        throw error;
      }
    });
  }
}
