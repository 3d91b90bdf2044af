/** Small MongoDB helpers shared by the repositories. */
import { MongoBulkWriteError, type AnyBulkWriteOperation, type Collection, type Document, type Filter, type WithId } from 'mongodb';
import { pageOf, type Page, type PageRequest } from '../lib/pagination.js';
import { isDuplicateKeyError } from './mongo.js';

/** Inserts the documents (in parts of `perCommand`); ones whose `_id` exists already are left as they are (a repeated step). */
export async function insertNew<T extends Document>(collection: Collection<T>, docs: readonly T[], perCommand?: number): Promise<void> {
  await insertElseWrite(collection, docs, () => undefined, perCommand);
}

/**
 * Inserts the documents in parts of `perCommand`; each whose `_id` exists already gets the write
 * `instead` makes of it (none: left as it is). Cheaper than an upsert each where most are new: an
 * engine may run each upsert as a read and then a write.
 */
export async function insertElseWrite<T extends Document>(
  collection: Collection<T>,
  docs: readonly T[],
  instead: (doc: T) => AnyBulkWriteOperation<T> | undefined,
  perCommand = docs.length,
): Promise<void> {
  for (let i = 0; i < docs.length; i += perCommand) {
    const part = docs.slice(i, i + perCommand);
    try {
      await collection.insertMany(part as never[], { ordered: false });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      const existing = error instanceof MongoBulkWriteError ? [error.writeErrors].flat().map((e) => part[e.index]!) : part;
      const writes = existing.flatMap((doc) => instead(doc) ?? []);
      await bulkWriteInParts(collection, writes, perCommand);
    }
  }
}

/**
 * bulkWrite in commands of at most `perCommand` statements (undefined: one command), one after
 * another; resolves to how many documents they modified. An upsert whose insert lost a race to
 * another writer's insert of the same key is sent once more (as an update of that document): MongoDB
 * does this itself for an equality on a unique index, FerretDB answers E11000 instead.
 */
export async function bulkWriteInParts<T extends Document>(
  collection: Collection<T>,
  operations: readonly AnyBulkWriteOperation<T>[],
  perCommand = operations.length,
): Promise<number> {
  let modified = 0;
  for (let i = 0; i < operations.length; i += perCommand) modified += await writePart(collection, operations.slice(i, i + perCommand));
  return modified;
}

async function writePart<T extends Document>(collection: Collection<T>, part: AnyBulkWriteOperation<T>[], again = false): Promise<number> {
  try {
    return (await collection.bulkWrite(part, { ordered: false })).modifiedCount;
  } catch (error) {
    const lost = again ? undefined : lostUpserts(error, part);
    if (!lost) throw error;
    return (error as MongoBulkWriteError).result.modifiedCount + (await writePart(collection, lost, true));
  }
}

/** The statements that failed only because their upsert's insert lost a race; undefined when any other failed. */
function lostUpserts<T extends Document>(
  error: unknown,
  part: readonly AnyBulkWriteOperation<T>[],
): AnyBulkWriteOperation<T>[] | undefined {
  if (!(error instanceof MongoBulkWriteError) || !isDuplicateKeyError(error)) return undefined;
  const failed = [error.writeErrors].flat().map((e) => part[e.index]!);
  return failed.every((op) => 'updateOne' in op && op.updateOne.upsert === true) ? failed : undefined;
}

/**
 * deleteMany, in parts of at most `perDelete` documents where the engine needs it (db/workarounds.ts
 * documentsPerDelete; undefined: one statement, as on MongoDB): each part's ids are read, then
 * deleted by them with the filter still applied. Resolves to how many documents it deleted.
 */
export async function deleteInParts<T extends Document>(
  collection: Collection<T>,
  filter: Filter<T>,
  perDelete: number | undefined,
): Promise<number> {
  if (perDelete === undefined) return (await collection.deleteMany(filter)).deletedCount;
  let deleted = 0;
  for (;;) {
    const ids = (await collection.find(filter, { projection: { _id: 1 }, limit: perDelete }).toArray()).map((doc) => doc._id);
    if (ids.length === 0) return deleted;
    const part = await collection.deleteMany({ ...filter, _id: { $in: ids } });
    deleted += part.deletedCount;
    // The last part; or one that another process deleted first, which then sweeps the rest.
    if (ids.length < perDelete || part.deletedCount === 0) return deleted;
  }
}

/**
 * One page of a walk along `_id` after the cursor (the ids are UUIDv7, so `_id` order is time
 * order): `newestFirst`, or oldest first; each document shown as `view` makes it.
 */
export async function pageAlongIds<T extends { _id: string }, V>(
  collection: Collection<T>,
  filter: Filter<T>,
  { limit, startingAfter }: PageRequest,
  newestFirst: boolean,
  view: (doc: WithId<T>) => V,
  projection?: Document,
): Promise<Page<V>> {
  const after = startingAfter ? { _id: newestFirst ? { $lt: startingAfter } : { $gt: startingAfter } } : {};
  const docs = await collection
    .find({ ...filter, ...after } as Filter<T>, projection ? { projection } : {})
    .sort({ _id: newestFirst ? -1 : 1 })
    .limit(limit + 1)
    .toArray();
  const page = pageOf(docs, limit, (doc) => doc._id);
  return { ...page, data: page.data.map(view) };
}
