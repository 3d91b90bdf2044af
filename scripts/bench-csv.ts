/**
 * Bench (i): a bulk request's 100,000 items as CSV (GET /v2/bulk-requests/{id}/items with
 * Accept: text/csv), the service in this process. The request and its outcomes are written
 * straight into the database, as the workers leave them (no bulk by filter needed first); the
 * download is read as it arrives and counted, never kept. Reported: the time to the last byte, to
 * the first, and the growth of the process's memory at its peak (RSS, and heap plus buffers),
 * sampled every 10 ms from just before the request.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { CHUNK_SIZE, chunkIds } from '../src/bulk/bulk.chunks.js';
import { BulkRepository } from '../src/bulk/bulk.repository.js';
import { nowTimestamp } from '../src/lib/clock.js';
import { partsOf } from '../src/lib/parts.js';

export const CSV_ITEMS = Number(process.env.BENCH_CSV_ITEMS ?? 100_000);
const ROUNDS = 3;

export interface CsvExportRound {
  readonly ms: number;
  readonly firstByteMs: number;
  readonly bytes: number;
  readonly rows: number;
  readonly peakRssMb: number;
  readonly peakHeapAndBuffersMb: number;
}

async function storeRequest(db: Db, merchantId: string, count: number): Promise<string> {
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
  const records = chunks.map(({ chunkId, subscriptionIds }) => ({
    chunkId,
    outcomes: subscriptionIds.map((subscriptionId) => ({ subscriptionId, outcome: 'applied' as const, reason: null, at })),
  }));
  for (const part of partsOf(records, 50)) await repository.recordOutcomes(merchantId, part);
  return requestId;
}

async function download(baseUrl: string, apiKey: string, requestId: string): Promise<CsvExportRound> {
  const base = process.memoryUsage();
  let peakRss = base.rss;
  let peakHeap = base.heapUsed + base.external;
  const sampler = setInterval(() => {
    const now = process.memoryUsage();
    peakRss = Math.max(peakRss, now.rss);
    peakHeap = Math.max(peakHeap, now.heapUsed + now.external);
  }, 10);
  const started = performance.now();
  let firstByteMs = 0;
  let bytes = 0;
  let rows = 0;
  try {
    const response = await fetch(`${baseUrl}/v2/bulk-requests/${requestId}/items`, {
      headers: { 'x-api-key': apiKey, accept: 'text/csv' },
    });
    if (response.status !== 200) throw new Error(`(i) CSV export answered ${response.status}: ${await response.text()}`);
    for await (const part of response.body!) {
      if (bytes === 0) firstByteMs = performance.now() - started;
      bytes += part.length;
      for (const byte of part) if (byte === 0x0a) rows += 1;
    }
  } finally {
    clearInterval(sampler);
  }
  const mb = (n: number) => Math.round((n / 1_048_576) * 10) / 10;
  return {
    ms: performance.now() - started,
    firstByteMs,
    bytes,
    rows: rows - 1,
    peakRssMb: mb(peakRss - base.rss),
    peakHeapAndBuffersMb: mb(peakHeap - base.heapUsed - base.external),
  };
}

/** ROUNDS downloads of one stored request of CSV_ITEMS items. */
export async function benchCsvExport(
  db: Db,
  baseUrl: string,
  apiKey: string,
  merchantId: string,
): Promise<{ items: number; storeMs: number; rounds: CsvExportRound[] }> {
  const stored = performance.now();
  const requestId = await storeRequest(db, merchantId, CSV_ITEMS);
  const storeMs = performance.now() - stored;
  const rounds: CsvExportRound[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const result = await download(baseUrl, apiKey, requestId);
    if (result.rows !== CSV_ITEMS) throw new Error(`(i) CSV export: ${result.rows} rows, expected ${CSV_ITEMS}`);
    rounds.push(result);
  }
  return { items: CSV_ITEMS, storeMs, rounds };
}

export function printCsvExport({ items, rounds }: Awaited<ReturnType<typeof benchCsvExport>>, engineName: string): void {
  console.log(`\n(i) a bulk request's ${items} items as CSV, ${rounds.length} downloads, service in this process, engine: ${engineName}`);
  console.log('| download | MB | first byte | last byte | items/s | peak RSS growth | peak heap + buffers growth |');
  console.log('|---|--:|--:|--:|--:|--:|--:|');
  rounds.forEach((r, i) =>
    console.log(
      `| ${i + 1} | ${(r.bytes / 1_048_576).toFixed(1)} | ${r.firstByteMs.toFixed(0)} ms | ${r.ms.toFixed(0)} ms | ${Math.round(r.rows / (r.ms / 1000))} | ${r.peakRssMb} MB | ${r.peakHeapAndBuffersMb} MB |`,
    ),
  );
}
