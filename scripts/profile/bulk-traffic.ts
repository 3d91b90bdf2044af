/**
 * `npx tsx scripts/profile/bulk-traffic.ts`: the bulk half of `npm run load` alone, counted. The
 * service with its workers in this process; 8 merchants of 500 subscriptions; PROFILE_REQUESTS
 * (default 400) bulk requests of 20 ids sent 8 at a time while the workers run (pause and resume
 * in turn per merchant, as npm run load sends them), then waits for the queue to empty, and
 * prints the rate and every command the service sent meanwhile by command and collection, per
 * request (the webhook queue's left out). Command counts hold on a busy machine; the rate does not.
 */
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startService } from '../../src/main/composition.js';
import { SubscriptionsStore } from '../../src/subscriptions/subscriptions.store.js';
import { SubscriptionSeeder } from '../../src/subscriptions/subscriptions.seed.js';
import { commandTally, LOOPBACK_WITHOUT_WORKERS, openScratchDatabase } from '../support.js';
const log = createLogger('warn');
const config = loadConfig();
const scratch = await openScratchDatabase(config, 'bulk_traffic', log);
try {
  const running = await startService(scratch.database, { ...config, rateLimitPerSecond: 0 }, log, LOOPBACK_WITHOUT_WORKERS);
  const seeder = new SubscriptionSeeder(new SubscriptionsStore(scratch.db));
  const merchants = await Promise.all(
    Array.from({ length: 8 }, async (_, i) => {
      const { merchantId, apiKey } = await running.service.auth.createMerchant(`m${i}`);
      return { apiKey, ids: (await seeder.seed({ merchantId, count: 500, status: 'fulfilled' })).map((s) => s.id) };
    }),
  );
  let counting = false;
  const counts = commandTally(scratch.database.clients, ({ command, collection }) => (counting ? `${command} ${collection}` : undefined));
  await scratch.database.reopen();
  await running.service.workers.start();
  counting = true;
  const start = performance.now();
  let n = 0;
  const post = async () => {
    const m = merchants[n % 8]!;
    const op = Math.floor(n / 8) % 2 === 0 ? 'pause' : 'resume';
    n++;
    const s = Math.floor(Math.random() * 480);
    const res = await fetch(`${running.url}/v2/subscriptions/bulk/${op}`, {
      method: 'POST',
      headers: { 'x-api-key': m.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ subscriptions: m.ids.slice(s, s + 20) }),
    });
    if (res.status !== 202) throw new Error(String(res.status));
    await res.arrayBuffer();
  };
  const REQ = Number(process.env.PROFILE_REQUESTS ?? 400);
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (n < REQ) await post();
    }),
  );
  const posted = performance.now() - start;
  const queued = () => scratch.db.collection('bulkJobs').countDocuments({ nextRunAt: { $ne: null } });
  while ((await queued()) > 0) await new Promise((r) => setTimeout(r, 100));
  const ms = performance.now() - start;
  counting = false;
  console.log(
    `${REQ} requests posted in ${posted.toFixed(0)} ms, drained ${ms.toFixed(0)} ms after the first (${((REQ * 20) / (ms / 1000)).toFixed(0)} commands/s)`,
  );
  for (const [k, { count: v }] of [...counts].sort((a, b) => b[1].count - a[1].count))
    if (!k.includes('webhook')) console.log(`  ${k}: ${v} (${(v / REQ).toFixed(2)} per request)`);
  await running.service.workers.stop(30_000);
  await running.stop(30_000);
} finally {
  await scratch.close();
}
