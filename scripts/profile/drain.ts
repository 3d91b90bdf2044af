/**
 * `npx tsx scripts/profile/drain.ts`: what a 3000-id bulk pause costs the database, by command.
 * The service (with its workers, in this process) applies one bulk pause of PROFILE_IDS (default
 * 3000) while the driver's command monitoring counts every command each of its two clients sends,
 * by command and collection, with the time each took (its round trip as the driver saw it). Then
 * the same per chunk of 100: what a chunk pays beside its one conditional updateMany. PROFILE_SETTLE_MS=n lets the
 * workers run n ms before the request, so that their start-up scans are not in the drain (as in bench (b)).
 */
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startService } from '../../src/main/composition.js';
import { SubscriptionsStore } from '../../src/subscriptions/subscriptions.store.js';
import { SubscriptionSeeder } from '../../src/subscriptions/subscriptions.seed.js';
import { commandTally, LOOPBACK_WITHOUT_WORKERS, openScratchDatabase } from '../support.js';

const IDS = Number(process.env.PROFILE_IDS ?? 3000);
const REQUESTS = Number(process.env.PROFILE_REQUESTS ?? 1);
const MIXED = process.env.PROFILE_MIXED === '1';
const log = createLogger('warn');
const config = loadConfig();
const scratch = await openScratchDatabase(config, 'profile_drain', log);
try {
  const running = await startService(scratch.database, { ...config, rateLimitPerSecond: 0 }, log, LOOPBACK_WITHOUT_WORKERS);
  const { merchantId, apiKey } = await running.service.auth.createMerchant('profile');
  const seeder = new SubscriptionSeeder(new SubscriptionsStore(scratch.db));
  // PROFILE_MIXED=1: every other id already paused, so that each chunk has applied and no-op commands (as half of npm run load's do).
  const interleaved = async () => {
    const [fulfilled, paused] = await Promise.all([
      seeder.seed({ merchantId, count: IDS / 2, status: 'fulfilled' }),
      seeder.seed({ merchantId, count: IDS / 2, status: 'paused' }),
    ]);
    return fulfilled.flatMap((s, i) => [s, paused[i]!]);
  };
  const seeded = MIXED ? await interleaved() : await seeder.seed({ merchantId, count: IDS, status: 'fulfilled' });
  const ids = seeded.map((s) => s.id);

  let counting = false;
  let t0 = performance.now();
  const counts = commandTally(scratch.database.clients, ({ client, command, collection }, e) => {
    if (!counting) return undefined;
    // PROFILE_TRACE=1: when each command started, after the workers' start (finds with their filter).
    if (process.env.PROFILE_TRACE)
      console.error(
        `${(performance.now() - t0).toFixed(0)} ms ${client} ${command} ${collection} ${command === 'find' ? JSON.stringify(e.command['filter']).slice(0, 120) : ''}`,
      );
    return `${client} ${command} ${collection}`;
  });
  // Read by the topology as it connects: the clients are opened again with it on.
  await scratch.database.reopen();
  const post = async (subscriptions: string[]): Promise<string> => {
    const res = await fetch(`${running.url}/v2/subscriptions/bulk/pause`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ subscriptions }),
    });
    if (res.status !== 202) throw new Error(`bulk pause answered ${res.status}`);
    return ((await res.json()) as { requestId: string }).requestId;
  };
  const completed = (requestIds: string[]) =>
    scratch.db.collection('bulkRequests').countDocuments({ _id: { $in: requestIds as never[] }, completedAt: { $ne: null } });
  let requestIds: string[];
  let start: number;
  if (REQUESTS > 1) {
    // PROFILE_REQUESTS=n: n requests of PROFILE_IDS / n ids queued first, then the workers started (a queue left at the end of npm run load's traffic).
    const size = Math.ceil(IDS / REQUESTS);
    requestIds = [];
    for (let i = 0; i < IDS; i += size) requestIds.push(await post(ids.slice(i, i + size)));
    while ((await scratch.db.collection('bulkRequests').countDocuments({ dispatchedAt: null })) > 0)
      await new Promise((r) => setTimeout(r, 20));
    // Timed from the workers' start: what they do as they start (the due schedules' and the events' scans of subscriptions) is in the table, as `find subscriptions`.
    counting = true;
    t0 = start = performance.now();
    await running.service.workers.start();
  } else {
    await running.service.workers.start();
    // PROFILE_SETTLE_MS=n: the workers run n ms before the request (bench (b) keeps them running through its rounds: their start-up scans are not in its drain).
    await new Promise((resolve) => setTimeout(resolve, Number(process.env.PROFILE_SETTLE_MS ?? 0)));
    counting = true;
    t0 = performance.now();
    requestIds = [await post(ids)];
    start = performance.now();
  }
  while ((await completed(requestIds)) < requestIds.length) await new Promise((r) => setTimeout(r, 20));
  const drainMs = performance.now() - start;
  counting = false;
  const chunks = REQUESTS > 1 ? REQUESTS * Math.ceil(IDS / REQUESTS / 100) : Math.ceil(IDS / 100);
  console.log(
    REQUESTS > 1
      ? `${IDS} in ${REQUESTS} requests applied ${drainMs.toFixed(0)} ms after the workers took them (${chunks} chunks, ${(IDS / (drainMs / 1000)).toFixed(0)} commands/s)`
      : `${IDS} applied ${drainMs.toFixed(0)} ms after the 202 (${chunks} chunks of 100)`,
  );
  console.log('| client command collection | commands | per chunk | total ms | ms per chunk |');
  console.log('|---|--:|--:|--:|--:|');
  const rows = [...counts].sort((a, b) => b[1].ms - a[1].ms);
  for (const [key, { count: n, ms }] of rows)
    console.log(`| ${key} | ${n} | ${(n / chunks).toFixed(2)} | ${ms.toFixed(0)} | ${(ms / chunks).toFixed(1)} |`);
  const total = rows.reduce((s, [, c]) => ({ n: s.n + c.count, ms: s.ms + c.ms }), { n: 0, ms: 0 });
  console.log(`| all | ${total.n} | ${(total.n / chunks).toFixed(2)} | ${total.ms.toFixed(0)} | ${(total.ms / chunks).toFixed(1)} |`);
  await running.service.workers.stop(30_000);
  // The bench's baseline beside it: the same conditional updates sent raw, one updateMany per 100 ids.
  const subscriptions = scratch.db.collection('subscriptions');
  await subscriptions.deleteMany({});
  const rawIds = (
    await new SubscriptionSeeder(new SubscriptionsStore(scratch.db)).seed({ merchantId, count: IDS, status: 'fulfilled' })
  ).map((s) => s.id);
  const rawStart = performance.now();
  for (let i = 0; i < rawIds.length; i += 100) {
    await subscriptions.updateMany(
      { _id: { $in: rawIds.slice(i, i + 100) as never[] }, merchantId, status: 'fulfilled' },
      { $set: { status: 'paused', modifiedAt: new Date().toISOString() } },
    );
  }
  const rawMs = performance.now() - rawStart;
  console.log(
    `raw: ${chunks} updateMany of 100 in ${rawMs.toFixed(0)} ms (${(rawMs / chunks).toFixed(1)} ms each); the service's updates of its chunks took ${((counts.get('background update subscriptions')?.ms ?? 0) / chunks).toFixed(1)} ms each, its drain ${(drainMs / rawMs).toFixed(2)}x the raw updates`,
  );
  await running.stop(30_000);
} finally {
  await scratch.close();
}
