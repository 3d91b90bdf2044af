/**
 * Every MongoDB call about bulk requests. A request is one document, written by one insert: it
 * is accepted whole or not at all (docs/design.md §6). Once dispatched, its ids live in chunk
 * documents of up to CHUNK_SIZE, one per Agenda job, which also keep each command's outcome.
 */
import { randomUUID } from 'node:crypto';
import type { components } from '../../generated/openapi.js';
import type { Collection, Db } from 'mongodb';
import { GUARDED } from '../db/guarded.js';
import { UNQUEUED, type PerKeyQueue } from '../lib/keyed-mutex.js';
import { isDuplicateKeyError } from '../db/mongo.js';
import { ensureTtlIndex } from '../db/retention.js';
import { bulkWriteInParts, deleteInParts, pageAlongIds } from '../db/mongo-helpers.js';
import type { Operation } from '../subscriptions/subscriptions.rules.js';
import type { ScheduleRequest } from '../subscriptions/schedule.request.js';
import type { Page, PageRequest } from '../lib/pagination.js';
import { chunkIds, chunked } from './bulk.chunks.js';
import { itemOutcomes, storedOutcomes, type ItemOutcome, type StoredOutcomes } from './bulk.outcomes.js';

/** Chunk documents per insert: a 3000-id request's 30 in one. */
const CHUNKS_AT_ONCE = 50;
/** Commands of chunks inserted here that a worker here may take unread (`remember`), oldest dropped first: docs/performance.md#the-figures-behind-the-codes-choices. */
const REMEMBERED_COMMANDS = 50_000;

export interface Rejection {
  readonly subscriptionId: string;
  readonly reason: components['schemas']['RejectedSubscription']['reason'] | components['schemas']['UndoRejectedSubscription']['reason'];
}

export interface BulkRequest {
  readonly requestId: string;
  readonly merchantId: string;
  readonly operation: Operation;
  readonly acceptedCount: number;
  readonly rejected: readonly Rejection[];
  readonly chunkCount: number;
  readonly createdAt: string;
  readonly completedAt: string | null;
  /** A bulk pause's schedule, applied to every accepted id (docs/design.md §9). */
  readonly schedule?: ScheduleRequest;
  /** The id of the API key that made the request (never the key): its events' cause. */
  readonly apiKeyId?: string;
  /** The accepted ids, until the request is dispatched into chunks. */
  readonly subscriptionIds?: readonly string[];
  /** The accepting request's trace context (W3C traceparent), when tracing is on: its chunks continue the trace. */
  readonly traceparent?: string;
  /** On an undo: the request it undoes, and the latest time that applied a command undone (one modified since is skipped). */
  readonly undoes?: string;
  readonly unchangedSince?: string;
  /** On a request undone: its undo's id, set once (`claimUndo`). */
  readonly undoneBy?: string;
  /** On a hold's request (its pause or its release): the hold, which its changes name as their cause. */
  readonly holdId?: string;
}

export type { ItemOutcome } from './bulk.outcomes.js';

export interface BulkChunk {
  readonly chunkId: string;
  readonly requestId: string;
  readonly merchantId: string;
  readonly operation: Operation;
  readonly subscriptionIds: readonly string[];
  /** How many chunks the request has, so that the last one to finish can complete it. */
  readonly chunkCount: number;
  /** Set once, by the first run that finished the chunk. */
  readonly outcomes: readonly ItemOutcome[] | null;
  readonly schedule?: ScheduleRequest;
  /** Its request's: the API key id or the hold, its events' cause; an undo's unchangedSince, its commands' condition. */
  readonly apiKeyId?: string;
  readonly holdId?: string;
  readonly unchangedSince?: string;
}

interface RequestDocument extends Omit<BulkRequest, 'requestId'> {
  _id: string;
  dispatchedAt: string | null;
  expiresAt: Date;
}

interface ChunkDocument extends Omit<BulkChunk, 'chunkId' | 'outcomes'> {
  _id: string;
  outcomes: StoredOutcomes | null;
  expiresAt: Date;
  /** Which call recorded the outcomes (several chunks' outcomes are recorded in one write). */
  recordedBy?: string;
}

/** What a request's chunks finishing together reached: `first` when this call completed the request. */
export interface Completion {
  readonly merchantId: string;
  readonly requestId: string;
  readonly operation: Operation;
  readonly done: boolean;
  readonly first: boolean;
}

/** A finished chunk, small so that counting a request's finished chunks reads little. */
interface FinishedChunkDocument {
  _id: string;
  merchantId: string;
  expiresAt: Date;
}

function toRequest({ _id, dispatchedAt: _d, expiresAt: _e, ...rest }: RequestDocument): BulkRequest {
  return { requestId: _id, ...rest };
}

function toChunk({ _id, expiresAt: _e, recordedBy: _r, outcomes, ...rest }: ChunkDocument): BulkChunk {
  return { chunkId: _id, ...rest, outcomes: outcomes && itemOutcomes(outcomes, rest.subscriptionIds) };
}

/** The workarounds these writes take (src/db/workarounds.ts: undefined is one statement, UNQUEUED no guard), as on MongoDB by default. */
export interface BulkEngineNeeds {
  readonly documentsPerDelete?: number;
  readonly statementsPerCommand?: number;
  /** keyedMutex: an undo's claim queues on it (GUARDED.bulkRequest). */
  readonly guard?: PerKeyQueue;
}

export class BulkRepository {
  private readonly requests: Collection<RequestDocument>;
  private readonly chunks: Collection<ChunkDocument>;
  private readonly finished: Collection<FinishedChunkDocument>;
  /**
   * Chunks this process inserted and has not recorded outcomes for, when its workers take jobs
   * (`remember`), oldest first: the run that takes them in this process reads them from here,
   * not from the database, a read saved at a drain's first run and at each later one
   * (docs/performance.md#the-figures-behind-the-codes-choices). A chunk is the same document until its outcomes are recorded, which
   * drops it from here; one recorded by another process meanwhile is applied again by a run
   * here, which changes nothing and records nothing (bulk.worker.ts).
   */
  private readonly inserted = new Map<string, BulkChunk>();
  private insertedCommands = 0;
  private readonly guard: PerKeyQueue;
  private remembering = false;

  constructor(
    db: Db,
    private readonly retentionMs: number,
    private readonly engine: BulkEngineNeeds = {},
  ) {
    this.guard = engine.guard ?? UNQUEUED;
    this.requests = db.collection<RequestDocument>('bulkRequests');
    this.chunks = db.collection<ChunkDocument>('bulkChunks');
    this.finished = db.collection<FinishedChunkDocument>('bulkChunksFinished');
  }

  /** With TTL indexes on the three collections where the server has them; the retention sweeper calls `deleteExpired` where it does not (db/retention.ts). */
  async ensureIndexes(ttlIndexes: boolean): Promise<void> {
    await Promise.all([
      this.requests.createIndex({ merchantId: 1, _id: -1 }, { name: 'merchant_requests' }),
      this.requests.createIndex({ dispatchedAt: 1 }, { name: 'undispatched' }),
      ensureTtlIndex(this.requests, ttlIndexes),
      ensureTtlIndex(this.chunks, ttlIndexes),
      ensureTtlIndex(this.finished, ttlIndexes),
    ]);
  }

  /** The one write that accepts a request. */
  async insert(request: BulkRequest): Promise<void> {
    const { requestId, ...rest } = request;
    const expiresAt = new Date(Date.parse(request.createdAt) + this.retentionMs);
    const nothingToDo = request.acceptedCount === 0;
    await this.requests.insertOne({ _id: requestId, ...rest, dispatchedAt: nothingToDo ? request.createdAt : null, expiresAt });
  }

  /** Takes back a request whose insert may have reached the database while its answer did not. */
  async remove(merchantId: string, requestId: string): Promise<void> {
    await this.requests.deleteOne({ _id: requestId, merchantId, dispatchedAt: null });
  }

  async find(merchantId: string, requestId: string): Promise<BulkRequest | undefined> {
    const doc = await this.requests.findOne({ _id: requestId, merchantId }, { projection: { subscriptionIds: 0 } });
    return doc ? toRequest(doc) : undefined;
  }

  /** These requests of the merchant that exist, without their ids. */
  async findMany(merchantId: string, requestIds: readonly string[]): Promise<BulkRequest[]> {
    if (requestIds.length === 0) return [];
    const docs = await this.requests.find({ _id: { $in: [...requestIds] }, merchantId }, { projection: { subscriptionIds: 0 } }).toArray();
    return docs.map(toRequest);
  }

  /** The merchant's requests, newest first (request ids are UUIDv7, so `_id` order is time order). */
  page(merchantId: string, page: PageRequest): Promise<Page<BulkRequest>> {
    return pageAlongIds(this.requests, { merchantId }, page, true, toRequest, { subscriptionIds: 0 });
  }

  /** The request with its ids, while it still has them (not yet dispatched). */
  async findUndispatched(merchantId: string, requestId: string): Promise<BulkRequest | undefined> {
    const doc = await this.requests.findOne({ _id: requestId, merchantId, dispatchedAt: null });
    return doc ? toRequest(doc) : undefined;
  }

  /** Requests accepted before `before` and still not dispatched (the process that accepted them stopped). */
  async undispatchedBefore(before: string, limit: number): Promise<{ requestId: string; merchantId: string }[]> {
    const docs = await this.requests
      .find({ dispatchedAt: null, createdAt: { $lt: before } }, { projection: { _id: 1, merchantId: 1 } })
      .limit(limit)
      .toArray();
    return docs.map((d) => ({ requestId: d._id, merchantId: d.merchantId }));
  }

  /**
   * Writes the chunk documents, CHUNKS_AT_ONCE per insert (a request by filter has up to 1000 of
   * them, 5 MB); ones that exist already (a dispatch repeated) are left as they are.
   */
  async insertChunks(chunks: readonly BulkChunk[], createdAt: string): Promise<void> {
    const expiresAt = new Date(Date.parse(createdAt) + this.retentionMs);
    for (const part of chunked(chunks, CHUNKS_AT_ONCE)) {
      try {
        await this.chunks.insertMany(
          part.map(({ chunkId, outcomes: _none, ...rest }) => ({ _id: chunkId, ...rest, outcomes: null, expiresAt })),
          { ordered: false },
        );
        // Not kept when some existed already (a dispatch repeated): a run may have recorded their outcomes.
        this.keep(part);
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
    }
  }

  /** Keep the chunks inserted from now on for this process's workers (see `inserted`). */
  remember(): void {
    this.remembering = true;
  }

  private keep(chunks: readonly BulkChunk[]): void {
    if (!this.remembering) return;
    for (const chunk of chunks) {
      this.inserted.set(chunk.chunkId, chunk);
      this.insertedCommands += chunk.subscriptionIds.length;
    }
    for (const [id, chunk] of this.inserted) {
      if (this.insertedCommands <= REMEMBERED_COMMANDS) break;
      this.forget(id, chunk);
    }
  }

  private forget(chunkId: string, chunk = this.inserted.get(chunkId)): void {
    if (!chunk || !this.inserted.delete(chunkId)) return;
    this.insertedCommands -= chunk.subscriptionIds.length;
  }

  /** Sets the request's undo (bulk.undo.ts) only where none is, in one update: of two undos at once, one sets it. */
  claimUndo(merchantId: string, requestId: string, undoneBy: string): Promise<boolean> {
    return this.guard.run(GUARDED.bulkRequest(requestId), async () => {
      const result = await this.requests.updateOne({ _id: requestId, merchantId, undoneBy: { $exists: false } }, { $set: { undoneBy } });
      return result.modifiedCount === 1;
    });
  }

  /** Takes back a claim whose undo could not be stored, so that the request may be undone again. */
  async releaseUndo(merchantId: string, requestId: string, undoneBy: string): Promise<void> {
    await this.guard.run(GUARDED.bulkRequest(requestId), () =>
      this.requests.updateOne({ _id: requestId, merchantId, undoneBy }, { $unset: { undoneBy: '' } }),
    );
  }

  /** Drops the ids from the request document: its chunks hold them now. */
  async markDispatched(merchantId: string, requestId: string, at: string): Promise<void> {
    await this.requests.updateOne(
      { _id: requestId, merchantId, dispatchedAt: null },
      { $set: { dispatchedAt: at }, $unset: { subscriptionIds: '' } },
    );
  }

  async findChunk(merchantId: string, chunkId: string): Promise<BulkChunk | undefined> {
    const kept = this.inserted.get(chunkId);
    if (kept?.merchantId === merchantId) return kept;
    const doc = await this.chunks.findOne({ _id: chunkId, merchantId });
    return doc ? toChunk(doc) : undefined;
  }

  /** These chunks of the merchant that exist still (a job's chunk is gone once past its retention), in the order asked. */
  async findChunks(merchantId: string, chunkIds: readonly string[]): Promise<BulkChunk[]> {
    const found = new Map<string, BulkChunk>();
    for (const id of chunkIds) {
      const kept = this.inserted.get(id);
      if (kept?.merchantId === merchantId) found.set(id, kept);
    }
    const others = chunkIds.filter((id) => !found.has(id));
    if (others.length > 0)
      for (const doc of await this.chunks.find({ _id: { $in: others }, merchantId }).toArray()) found.set(doc._id, toChunk(doc));
    return chunkIds.flatMap((id) => found.get(id) ?? []);
  }

  /** The chunks of these requests of the merchant, by `_id`. */
  async chunksOf(merchantId: string, requests: readonly Pick<BulkRequest, 'requestId' | 'chunkCount'>[]): Promise<BulkChunk[]> {
    const ids = requests.flatMap((r) => chunkIds(r.requestId, r.chunkCount));
    if (ids.length === 0) return [];
    const docs = await this.chunks.find({ _id: { $in: ids }, merchantId }).toArray();
    return docs.map(toChunk);
  }

  /**
   * Records each chunk's outcomes unless a run did already, in one write (in commands of
   * statementsPerCommand where the engine needs it); returns the chunks this call recorded (read
   * back only when some were recorded already).
   */
  async recordOutcomes(
    merchantId: string,
    records: readonly { chunkId: string; outcomes: readonly ItemOutcome[] }[],
  ): Promise<Set<string>> {
    const recordedBy = randomUUID();
    for (const { chunkId } of records) this.forget(chunkId);
    const modified = await bulkWriteInParts(
      this.chunks,
      records.map(({ chunkId, outcomes }) => ({
        updateOne: {
          filter: { _id: chunkId, merchantId, outcomes: null },
          update: { $set: { outcomes: storedOutcomes(outcomes), recordedBy } },
        },
      })),
      this.engine.statementsPerCommand,
    );
    const ids = records.map((r) => r.chunkId);
    if (modified === records.length) return new Set(ids);
    if (modified === 0) return new Set();
    const ours = await this.chunks.find({ _id: { $in: ids }, merchantId, recordedBy }, { projection: { _id: 1 } }).toArray();
    return new Set(ours.map((d) => d._id));
  }

  /** Removes requests and chunks past their retention; where the server has TTL indexes they go by themselves. */
  async deleteExpired(now = new Date()): Promise<number> {
    const expired = { expiresAt: { $lte: now } };
    const [requests] = await Promise.all([
      deleteInParts(this.requests, expired, this.engine.documentsPerDelete),
      deleteInParts(this.chunks, expired, this.engine.documentsPerDelete),
      deleteInParts(this.finished, expired, this.engine.documentsPerDelete),
    ]);
    return requests;
  }

  /**
   * Notes chunks whose outcomes are recorded (one insert for all of them), then sets completedAt
   * on each of their requests once every chunk of it is noted. `done`: every chunk of the request
   * is noted; `first`: this call set completedAt. Safe to repeat (an insert by the chunk's id). A
   * request of one chunk is done once that chunk is noted, with nothing to count.
   */
  async finishChunks(chunks: readonly BulkChunk[], at: string): Promise<Completion[]> {
    if (chunks.length === 0) return [];
    const { merchantId } = chunks[0]!;
    const expiresAt = new Date(Date.now() + this.retentionMs);
    await this.finished
      .insertMany(
        chunks.map((c) => ({ _id: c.chunkId, merchantId, expiresAt })),
        { ordered: false },
      )
      .catch((error: unknown) => {
        if (!isDuplicateKeyError(error)) throw error;
      });
    const requests = [...new Map(chunks.map((c) => [c.requestId, c])).values()];
    const done = await Promise.all(requests.map((c) => this.allNoted(c)));
    const complete = requests.filter((_, i) => done[i]).map((c) => c.requestId);
    const first = await this.complete(merchantId, complete, at);
    return requests.map(({ requestId, operation }, i) => ({
      merchantId,
      requestId,
      operation,
      done: done[i]!,
      first: first.has(requestId),
    }));
  }

  /** Whether every chunk of the chunk's request is noted finished; a request of one chunk is, once that chunk is. */
  private async allNoted({ merchantId, requestId, chunkCount }: BulkChunk): Promise<boolean> {
    if (chunkCount === 1) return true;
    const ids = chunkIds(requestId, chunkCount);
    const done = await this.finished.countDocuments({ _id: { $in: ids }, merchantId });
    return done >= chunkCount;
  }

  /** Sets completedAt on the requests still without one, in one update; returns those this call set (read back only when some were set already). */
  private async complete(merchantId: string, requestIds: readonly string[], at: string): Promise<Set<string>> {
    if (requestIds.length === 0) return new Set();
    const result = await this.requests.updateMany(
      { _id: { $in: [...requestIds] }, merchantId, completedAt: null },
      { $set: { completedAt: at } },
    );
    if (result.modifiedCount === requestIds.length) return new Set(requestIds);
    if (result.modifiedCount === 0) return new Set();
    const set = await this.requests
      .find({ _id: { $in: [...requestIds] }, merchantId, completedAt: at }, { projection: { _id: 1 } })
      .toArray();
    return new Set(set.map((d) => d._id));
  }
}
