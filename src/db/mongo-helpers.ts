/** Small MongoDB helpers shared by the repositories. */
import type { AnyBulkWriteOperation, Collection, Document } from 'mongodb';
import { isDuplicateKeyError } from './mongo.js';

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

/** bulkWrite in commands of at most `perCommand` statements (undefined: one command), one after another; resolves to how many documents they modified. */
export async function bulkWriteInParts<T extends Document>(
  collection: Collection<T>,
  operations: readonly AnyBulkWriteOperation<T>[],
  perCommand = operations.length,
): Promise<number> {
  let modified = 0;
  for (let i = 0; i < operations.length; i += perCommand) {
    modified += (await collection.bulkWrite(operations.slice(i, i + perCommand), { ordered: false })).modifiedCount;
  }
  return modified;
}

/** Drops an index an earlier version made, if it is there (a collection not made yet has none). */
export async function dropIndexIfPresent<T extends Document>(collection: Collection<T>, name: string): Promise<void> {
  await collection.dropIndex(name).catch((error: { codeName?: string }) => {
    if (error.codeName !== 'IndexNotFound' && error.codeName !== 'NamespaceNotFound') throw error;
  });
}
