/**
 * `npm run bench` (h), a hold beside the filter bulk (a hold over 100,000 subscriptions is accepted
 * and drains like a filter bulk of that size: docs/write-path.md): `count` fulfilled subscriptions of the merchant, seeded
 * outside any timing, then `POST /v2/holds` (its 202: what it covers read and stored as its
 * pause's bulk request, as a filter request's matches are) and the drain of that request to its
 * completion (the workers cover and pause each), with the service's workers, timed as (h)'s filter
 * request is. BENCH_ONLY=hold runs the filter's (h) and this.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import type { Service } from '../src/main/composition.js';
import { SubscriptionSeeder } from '../src/subscriptions/subscriptions.seed.js';
import { SubscriptionsStore } from '../src/subscriptions/subscriptions.store.js';

const SEED_BATCH = 10_000;

export interface HoldBench {
  readonly holdCount: number;
  readonly holdSeedMs: number;
  readonly holdAcceptMs: number;
  readonly holdDrainMs: number;
  readonly holdDrainPer1000Ms: number;
  /** The filter request's drain per 1000 of the same run, and this one's over it (holdDrainRatio: at most 1.3). */
  readonly filterDrainPer1000Ms: number;
  readonly holdOverFilter: number;
}

/** Waits for the bulk request to complete, polling its document as (h) does. */
async function completion(db: Db, requestId: string): Promise<void> {
  const requests = db.collection<{ _id: string }>('bulkRequests');
  while (!(await requests.findOne({ _id: requestId, completedAt: { $ne: null } }, { projection: { _id: 1 } })))
    await new Promise((r) => setTimeout(r, 200));
}

export async function benchHold(
  db: Db,
  service: Service,
  baseUrl: string,
  apiKey: string,
  merchantId: string,
  count: number,
  filterDrainPer1000Ms: number,
): Promise<HoldBench> {
  await db
    .collection('subscriptions')
    .drop()
    .catch(() => undefined);
  await service.subscriptionStores.subscriptions.ensureIndexes();
  const seeder = new SubscriptionSeeder(new SubscriptionsStore(db));
  const seedStart = performance.now();
  const planId = randomUUID();
  for (let n = 0; n < count; n += SEED_BATCH)
    await seeder.seed({ merchantId, count: Math.min(SEED_BATCH, count - n), status: 'fulfilled', planId });
  const holdSeedMs = performance.now() - seedStart;
  const acceptStart = performance.now();
  const res = await fetch(`${baseUrl}/v2/holds`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ reason: 'bench' }),
  });
  const hold = (await res.json()) as { requestId?: string };
  const holdAcceptMs = performance.now() - acceptStart;
  if (res.status !== 202 || !hold.requestId) throw new Error(`the hold answered ${res.status} ${JSON.stringify(hold).slice(0, 300)}`);
  console.error(`(h) hold: seeded ${count} in ${(holdSeedMs / 1000).toFixed(1)} s; accepted in ${holdAcceptMs.toFixed(0)} ms`);
  const start = performance.now();
  await service.workers.start();
  await completion(db, hold.requestId);
  const holdDrainMs = performance.now() - start;
  await service.workers.stop(30_000);
  const paused = await db.collection('subscriptions').countDocuments({ merchantId, status: 'paused', ownPause: false });
  if (paused !== count) throw new Error(`the hold's pause completed with ${paused} of ${count} paused by it`);
  const holdDrainPer1000Ms = holdDrainMs / (count / 1000);
  return {
    holdCount: count,
    holdSeedMs,
    holdAcceptMs,
    holdDrainMs,
    holdDrainPer1000Ms,
    filterDrainPer1000Ms,
    holdOverFilter: holdDrainPer1000Ms / filterDrainPer1000Ms,
  };
}

/** The table of (h)'s hold; `filterAcceptMs`, where given, the filter request's 202 of the same run, for holdAcceptRatio (at most 1.5). */
export function printHold(h: HoldBench, engineName: string, filterAcceptMs?: number): void {
  const count = h.holdCount.toLocaleString('en');
  console.log(`\n(h) a hold over ${count} subscriptions, beside the filter request, engine: ${engineName}`);
  console.log('| measure                                  |              time |');
  console.log('|------------------------------------------|------------------:|');
  const line = (name: string, value: string) => console.log(`| ${name.padEnd(40)} | ${value.padStart(17)} |`);
  line(`accept (202, ${count} covered)`, `${h.holdAcceptMs.toFixed(0)} ms`);
  line('202 to its pause completed', `${(h.holdDrainMs / 1000).toFixed(1)} s`);
  line('drain per 1000, the hold', `${h.holdDrainPer1000Ms.toFixed(0)} ms`);
  line('drain per 1000, the filter request', `${h.filterDrainPer1000Ms.toFixed(0)} ms`);
  if (filterAcceptMs !== undefined) {
    line('accept (202), the filter request', `${filterAcceptMs.toFixed(0)} ms`);
    const ratio = h.holdAcceptMs / filterAcceptMs;
    console.log(`202, hold / filter: ${ratio.toFixed(2)} (holdAcceptRatio, at most 1.5: ${ratio <= 1.5 ? 'met' : 'MISSED'})`);
  }
  console.log(
    `drain per 1000, hold / filter: ${h.holdOverFilter.toFixed(2)} (holdDrainRatio, at most 1.3: ${h.holdOverFilter <= 1.3 ? 'met' : 'MISSED'}); seeded in ${(h.holdSeedMs / 1000).toFixed(1)} s (not timed above)`,
  );
}
