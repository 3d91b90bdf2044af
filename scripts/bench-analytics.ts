/**
 * `npm run bench` (k), `BENCH_ONLY=analytics`: a read of 90 days of pause analytics
 * (`GET /v2/analytics/pauses`, by month) stays flat as a merchant's history grows. A small
 * merchant holds 10,000 events (5,000 pauses, each started and ended), a large one 1,000,000
 * (500,000), both spread over the last 365 days with 5 reasons, 3 plans and every cause; the p50
 * of READS reads of each, in alternating rounds (sizeRatio: large over small). otherMerchantRatio:
 * the small merchant's p50 after the large one's history was stored, over before.
 *
 * The history is stored as the service keeps it (`pauses`, each day's ids in `pauseDayParts`, and
 * each day marked changed in `pauseDays`), outside any timing; its days are then computed once, as
 * the first reads after they changed would, and that time is printed, not counted in the reads.
 * Writes bench/results/analytics.json.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from 'mongodb';
import { PauseHistoryRepository } from '../src/analytics/pause-history.repository.js';
import { projectRoot } from '../src/lib/project-root.js';
import { median, ROUNDS, spreadOf, type Spread } from './bench-rounds.js';

const DAY_MS = 86_400_000;
const READS = Number(process.env.BENCH_ANALYTICS_READS ?? 30);
const INSERT_BATCH = 10_000;
const REASONS = ['Vacation', 'Too much stock', 'Moving house', 'Budget', null];
const CAUSES = ['merchant', 'schedule', 'hold', 'customer', 'billing'] as const;

export interface AnalyticsBench {
  readonly smallEvents: number;
  readonly largeEvents: number;
  readonly p50MsAt10k: number;
  readonly p50MsAt1M: number;
  readonly sizeRatio: Spread;
  readonly otherMerchantRatio: number;
}

/** Stores `pauses` started pauses of the merchant over the last 365 days (four in five ended), as the history keeps them, each day marked changed. */
async function storeHistory(db: Db, merchantId: string, pauses: number): Promise<void> {
  const now = Date.now();
  const plans = [randomUUID(), randomUUID(), randomUUID()];
  const idsOf = new Map<string, string[]>();
  for (let n = 0; n < pauses; n += INSERT_BATCH) {
    const docs = Array.from({ length: Math.min(INSERT_BATCH, pauses - n) }, (_, i) => {
      const k = n + i;
      // Spread over the year: a step of 7,919 s, wrapped at 365 days.
      const started = now - ((k * 7_919_000) % (365 * DAY_MS * 0.99));
      const startedAt = new Date(started).toISOString().replace('Z', '000Z');
      const day = startedAt.slice(0, 10);
      const id = randomUUID();
      idsOf.set(day, [...(idsOf.get(day) ?? []), id]);
      const ended = k % 5 !== 0;
      return {
        _id: id,
        merchantId,
        subscriptionId: randomUUID(),
        day,
        startedAt,
        reason: REASONS[k % REASONS.length]!,
        cause: CAUSES[k % CAUSES.length]!,
        planId: plans[k % plans.length]!,
        ...(ended
          ? {
              endedAt: new Date(started + (k % 40) * (DAY_MS / 4)).toISOString().replace('Z', '000Z'),
              endedBy: k % 7 === 0 ? 'cancelled' : CAUSES[(k >> 1) % CAUSES.length]!,
              endEventId: randomUUID(),
            }
          : {}),
      };
    });
    await db.collection('pauses').insertMany(docs as never[], { ordered: false });
  }
  const days = [...idsOf];
  await db.collection('pauseDayParts').insertMany(
    days.map(([day, ids]) => ({ _id: `${merchantId}:${day}:${ids[0]!}` as never, merchantId, ids })),
    { ordered: false },
  );
  await db.collection('pauseDays').insertMany(
    days.map(([day, ids]) => ({
      _id: `${merchantId}:${day}` as never,
      merchantId,
      day,
      seq: 1,
      basedOn: 0,
      cells: [],
      parts: [`${merchantId}:${day}:${ids[0]!}`],
    })),
    { ordered: false },
  );
}

/**
 * Computes the cells of every stored day, as the first reads after the days changed do, through the
 * service's own repository rather than one request (a year of days computed at once outlasts an
 * HTTP client's wait on the embedded engine); printed, as the cost of a history stored at once.
 */
async function computeDays(db: Db, merchantId: string): Promise<void> {
  const started = performance.now();
  const today = new Date().toISOString().slice(0, 10);
  const yearAgo = new Date(Date.now() - 366 * DAY_MS).toISOString().slice(0, 10);
  const days = await new PauseHistoryRepository(db, 16).daysBetween(merchantId, yearAgo, today);
  console.error(`(k) ${days.length} days computed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

async function read(baseUrl: string, apiKey: string): Promise<number> {
  const start = performance.now();
  const res = await fetch(`${baseUrl}/v2/analytics/pauses?groupBy=month`, { headers: { 'x-api-key': apiKey } });
  const body = (await res.json()) as { data?: unknown[] };
  if (res.status !== 200 || !body.data) throw new Error(`analytics read answered ${res.status}`);
  return performance.now() - start;
}

async function p50(baseUrl: string, apiKey: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < READS; i++) times.push(await read(baseUrl, apiKey));
  return median(times);
}

export async function benchAnalytics(
  db: Db,
  baseUrl: string,
  createMerchant: (name: string) => Promise<{ merchantId: string; apiKey: string }>,
): Promise<AnalyticsBench> {
  const small = await createMerchant('analytics-10k');
  const large = await createMerchant('analytics-1m');
  await storeHistory(db, small.merchantId, 5_000);
  await computeDays(db, small.merchantId);
  await read(baseUrl, small.apiKey);
  const smallBefore = await p50(baseUrl, small.apiKey);
  console.error('(k) storing 500,000 pauses (1,000,000 events) of another merchant ...');
  await storeHistory(db, large.merchantId, 500_000);
  await computeDays(db, large.merchantId);
  await read(baseUrl, large.apiKey);
  const ratios: number[] = [];
  const smalls: number[] = [];
  const larges: number[] = [];
  for (let round = 0; round < Math.max(ROUNDS, 3); round++) {
    const s = await p50(baseUrl, small.apiKey);
    const l = await p50(baseUrl, large.apiKey);
    smalls.push(s);
    larges.push(l);
    ratios.push(l / s);
  }
  return {
    smallEvents: 10_000,
    largeEvents: 1_000_000,
    p50MsAt10k: median(smalls),
    p50MsAt1M: median(larges),
    sizeRatio: spreadOf(ratios),
    otherMerchantRatio: median(smalls) / smallBefore,
  };
}

export function printAnalytics(bench: AnalyticsBench, engine: string): void {
  console.log(`\n(k) pause analytics, 90 days by month, ${READS} reads a round (${engine})`);
  console.log('| figure | value | target | met |');
  console.log('|---|---|---|---|');
  const ok = (met: boolean) => (met ? 'yes' : 'NO');
  console.log(`| p50 at 10,000 events | ${bench.p50MsAt10k.toFixed(1)} ms | < 200 ms | ${ok(bench.p50MsAt10k < 200)} |`);
  console.log(`| p50 at 1,000,000 events | ${bench.p50MsAt1M.toFixed(1)} ms | < 200 ms | ${ok(bench.p50MsAt1M < 200)} |`);
  const { median: m, min, max } = bench.sizeRatio;
  console.log(`| 1,000,000 over 10,000 | ${m.toFixed(2)}x (${min.toFixed(2)}–${max.toFixed(2)}) | <= 2x | ${ok(m <= 2)} |`);
  console.log(`| another merchant's 1,000,000 | ${bench.otherMerchantRatio.toFixed(2)}x | ~1x | ${ok(bench.otherMerchantRatio <= 1.5)} |`);
}

export function writeAnalytics(bench: AnalyticsBench, engine: string): void {
  const dir = join(projectRoot(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const result = { engine, measuredAt: new Date().toISOString(), target: { sizeRatio: '<= 2', p50Ms: '< 200' }, ...bench };
  writeFileSync(join(dir, 'analytics.json'), `${JSON.stringify(result, null, 2)}\n`);
  console.log('\nwritten to bench/results/analytics.json');
}
