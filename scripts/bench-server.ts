/**
 * One side of bench (c) in a process of its own, so that the load generator (autocannon, in the
 * bench's process) shares no event loop with the server under test, and the service and the bare
 * server are measured alike: `node --import tsx scripts/bench-server.ts service|bare`, on
 * MONGODB_URI (the bench's scratch database).
 *   service: the service with the bench's settings (rate limit off, API key cache 60 s, no
 *            workers); it creates the bench's merchant. It runs the compiled build (dist/), as
 *            deployed (bin/subsvc.js), which spawnBenchServer builds first; BENCH_SERVICE_FROM=src
 *            runs the sources through tsx instead (its loader wraps every function it creates in
 *            a `__name` call: about 7% more CPU per request, docs/performance.md).
 *   bare:    bench (c)'s bare server (scripts/bench-bare.ts) for BENCH_MERCHANT_ID, on a client
 *            of its own (the driver's defaults, or BENCH_BARE_POOL connections); with
 *            BENCH_BARE_EVENTS=0, the one without the events' database work.
 * Prints `{ url, apiKey, merchantId }` as one JSON line; each line on stdin asks for the CPU this
 * process has used so far (`{ "cpuUs": n, "userUs": u, "systemUs": s }`, n = u + s); exits when stdin closes.
 */
import { createInterface } from 'node:readline';
import { MongoClient } from 'mongodb';
import { loadConfig } from '../src/config.js';
import { bareServer, serviceModules } from './bench-bare.js';
import { listenOnLoopback, LOOPBACK_WITHOUT_WORKERS } from './support.js';

const side = process.argv[2];
const config = loadConfig();
let started: { url: string; apiKey?: string; merchantId: string; stop: () => Promise<unknown> };
if (side === 'service') {
  // BENCH_SERVICE_DIST: another compiled tree's src/ (scripts/profile/compare-builds.ts).
  const { connectDatabase, startService, createLogger } = await serviceModules(process.env.BENCH_SERVICE_DIST);
  const log = createLogger('warn');
  const database = await connectDatabase(config.mongodbUri!, config, log);
  const running = await startService(database, { ...config, authCacheTtlMs: 60_000, rateLimitPerSecond: 0 }, log, LOOPBACK_WITHOUT_WORKERS);
  const { merchantId, apiKey } = await running.service.auth.createMerchant('bench');
  started = { url: running.url, apiKey, merchantId, stop: () => running.stop(10_000).finally(() => database.close()) };
} else if (side === 'bare') {
  const pool = process.env.BENCH_BARE_POOL ? Number(process.env.BENCH_BARE_POOL) : undefined;
  const client = await new MongoClient(config.mongodbUri!, pool ? { maxPoolSize: pool } : {}).connect();
  const merchantId = process.env.BENCH_MERCHANT_ID!;
  const server = bareServer(client.db(), merchantId, process.env.BENCH_BARE_EVENTS !== '0');
  const url = await listenOnLoopback(server);
  started = { url, merchantId, stop: () => new Promise((resolve) => server.close(resolve)).finally(() => client.close()) };
} else {
  throw new Error(`expected service or bare, got ${side}`);
}
const { stop, ...shown } = started;
process.stdout.write(`${JSON.stringify(shown)}\n`);
createInterface({ input: process.stdin }).on('line', () => {
  const { user, system } = process.cpuUsage();
  process.stdout.write(`${JSON.stringify({ cpuUs: user + system, userUs: user, systemUs: system })}\n`);
});
process.stdin.on('end', () => {
  void stop().finally(() => process.exit(0));
});
