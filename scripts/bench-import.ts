/**
 * `npm run bench` (j), imports (issue 54 §3): `rows` NDJSON rows imported from the 202 to
 * `completed` by the service's workers, against a raw `insertMany` of the same documents in the
 * engine's parts, alternating, as a ratio (median of the rounds); the rows per second; and a large
 * file's upload to a serving process of its own: how far that process's resident memory grows
 * while it streams in, and how long after its last byte the 202 comes. BENCH_ONLY=import runs it alone (bench/results/import.json).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { Db } from 'mongodb';
import type { Service } from '../src/main/composition.js';
import { spawnBenchServer } from './bench-bare.js';
import { spreadOf, type Spread } from './bench-rounds.js';

const PART = 1_000;

export interface ImportBench {
  readonly rows: number;
  readonly importRatio: Spread;
  readonly rowsPerSecond: number;
  readonly bigFileRows: number;
  readonly bigFileMb: number;
  readonly uploadRssGrowthMb: number;
  readonly acceptAfterLastByteMs: number;
}

const line = (run: string, i: number, planId: string) =>
  `{"externalId":"${run}-${i}","planId":"${planId}","cycle":1,"metadata":{"crm":"c${i}"}}\n`;

/** The file as a stream of parts, never whole; `ended` is when its last byte was handed over. */
function fileOf(run: string, rows: number, planId: string, timing: { ended?: number }): Readable {
  async function* parts(): AsyncGenerator<Buffer> {
    for (let n = 0; n < rows; n += PART) {
      let text = '';
      for (let i = n; i < Math.min(n + PART, rows); i++) text += line(run, i, planId);
      yield Buffer.from(text);
    }
    timing.ended = performance.now();
  }
  return Readable.from(parts());
}

async function upload(baseUrl: string, apiKey: string, body: Readable): Promise<string> {
  const res = await fetch(`${baseUrl}/v2/subscription-imports`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/x-ndjson' },
    body: Readable.toWeb(body) as ReadableStream,
    duplex: 'half',
  } as RequestInit);
  if (res.status !== 202) throw new Error(`import answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

async function completion(db: Db, importId: string): Promise<void> {
  const imports = db.collection<{ _id: string }>('subscriptionImports');
  while (!(await imports.findOne({ _id: importId, state: 'completed' }, { projection: { _id: 1 } })))
    await new Promise((r) => setTimeout(r, 100));
}

/** The same documents a row's create writes, inserted raw in the engine's parts. */
async function rawInsert(db: Db, merchantId: string, run: string, rows: number, planId: string): Promise<number> {
  const start = performance.now();
  const now = new Date().toISOString().replace('Z', '000Z');
  for (let n = 0; n < rows; n += PART) {
    const docs = Array.from({ length: Math.min(PART, rows - n) }, (_, k) => ({
      _id: randomUUID() as never,
      merchantId,
      planId,
      status: 'fulfilled',
      cycle: 1,
      createdAt: now,
      modifiedAt: now,
      externalId: `${run}-raw-${n + k}`,
      metadata: { crm: `c${n + k}` },
    }));
    await db.collection('subscriptions').insertMany(docs, { ordered: false });
  }
  return performance.now() - start;
}

/** The resident memory of process `pid`, in bytes (Linux: /proc). */
function rssOf(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!kb) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb[1]) * 1024;
}

/**
 * The big file's upload, to a serving process of its own (scripts/bench-server.ts, no workers),
 * so that its resident memory is the server's alone, not the file's generator's beside it.
 */
async function benchUpload(
  uri: string,
  rows: number,
): Promise<Pick<ImportBench, 'bigFileMb' | 'uploadRssGrowthMb' | 'acceptAfterLastByteMs'>> {
  const server = await spawnBenchServer('service', uri);
  try {
    const timing: { ended?: number } = {};
    const rssBefore = rssOf(server.pid);
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssOf(server.pid))), 50);
    const body = fileOf(randomUUID().slice(0, 8), rows, randomUUID(), timing);
    let bytes = 0;
    body.on('data', (chunk: Buffer) => (bytes += chunk.length));
    try {
      await upload(server.url, server.apiKey!, body);
    } finally {
      clearInterval(sampler);
    }
    const answered = performance.now();
    return {
      bigFileMb: Math.round(bytes / 1e5) / 10,
      uploadRssGrowthMb: Math.round((rssPeak - rssBefore) / 1e5) / 10,
      acceptAfterLastByteMs: Math.round(answered - (timing.ended ?? answered)),
    };
  } finally {
    await server.stop();
  }
}

/** Where (j) runs: the bench's in-process service (its workers apply the imports), and the scratch database's URI. */
export interface ImportBenchPlace {
  readonly db: Db;
  readonly uri: string;
  readonly service: Service;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly merchantId: string;
}

export async function benchImport(place: ImportBenchPlace, rows: number, bigFileRows: number, rounds: number): Promise<ImportBench> {
  const imported = await importRounds(place, rows, rounds);
  return { ...imported, bigFileRows, ...(await benchUpload(place.uri, bigFileRows)) };
}

/** The rounds of imports against raw inserts, alternating. */
async function importRounds(
  { db, service, baseUrl, apiKey, merchantId }: ImportBenchPlace,
  rows: number,
  rounds: number,
): Promise<Pick<ImportBench, 'rows' | 'importRatio' | 'rowsPerSecond'>> {
  await service.workers.start();
  try {
    const ratios: number[] = [];
    const importMs: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const planId = randomUUID();
      const run = randomUUID().slice(0, 8);
      const timeImport = async () => {
        const id = await upload(baseUrl, apiKey, fileOf(run, rows, planId, {}));
        const start = performance.now();
        await completion(db, id);
        return performance.now() - start;
      };
      // Alternating which goes first, so that neither always runs on the warmer engine.
      const [imported, raw] =
        r % 2 === 0
          ? [await timeImport(), await rawInsert(db, merchantId, run, rows, planId)]
          : [await rawInsert(db, merchantId, run, rows, planId), await timeImport()].reverse();
      importMs.push(imported!);
      ratios.push(imported! / raw!);
      console.error(`  round ${r + 1}: import ${Math.round(imported!)} ms, raw insertMany ${Math.round(raw!)} ms`);
    }
    const medianImportMs = [...importMs].sort((a, b) => a - b)[Math.floor(importMs.length / 2)]!;
    return { rows, importRatio: spreadOf(ratios), rowsPerSecond: Math.round(rows / (medianImportMs / 1000)) };
  } finally {
    await service.workers.stop(30_000);
  }
}
