/**
 * `BENCH_ONLY=stripe npm run bench`, axis (b) with a Stripe connection: a bulk pause of
 * BENCH_STRIPE_COUNT (3000) subscriptions that carry Stripe ids, in a test mode connected to
 * Stripe's own mock (stripe-mock, built into .cache/ as for the tests), drained (202 to completed)
 * against the same bulk pause of a test mode without a connection (`drainRatio`, target <= 1.2:
 * the pushes must not hold the bulk up); and the pushes' own rate, from the 202 to the last push
 * Stripe took (`pushesPerSecond`). Rounds alternate which goes first (scripts/bench-rounds.ts).
 * Writes bench/results/stripe.json.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from 'mongodb';
import type { Config } from '../src/config.js';
import { bulkWriteInParts } from '../src/db/mongo-helpers.js';
import { STATEMENTS_PER_COMMAND } from '../src/db/workarounds.js';
import { projectRoot } from '../src/lib/project-root.js';
import type { Logger } from '../src/logger.js';
import { startService } from '../src/main/composition.js';
import { testModeIdOf } from '../src/merchants/livemode.js';
import { spreadOf } from './bench-rounds.js';
import { startStripeMockProcess } from './stripe-mock-process.js';
import type { ScratchDatabase } from './support.js';

const COUNT = Number(process.env.BENCH_STRIPE_COUNT ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

async function until(check: () => Promise<boolean>, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('bench (b) with Stripe: waited too long');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function api(baseUrl: string, apiKey: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
}

const completed = (db: Db, requestId: string) => async () =>
  (await db.collection('bulkRequests').countDocuments({ _id: requestId as never, completedAt: { $ne: null } })) === 1;

interface Round {
  readonly drainWithMs: number;
  readonly drainWithoutMs: number;
  /** From the 202 to the last push Stripe took. */
  readonly pushesMs: number;
}

export async function benchStripeMain(scratch: ScratchDatabase, config: Config, log: Logger): Promise<void> {
  const stripe = await startStripeMockProcess();
  const { db } = scratch;
  const running = await startService(
    scratch.database,
    { ...config, rateLimitPerSecond: 0, stripeApiBase: stripe.base, secretsKey: config.secretsKey ?? randomBytes(32).toString('base64') },
    log,
    { port: 0, host: '127.0.0.1' },
  );
  const { service, url: baseUrl } = running;
  const rounds: Round[] = [];

  /** A new merchant's test mode with COUNT subscriptions carrying Stripe ids, connected or not. */
  const testMode = async (connected: boolean) => {
    const { merchantId: liveId, testApiKey } = await service.auth.createMerchant('bench-stripe');
    const merchantId = testModeIdOf(liveId);
    if (connected) {
      const put = await api(baseUrl, testApiKey, 'PUT', '/v2/billing-connections/stripe', {
        apiKey: `sk_test_${randomBytes(12).toString('hex')}`,
        webhookSecret: `whsec_${randomBytes(16).toString('hex')}`,
      });
      if (put.status !== 200) throw new Error(`connecting answered ${put.status}`);
    }
    const ids = (await service.seeder.seed({ merchantId, count: COUNT, status: 'fulfilled' })).map((s) => s.id);
    await bulkWriteInParts(
      db.collection<{ _id: string }>('subscriptions'),
      ids.map((_id) => ({ updateOne: { filter: { _id }, update: { $set: { externalId: `sub_${_id.replaceAll('-', '')}` } } } })),
      STATEMENTS_PER_COMMAND,
    );
    return { merchantId, apiKey: testApiKey, ids };
  };
  const bulkPause = async (apiKey: string, ids: readonly string[]) => {
    const res = await api(baseUrl, apiKey, 'POST', '/v2/subscriptions/bulk/pause', { subscriptions: ids });
    if (res.status !== 202) throw new Error(`bulk pause answered ${res.status}`);
    return ((await res.json()) as { requestId: string }).requestId;
  };
  const without = async () => {
    const { apiKey, ids } = await testMode(false);
    const started = performance.now();
    await until(completed(db, await bulkPause(apiKey, ids)));
    return performance.now() - started;
  };

  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Without a connection first in even rounds, after in odd ones.
      const withoutFirst = round % 2 === 0 ? await without() : undefined;
      const { merchantId, apiKey, ids } = await testMode(true);
      const started = performance.now();
      const requestId = await bulkPause(apiKey, ids);
      await until(completed(db, requestId));
      const drainWithMs = performance.now() - started;
      const pushes = db.collection('billingPushes');
      await until(async () => (await pushes.countDocuments({ merchantId, status: 'sent' })) >= COUNT);
      const pushesMs = performance.now() - started;
      const drainWithoutMs = withoutFirst ?? (await without());
      rounds.push({ drainWithMs, drainWithoutMs, pushesMs });
      console.error(
        `(b) with Stripe, round ${round + 1}: drain with a connection ${drainWithMs.toFixed(0)} ms, without ${drainWithoutMs.toFixed(0)} ms; ${COUNT} pushes in ${pushesMs.toFixed(0)} ms`,
      );
    }
  } finally {
    await running.stop(30_000);
    stripe.stop();
  }
  const result = {
    axis: '(b) bulk pause drained, with a Stripe connection against without',
    engine: `${scratch.engine} ${scratch.version}`,
    count: COUNT,
    target: { drainRatio: '<= 1.2' },
    drainRatio: spreadOf(rounds.map((r) => r.drainWithMs / r.drainWithoutMs)),
    pushesPerSecond: spreadOf(rounds.map((r) => COUNT / (r.pushesMs / 1000))),
    rounds,
  };
  console.log(
    `\n| round | drain with (ms) | drain without (ms) | ratio | pushes/s |\n|---|---|---|---|---|\n` +
      rounds
        .map(
          (r, i) =>
            `| ${i + 1} | ${r.drainWithMs.toFixed(0)} | ${r.drainWithoutMs.toFixed(0)} | ${(r.drainWithMs / r.drainWithoutMs).toFixed(2)} | ${(COUNT / (r.pushesMs / 1000)).toFixed(0)} |`,
        )
        .join('\n'),
  );
  const dir = join(projectRoot(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'stripe.json'), `${JSON.stringify(result, null, 2)}\n`);
  console.log(
    `(b) with Stripe: drainRatio ${result.drainRatio.median.toFixed(2)} (target <= 1.2), ${result.pushesPerSecond.median.toFixed(0)} pushes/s: written to bench/results/stripe.json`,
  );
}
