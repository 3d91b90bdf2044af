/** What a test can see of bulk requests without the API, and requests stored without it. */
import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { CHUNK_SIZE, chunkIds } from '../../src/bulk/bulk.chunks.js';
import { BulkRepository, type ItemOutcome } from '../../src/bulk/bulk.repository.js';
import { nowTimestamp } from '../../src/lib/clock.js';
import { partsOf } from '../../src/lib/parts.js';

export const bulkRequestsOf = (db: Db, merchantId: string) => db.collection('bulkRequests').countDocuments({ merchantId });

type OutcomeOf = (i: number) => Pick<ItemOutcome, 'outcome' | 'reason'>;

/**
 * A completed PAUSE request of `count` items stored as the workers store one (applied, but where
 * `outcomeOf` says otherwise), written straight into the database in parts, not through the API
 * (which takes at most 3000 ids). Its subscription ids are random, in order.
 */
export async function storedBulkRequest(
  db: Db,
  merchantId: string,
  count: number,
  outcomeOf: OutcomeOf = () => ({ outcome: 'applied', reason: null }),
): Promise<{ requestId: string; ids: string[] }> {
  const repository = new BulkRepository(db, 86_400_000);
  const requestId = randomUUID();
  const ids = Array.from({ length: count }, () => randomUUID()).sort();
  const at = nowTimestamp();
  const chunkCount = Math.ceil(count / CHUNK_SIZE);
  await repository.insert({
    requestId,
    merchantId,
    operation: 'PAUSE',
    acceptedCount: count,
    rejected: [],
    chunkCount,
    createdAt: at,
    completedAt: at,
  });
  const names = chunkIds(requestId, chunkCount);
  const chunks = partsOf(ids, CHUNK_SIZE).map((subscriptionIds, i) => ({
    chunkId: names[i]!,
    requestId,
    merchantId,
    operation: 'PAUSE' as const,
    subscriptionIds,
    chunkCount,
    outcomes: null,
  }));
  for (const part of partsOf(chunks, 50)) await repository.insertChunks(part, at);
  await repository.markDispatched(merchantId, requestId, at);
  const records = chunks.map(({ chunkId, subscriptionIds }, c) => ({
    chunkId,
    outcomes: subscriptionIds.map((subscriptionId, i) => ({ subscriptionId, at, ...outcomeOf(c * CHUNK_SIZE + i) })),
  }));
  for (const part of partsOf(records, 50)) await repository.recordOutcomes(merchantId, part);
  return { requestId, ids };
}
