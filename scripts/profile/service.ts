/**
 * The service alone in this process, for `scripts/profile/run.ts`: started on MONGODB_URI (the
 * scratch database the runner opened) with the bench's settings (rate limit off, auth cache of
 * 60 s, no workers unless PROFILE_WORKERS=on), so that `node --cpu-prof` profiles the service and
 * nothing else; and bench (c)'s bare server, for `run.ts bare`. Prints `{ url, bareUrl, apiKey,
 * merchantId }` as one JSON line; exits (writing the profile) when its stdin closes. The service runs
 * from dist/, as bench (c) runs it (BENCH_SERVICE_FROM=src: its sources through tsx).
 */
import { createInterface } from 'node:readline';
import { MongoClient } from 'mongodb';
import { loadConfig } from '../../src/config.js';
import { bareServer, serviceModules } from '../bench-bare.js';
import { listenOnLoopback } from '../support.js';

// As bench (c) runs it: the compiled build (dist/, which run.ts builds first), or the sources with BENCH_SERVICE_FROM=src.
const { connectDatabase, startService, createLogger } = await serviceModules();
const config = loadConfig();
const log = createLogger('warn');
const database = await connectDatabase(config.mongodbUri!, config, log);
const workers = process.env.PROFILE_WORKERS === 'on';
const running = await startService(
  database,
  { ...config, authCacheTtlMs: 60_000, rateLimitPerSecond: 0, webhooksAllowPrivateUrls: true },
  log,
  { port: 0, host: '127.0.0.1', startWorkers: workers },
);
const { merchantId, apiKey } = await running.service.auth.createMerchant('profile');
// Beside it, bench (c)'s bare server on a client of its own (the driver's defaults), for the same profile of the baseline.
const raw = await new MongoClient(config.mongodbUri!).connect();
const bareUrl = await listenOnLoopback(bareServer(raw.db(database.db.databaseName), merchantId));
process.stdout.write(`${JSON.stringify({ url: running.url, bareUrl, apiKey, merchantId })}\n`);
// Each line on stdin asks for the time now on the profile's clock (CLOCK_MONOTONIC, µs): the runner
// marks the load's start and end, so that the table leaves out start-up (tsx compiling, the spec).
createInterface({ input: process.stdin }).on('line', () =>
  process.stdout.write(`${JSON.stringify({ mark: Number(process.hrtime.bigint() / 1000n) })}\n`),
);
process.stdin.on('end', () => {
  void running.stop(10_000).finally(() => process.exit(0));
});
