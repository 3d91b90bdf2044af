/**
 * The read side of bulk requests: where a request stands and what each command did. Counts and
 * items are worked out from the chunk documents, where each outcome is recorded once, so they
 * are exact even when a chunk ran twice; the five counts always add up to `acceptedCount`.
 */
import type { components } from '../../generated/openapi.js';
import { livemodeOf } from '../merchants/livemode.js';
import type { Page, PageRequest } from '../lib/pagination.js';
import { pageOf } from '../lib/pagination.js';
import { partsOf } from '../lib/parts.js';
import { CHUNK_SIZE, chunkIds } from './bulk.chunks.js';
import { BulkRequestNotFoundError } from './bulk.errors.js';
import type { BulkChunk, BulkRepository, BulkRequest } from './bulk.repository.js';

export type BulkRequestView = components['schemas']['BulkRequest'];
export type BulkRequestItem = components['schemas']['BulkRequestItem'];
/** An item as the request's chunks hold it; `livemode` is its merchant's. */
export type StoredItem = Omit<BulkRequestItem, 'livemode'>;
type Outcome = components['schemas']['CommandOutcome'];

/** An export's items, a batch at a time, and the request's id as stored. */
export interface ItemBatches {
  readonly requestId: string;
  readonly batches: AsyncIterable<StoredItem[]>;
}

/**
 * The most items a request by a list of ids has (the spec's `maxItems`): an export sorts those in
 * memory, as a page does. A larger request comes from a filter, whose ids are in order at
 * acceptance (bulk.service.ts `select`), so its chunks are read in order, a few at a time.
 */
const SORTED_IN_MEMORY = 3000;
/** Chunks per read of a large export: CHUNKS_PER_READ × CHUNK_SIZE items in memory at once. */
const CHUNKS_PER_READ = 20;

const pending = (subscriptionId: string): StoredItem => ({ subscriptionId, outcome: 'pending', reason: null, at: null });
const itemsOf = (chunk: BulkChunk): StoredItem[] => chunk.outcomes?.map((o) => ({ ...o })) ?? chunk.subscriptionIds.map(pending);
// Where src/http/problem.middleware.ts imports it from.

const bySubscriptionId = (a: StoredItem, b: StoredItem) => (a.subscriptionId < b.subscriptionId ? -1 : 1);

async function* mapBatches<T>(batches: AsyncIterable<T[]>, map: (batch: T[]) => T[]): AsyncGenerator<T[]> {
  for await (const batch of batches) yield map(batch);
}

function view(request: BulkRequest, chunks: readonly BulkChunk[]): BulkRequestView {
  const counts = { pending: 0, applied: 0, noop: 0, skipped: 0, failed: 0 };
  let lastAt: string | null = null;
  for (const { outcomes } of chunks) {
    for (const item of outcomes ?? []) {
      counts[item.outcome] += 1;
      if (lastAt === null || item.at > lastAt) lastAt = item.at;
    }
  }
  counts.pending = request.acceptedCount - counts.applied - counts.noop - counts.skipped - counts.failed;
  const state = counts.pending === 0 ? 'completed' : counts.pending === request.acceptedCount ? 'queued' : 'running';
  const { requestId, operation, acceptedCount, createdAt } = request;
  // The last outcome is when it completed, whether or not the worker that recorded it lived to say so.
  const completedAt = state === 'completed' ? (request.completedAt ?? lastAt ?? createdAt) : null;
  const undoes = request.undoes ? { undoes: request.undoes } : {};
  const hold = request.holdId ? { holdId: request.holdId } : {};
  return {
    requestId,
    operation,
    state,
    acceptedCount,
    counts,
    createdAt,
    completedAt,
    ...undoes,
    ...hold,
    livemode: livemodeOf(request.merchantId),
  };
}

export class BulkStatusService {
  constructor(private readonly repository: BulkRepository) {}

  async get(merchantId: string, requestId: string): Promise<BulkRequestView> {
    const request = await this.found(merchantId, requestId);
    return view(request, await this.repository.chunksOf(merchantId, [request]));
  }

  /** Several requests' views in two reads (a worker's run completes several at once); requests that do not exist are left out. */
  async getMany(merchantId: string, requestIds: readonly string[]): Promise<BulkRequestView[]> {
    const requests = await this.repository.findMany(merchantId, requestIds);
    const chunks = await this.repository.chunksOf(merchantId, requests);
    return requests.map((r) =>
      view(
        r,
        chunks.filter((c) => c.requestId === r.requestId),
      ),
    );
  }

  async list(merchantId: string, page: PageRequest): Promise<Page<BulkRequestView>> {
    const requests = await this.repository.page(merchantId, { ...page, startingAfter: page.startingAfter?.toLowerCase() });
    const chunks = await this.repository.chunksOf(merchantId, requests.data);
    return {
      ...requests,
      data: requests.data.map((r) =>
        view(
          r,
          chunks.filter((c) => c.requestId === r.requestId),
        ),
      ),
    };
  }

  /** Every accepted command's outcome, in subscription id order. */
  async items(
    merchantId: string,
    requestId: string,
    outcome: Outcome | undefined,
    { limit, startingAfter }: PageRequest,
  ): Promise<Page<BulkRequestItem>> {
    const request = await this.found(merchantId, requestId);
    const after = startingAfter?.toLowerCase();
    const all = (await this.allItems(request))
      .filter((item) => (outcome === undefined || item.outcome === outcome) && (after === undefined || item.subscriptionId > after))
      .sort(bySubscriptionId);
    const livemode = livemodeOf(merchantId);
    return pageOf(
      all.slice(0, limit + 1).map((item) => ({ ...item, livemode })),
      limit,
      (item) => item.subscriptionId,
    );
  }

  /** Every item of the request (of `outcome`, if given) in subscription id order, a batch at a time: an export that never holds them all. */
  async itemBatches(merchantId: string, requestId: string, outcome: Outcome | undefined): Promise<ItemBatches> {
    const request = await this.found(merchantId, requestId);
    const wanted = (items: StoredItem[]) => (outcome === undefined ? items : items.filter((item) => item.outcome === outcome));
    return { requestId: request.requestId, batches: mapBatches(this.batchesOf(request), wanted) };
  }

  private async *batchesOf(request: BulkRequest): AsyncGenerator<StoredItem[]> {
    if (request.acceptedCount <= SORTED_IN_MEMORY) {
      yield (await this.allItems(request)).sort(bySubscriptionId);
      return;
    }
    // Chunks are written before the request is marked dispatched: either its ids are here, or every chunk is stored.
    const undispatched = await this.repository.findUndispatched(request.merchantId, request.requestId);
    if (undispatched?.subscriptionIds) {
      for (const ids of partsOf(undispatched.subscriptionIds, CHUNK_SIZE * CHUNKS_PER_READ)) yield ids.map(pending);
      return;
    }
    for (const ids of partsOf(chunkIds(request.requestId, request.chunkCount), CHUNKS_PER_READ)) {
      yield (await this.repository.findChunks(request.merchantId, ids)).flatMap(itemsOf);
    }
  }

  private async allItems(request: BulkRequest, dispatchedMeanwhile = false): Promise<StoredItem[]> {
    const chunks = await this.repository.chunksOf(request.merchantId, [request]);
    if (chunks.length < request.chunkCount && !dispatchedMeanwhile) {
      // Not dispatched yet: the ids are still in the request document (unless it was dispatched meanwhile).
      const undispatched = await this.repository.findUndispatched(request.merchantId, request.requestId);
      if (undispatched?.subscriptionIds) return undispatched.subscriptionIds.map(pending);
      return this.allItems(request, true);
    }
    return chunks.flatMap(itemsOf);
  }

  private async found(merchantId: string, requestId: string): Promise<BulkRequest> {
    const request = await this.repository.find(merchantId, requestId.toLowerCase());
    if (!request) throw new BulkRequestNotFoundError(requestId);
    return request;
  }
}
