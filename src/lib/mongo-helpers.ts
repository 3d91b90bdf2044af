/** Small MongoDB helpers shared by the events and webhooks repositories. */
import type { AnyBulkWriteOperation, Collection, Document } from 'mongodb';
import { isDuplicateKeyError } from '../db/mongo.js';
import type { Logger } from '../logger.js';

/**
 * The owner's part of a filter on a merchant-owned collection (docs/sharding.md): `{merchantId}`,
 * or nothing for work queued by an earlier version that did not record the merchant (such a
 * command is then sent to every shard; it lasts as long as that work does).
 */
export function ownedBy(merchantId: string | undefined): { merchantId?: string } {
  return merchantId === undefined ? {} : { merchantId };
}

/** Inserts the documents; ones whose `_id` exists already are left as they are (a repeated step). */
export async function insertNew<T extends Document>(collection: Collection<T>, docs: readonly T[]): Promise<void> {
  if (docs.length === 0) return;
  try {
    await collection.insertMany(docs as never[], { ordered: false });
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
  }
}

/** A TTL index on `expiresAt` where the server has them; elsewhere (FerretDB v1) the caller's sweep deletes instead. */
export async function ensureTtlIndex<T extends Document>(collection: Collection<T>, ttlIndexes: boolean, log: Logger, what: string): Promise<void> {
  try {
    await collection.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0, name: 'expires' });
  } catch (error) {
    if (ttlIndexes) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    log.warn({ reason }, `no TTL index for ${what}; expired ones are swept periodically instead`);
  }
}

/**
 * Statements per write command. FerretDB v1 (SQLite) holds a connection for each statement of an
 * update command until the whole command ends: measured here, a bulkWrite of 100 updateOne with
 * other work going on exhausted its pool and stopped every client (a goroutine dump showed the
 * command holding 100 open result sets while waiting for one more connection). MongoDB has no
 * such limit; a few more round trips cost little.
 */
const STATEMENTS_PER_COMMAND = 16;

/** bulkWrite in commands of at most STATEMENTS_PER_COMMAND statements, one after another; resolves to how many documents they modified. */
export async function bulkWriteInParts<T extends Document>(collection: Collection<T>, operations: readonly AnyBulkWriteOperation<T>[]): Promise<number> {
  let modified = 0;
  for (let i = 0; i < operations.length; i += STATEMENTS_PER_COMMAND) {
    modified += (await collection.bulkWrite(operations.slice(i, i + STATEMENTS_PER_COMMAND), { ordered: false })).modifiedCount;
  }
  return modified;
}
