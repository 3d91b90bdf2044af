/**
 * `npx tsx scripts/profile/count-commands.ts`: (c)'s load (single pauses of 1000 subscriptions, the
 * first thousand change, the rest find them paused) sent to the service and to the bare server in
 * turn, counting with the driver's command monitoring the commands each sends per request and
 * the bytes of their answers; for the service, also its background client's (the events relay). PROFILE_SECONDS (default 5) per side.
 */
import autocannon from 'autocannon';
import { MongoClient } from 'mongodb';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startService } from '../../src/main/composition.js';
import { SubscriptionsStore } from '../../src/subscriptions/subscriptions.store.js';
import { SubscriptionSeeder } from '../../src/subscriptions/subscriptions.seed.js';
import { bareServer } from '../bench-bare.js';
import { calculateObjectSize } from 'bson';
import { listenOnLoopback, LOOPBACK_WITHOUT_WORKERS, openScratchDatabase } from '../support.js';

const seconds = Number(process.env.PROFILE_SECONDS ?? 5);
const log = createLogger('warn');
const config = loadConfig();
const scratch = await openScratchDatabase(config, 'count', log);
const running = await startService(
  scratch.database,
  { ...config, authCacheTtlMs: 60_000, rateLimitPerSecond: 0 },
  log,
  LOOPBACK_WITHOUT_WORKERS,
);
const { merchantId, apiKey } = await running.service.auth.createMerchant('count');
const raw = new MongoClient(scratch.uri, { monitorCommands: true });
await raw.connect();
const bareUrl = await listenOnLoopback(bareServer(raw.db(scratch.db.databaseName), merchantId));

type Tally = Map<string, { count: number; replyBytes: number }>;
function watch(client: MongoClient, tally: Tally) {
  (client.options as { monitorCommands: boolean }).monitorCommands = true;
  client.on('commandSucceeded', (e) => {
    const t = tally.get(e.commandName) ?? { count: 0, replyBytes: 0 };
    t.count++;
    t.replyBytes += calculateObjectSize(e.reply as object);
    tally.set(e.commandName, t);
  });
}
const serviceTally: Tally = new Map();
const backgroundTally: Tally = new Map();
const bareTally: Tally = new Map();
watch(scratch.database.clients.request, serviceTally);
watch(scratch.database.clients.background, backgroundTally);
watch(raw, bareTally);
// The setting is read when connections open: the service's clients open theirs again.
await scratch.database.reopen();

async function side(url: string, ...tallies: Tally[]) {
  await Promise.all(['subscriptions'].map((c) => scratch.db.collection(c).deleteMany({})));
  const ids = (await new SubscriptionSeeder(new SubscriptionsStore(scratch.db)).seed({ merchantId, count: 1000, status: 'fulfilled' })).map(
    (s) => s.id,
  );
  for (const tally of tallies) tally.clear();
  let n = 0;
  const result = await autocannon({
    url,
    connections: 32,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        headers: { 'x-api-key': apiKey },
        setupRequest: (r) => ({ ...r, path: `/v2/subscriptions/${ids[n++ % ids.length]}/pause` }),
      },
    ],
  });
  const requests = result['2xx'];
  console.log(
    `${url === bareUrl ? 'bare' : 'service'}: ${requests} requests 2xx (${result.non2xx} others), ${(requests / seconds).toFixed(0)} req/s`,
  );
  for (const [i, tally] of tallies.entries())
    for (const [name, t] of tally)
      console.log(
        `  ${i === 0 ? '' : '(background) '}${name.padEnd(16)} ${t.count} commands, ${(t.count / requests).toFixed(2)} per request, reply ${Math.round(t.replyBytes / t.count)} bytes on average`,
      );
}
try {
  await side(running.url, serviceTally, backgroundTally);
  await side(bareUrl, bareTally);
} finally {
  await running.stop(10_000);
  await raw.close();
  await scratch.close();
}
