/**
 * Every MongoDB call about forced failures (`testOutcomeAttempts`, docs/partners.md "Failures on
 * demand"): one document per failure a counted scenario (`unavailable:2`) has answered for one
 * Idempotency-Key, so that the count holds across a fleet. Each failure is an insert on a unique
 * `_id`, which is atomic on every engine, also where a conditional update is not (docs/design.md §8).
 */
import type { Collection, Db } from 'mongodb';
import { deleteInParts } from '../db/mongo-helpers.js';
import { isDuplicateKeyError } from '../db/mongo.js';
import { ensureTtlIndex } from '../db/retention.js';

interface AttemptDocument {
  /** `${merchantId}:${idempotencyKey}:${scenario}:${n}`: the n-th failure answered. */
  _id: string;
  merchantId: string;
  expiresAt: Date;
}

/** As long as the Idempotency-Key's own replay window: a retry within it sees the same count. */
const KEPT_MS = 24 * 60 * 60 * 1000;

export class TestOutcomesRepository {
  private readonly collection: Collection<AttemptDocument>;

  constructor(
    db: Db,
    /** Deletes in parts of at most this many documents (src/db/workarounds.ts); undefined: one statement. */
    private readonly documentsPerDelete?: number,
  ) {
    this.collection = db.collection<AttemptDocument>('testOutcomeAttempts');
  }

  /** A TTL index where the server has them; the retention sweeper calls `deleteExpired` where it does not (db/retention.ts). */
  async ensureIndexes(ttlIndexes: boolean): Promise<void> {
    await ensureTtlIndex(this.collection, ttlIndexes);
  }

  /** Records one more failure of `times` for this key and scenario: false once all `times` are recorded (the request goes through). */
  async failOnceMore(merchantId: string, key: string, scenario: string, times: number, now = new Date()): Promise<boolean> {
    const expiresAt = new Date(now.getTime() + KEPT_MS);
    for (let n = 1; n <= times; n++) {
      try {
        await this.collection.insertOne({ _id: `${merchantId}:${key}:${scenario}:${n}`, merchantId, expiresAt });
        return true;
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
    }
    return false;
  }

  async deleteExpired(now = new Date()): Promise<number> {
    return deleteInParts(this.collection, { expiresAt: { $lte: now } }, this.documentsPerDelete);
  }
}
