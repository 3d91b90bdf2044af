/**
 * `npx tsx scripts/profile/compare-builds.ts <saved build> [rounds]`: bench (c)'s load on two
 * compiled builds of the service, in alternating rounds (saved, current, bare server, saved,
 * current, ...), each side in a process of its own (scripts/bench-server.ts): the CPU each
 * process spent per request, split into user and system time, with the throughput and p99. For a
 * change to the request path: `npx tsc -p tsconfig.build.json && cp -r dist .cache/dist-before`
 * before it, then `npx tsx scripts/profile/compare-builds.ts .cache/dist-before` after it (the
 * current build is made from the sources as they are). COMPARE_REQUESTS (default 5000) requests
 * per round over 1000 fresh subscriptions, as (c): the first 1000 change one, the rest find it
 * paused. On the embedded FerretDB unless MONGODB_URI is set.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import autocannon from 'autocannon';
import { loadConfig } from '../../src/config.js';
import { projectRoot } from '../../src/lib/project-root.js';
import { createLogger } from '../../src/logger.js';
import { SubscriptionsStore } from '../../src/subscriptions/subscriptions.store.js';
import { SubscriptionSeeder } from '../../src/subscriptions/subscriptions.seed.js';
import { spawnBenchServer, type ServerProcess } from '../bench-bare.js';
import { median, spreadOf, formatSpread } from '../bench-rounds.js';
import { openScratchDatabase } from '../support.js';

const saved = process.argv[2];
if (!saved) throw new Error('usage: compare-builds.ts <saved build (a copy of dist/)> [rounds]');
const rounds = Number(process.argv[3] ?? 5);
const requests = Number(process.env.COMPARE_REQUESTS ?? 5000);
const CONNECTIONS = 32;

interface Round {
  readonly cpuUs: number;
  readonly userUs: number;
  readonly systemUs: number;
  readonly rps: number;
  readonly p99Ms: number;
}

const log = createLogger('warn');
const scratch = await openScratchDatabase(loadConfig(), 'compare', log);
const savedSrc = resolve(projectRoot(), saved, 'src');
// COMPARE_SAVED_ENV: more environment for the saved build's process, as JSON (e.g. '{"METRICS":"off"}' with the current build saved: what a setting costs).
const savedEnv = JSON.parse(process.env.COMPARE_SAVED_ENV ?? '{}') as Record<string, string>;
const before = await spawnBenchServer('service', scratch.uri, { ...savedEnv, BENCH_SERVICE_DIST: savedSrc });
// COMPARE_CURRENT: a saved build for the other side too (no build made), e.g. the same build twice with COMPARE_SAVED_ENV.
const currentDist = process.env.COMPARE_CURRENT;
const after = await spawnBenchServer(
  'service',
  scratch.uri,
  currentDist ? { BENCH_SERVICE_DIST: resolve(projectRoot(), currentDist, 'src') } : {},
);
const bare = await spawnBenchServer('bare', scratch.uri, { BENCH_MERCHANT_ID: after.merchantId });
const sides = [
  { name: `saved (${saved})`, server: before, merchantId: before.merchantId, apiKey: before.apiKey!, rounds: [] as Round[] },
  { name: `current (${currentDist ?? 'dist'})`, server: after, merchantId: after.merchantId, apiKey: after.apiKey!, rounds: [] as Round[] },
  { name: 'bare server', server: bare, merchantId: after.merchantId, apiKey: after.apiKey!, rounds: [] as Round[] },
];

async function round(server: ServerProcess, merchantId: string, apiKey: string, amount: number): Promise<Round> {
  await Promise.all(['subscriptions', 'events'].map((c) => scratch.db.collection(c).deleteMany({})));
  const ids = (await new SubscriptionSeeder(new SubscriptionsStore(scratch.db)).seed({ merchantId, count: 1000, status: 'fulfilled' })).map(
    (s) => s.id,
  );
  let sent = 0;
  const cpuBefore = await server.cpu();
  const started = performance.now();
  let last = started;
  const result = await new Promise<autocannon.Result>((resolveLoad, reject) => {
    const instance = autocannon(
      {
        url: server.url,
        connections: CONNECTIONS,
        amount,
        timeout: 60,
        requests: [
          {
            method: 'POST',
            headers: { 'x-api-key': apiKey },
            setupRequest: (r) => ({ ...r, path: `/v2/subscriptions/${ids[sent++ % ids.length]}/pause` }),
          },
        ],
      },
      (error: Error | null, done) => (error ? reject(error) : resolveLoad(done)),
    );
    instance.on('response', () => (last = performance.now()));
  });
  const cpuAfter = await server.cpu();
  const ok = Math.max(1, result['2xx']);
  if (result.non2xx > 0) console.error(`  ${result.non2xx} answers other than 2xx`);
  return {
    cpuUs: (cpuAfter.cpuUs - cpuBefore.cpuUs) / ok,
    userUs: (cpuAfter.userUs - cpuBefore.userUs) / ok,
    systemUs: (cpuAfter.systemUs - cpuBefore.systemUs) / ok,
    rps: ok / ((last - started) / 1000),
    p99Ms: result.latency.p99,
  };
}

/** The machine's load average (1, 5, 15 minutes): the figures mean little on a busy machine. */
function loadAverage(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return 'n/a';
  }
}

try {
  // A warm-up of each, not counted: no side runs on code the JIT has not compiled yet.
  for (const side of sides) await round(side.server, side.merchantId, side.apiKey, 2000);
  for (let r = 0; r < rounds; r++) {
    for (const side of sides) {
      const result = await round(side.server, side.merchantId, side.apiKey, requests);
      side.rounds.push(result);
      console.log(
        `round ${r + 1} ${side.name.padEnd(28)} CPU ${result.cpuUs.toFixed(0).padStart(4)} µs/request (user ${result.userUs.toFixed(0)}, system ${result.systemUs.toFixed(0)}), ${result.rps.toFixed(0)} req/s, p99 ${result.p99Ms} ms; load ${loadAverage()}`,
      );
    }
  }
  console.log(`\n${rounds} alternating rounds of ${requests} requests, ${CONNECTIONS} connections; medians (least–greatest round):`);
  for (const side of sides) {
    const of = (pick: (r: Round) => number) => {
      const xs = side.rounds.map(pick);
      return `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
    };
    console.log(
      `${side.name.padEnd(28)} CPU ${of((r) => r.cpuUs)} µs/request, user ${of((r) => r.userUs)}, system ${of((r) => r.systemUs)}; ${of((r) => r.rps)} req/s; p99 ${of((r) => r.p99Ms)} ms`,
    );
  }
  const [a, b, c] = sides.map((s) => s.rounds);
  console.log(`CPU per request, current / saved: ${formatSpread(spreadOf(b!.map((x, i) => x.cpuUs / a![i]!.cpuUs)))}`);
  console.log(
    `CPU per request over the bare server's, saved: ${formatSpread(spreadOf(a!.map((x, i) => x.cpuUs / c![i]!.cpuUs)))}; current: ${formatSpread(spreadOf(b!.map((x, i) => x.cpuUs / c![i]!.cpuUs)))}`,
  );
  console.log(
    `throughput over the bare server's, saved: ${formatSpread(spreadOf(a!.map((x, i) => x.rps / c![i]!.rps)))}; current: ${formatSpread(spreadOf(b!.map((x, i) => x.rps / c![i]!.rps)))}`,
  );
} finally {
  await Promise.all(sides.map((s) => s.server.stop()));
  await scratch.close();
}
