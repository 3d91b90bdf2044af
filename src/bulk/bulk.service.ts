/**
 * Accepting a bulk request (DESIGN.md §6): normalise and collapse the ids, keep the caller's own
 * subscriptions (one query), queue one command per id durably, and report what was not queued.
 * Nothing is applied here; the workers do that after the 202.
 */
import { randomUUID } from 'node:crypto';
import type { components } from '../../generated/openapi.js';
import type { SubscriptionsRepository } from '../subscriptions/subscriptions.repository.js';
import type { Operation } from '../subscriptions/subscriptions.rules.js';
import { CHUNK_SIZE, type BulkCommandChunk, type BulkQueue } from './bulk.jobs.js';

type BulkAcceptance = components['schemas']['BulkAcceptance'];

function chunked<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

export class BulkService {
  constructor(
    private readonly repository: SubscriptionsRepository,
    private readonly queue: BulkQueue,
  ) {}

  /** The ids were checked against the spec at the edge: 1 to 3000 UUIDs. */
  async accept(merchantId: string, operation: Operation, subscriptionIds: readonly string[]): Promise<BulkAcceptance> {
    const requestId = randomUUID();
    const unique = [...new Set(subscriptionIds.map((id) => id.toLowerCase()))];
    const owned = await this.repository.ownedIds(merchantId, unique);
    const accepted = unique.filter((id) => owned.has(id));
    const chunks: BulkCommandChunk[] = chunked(accepted, CHUNK_SIZE).map((ids) => ({
      requestId,
      merchantId,
      operation,
      subscriptionIds: ids,
      attempt: 1,
    }));
    await this.queue.enqueue(chunks);
    return {
      requestId,
      operation,
      acceptedCount: accepted.length,
      rejected: unique.filter((id) => !owned.has(id)).map((subscriptionId) => ({ subscriptionId, reason: 'not_found' })),
    };
  }
}
