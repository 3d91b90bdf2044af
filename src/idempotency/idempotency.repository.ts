/**
 * Stored responses for Idempotency-Key, scoped per merchant. Claiming a key is one insert on a
 * unique _id: atomic on every engine, also where a conditional update is not (docs/design.md §8).
 */
import type { Collection, Db } from 'mongodb';
import { deleteInParts } from '../db/mongo-helpers.js';
import { isDuplicateKeyError } from '../db/mongo.js';
import { ensureTtlIndex } from '../db/retention.js';
import { RETRY } from '../retry-policies.js';
import { untilSettled } from '../lib/retry.js';

interface IdempotencyDocument {
  /** `${merchantId}:${key}`. */
  _id: string;
  /** The owner, for the shard key {merchantId, _id} (docs/sharding.md). */
  merchantId: string;
  fingerprint: string;
  state: 'in_flight' | 'done';
  status?: number;
  body?: unknown;
  /** The response's Location header, where it had one (a bulk 202). */
  location?: string;
  createdAt: Date;
  expiresAt: Date;
}

export type Claim =
  | { readonly kind: 'new' }
  | { readonly kind: 'replay'; readonly response: StoredResponse }
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'in_flight' };

export interface StoredResponse {
  readonly status: number;
  readonly body: unknown;
  readonly location?: string;
}

export const REPLAY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** A claim held longer than this belongs to a request that died; the key may be used again. */
const ABANDONED_AFTER_MS = 60_000;

export class IdempotencyRepository {
  private readonly collection: Collection<IdempotencyDocument>;

  constructor(
    db: Db,
    /** Deletes in parts of at most this many documents (src/db/workarounds.ts); undefined: one statement. */
    private readonly documentsPerDelete?: number,
  ) {
    this.collection = db.collection<IdempotencyDocument>('idempotencyKeys');
  }

  /** A TTL index where the server has them; the retention sweeper calls `deleteExpired` where it does not (db/retention.ts). */
  async ensureIndexes(ttlIndexes: boolean): Promise<void> {
    await ensureTtlIndex(this.collection, ttlIndexes);
  }

  async claim(merchantId: string, key: string, fingerprint: string, now = new Date()): Promise<Claim> {
    const _id = `${merchantId}:${key}`;
    const claim = await untilSettled(RETRY.idempotencyClaim, async (): Promise<Claim | undefined> => {
      try {
        await this.collection.insertOne({
          _id,
          merchantId,
          fingerprint,
          state: 'in_flight',
          createdAt: now,
          expiresAt: new Date(now.getTime() + REPLAY_WINDOW_MS),
        });
        return { kind: 'new' };
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
      const existing = await this.collection.findOne({ _id, merchantId });
      if (!existing) return undefined;
      const abandoned = existing.state === 'in_flight' && now.getTime() - existing.createdAt.getTime() > ABANDONED_AFTER_MS;
      if (existing.expiresAt <= now || abandoned) {
        await this.collection.deleteOne({ _id, merchantId, createdAt: existing.createdAt });
        return undefined;
      }
      if (existing.state === 'in_flight') return { kind: 'in_flight' };
      if (existing.fingerprint !== fingerprint) return { kind: 'mismatch' };
      const { status, body, location } = existing;
      return { kind: 'replay', response: { status: status!, body, ...(location ? { location } : {}) } };
    });
    return claim ?? { kind: 'in_flight' };
  }

  async complete(merchantId: string, key: string, response: StoredResponse): Promise<void> {
    await this.collection.updateOne({ _id: `${merchantId}:${key}`, merchantId }, { $set: { state: 'done', ...response } });
  }

  async release(merchantId: string, key: string): Promise<void> {
    await this.collection.deleteOne({ _id: `${merchantId}:${key}`, merchantId, state: 'in_flight' });
  }

  async deleteExpired(now = new Date()): Promise<number> {
    return deleteInParts(this.collection, { expiresAt: { $lte: now } }, this.documentsPerDelete);
  }
}
