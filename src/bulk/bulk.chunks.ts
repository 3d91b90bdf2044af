/**
 * The chunk format shared by the producer (dispatch) and the consumer (workers). One Agenda job
 * carries one chunk of up to CHUNK_SIZE commands rather than one job per command: Agenda has no
 * bulk create, and a worker applies a chunk with two conditional updateMany and one read instead
 * of a hundred round trips, while every command's outcome is still kept and logged.
 */
import { partsOf } from '../lib/parts.js';
import type { Operation } from '../subscriptions/subscriptions.rules.js';

export const CHUNK_SIZE = 100;

/** What an Agenda job carries: the chunk document holds the ids and, once run, the outcomes. */
export interface ChunkJobData {
  readonly chunkId: string;
  /** The request's merchant, so that the chunk's reads and writes name it. */
  readonly merchantId: string;
  /** The bulk request's trace context, when tracing was on: the chunk's span continues it. */
  readonly traceparent?: string;
  /** The chunk's operation and how many commands it holds, so that a run can take it as a companion (bulk.run.ts). */
  readonly operation: Operation;
  readonly commands: number;
}

export function chunked<T>(items: readonly T[], size = CHUNK_SIZE): T[][] {
  return partsOf(items, size);
}

/** Chunk ids name their request and position, so a request's chunks are found by `_id` alone. */
export function chunkIds(requestId: string, chunkCount: number): string[] {
  return Array.from({ length: chunkCount }, (_, i) => `${requestId}:${String(i).padStart(4, '0')}`);
}

export function chunkCountFor(commands: number): number {
  return Math.ceil(commands / CHUNK_SIZE);
}
