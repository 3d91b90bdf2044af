/**
 * `npx tsx scripts/profile/run.ts c|f|bare`: the bench's load (c) (single pause at 32 connections) or
 * (f) (pause and resume in turn, every request a change, one webhook endpoint on loopback), or (c)'s
 * load on (c)'s bare server (`bare`, in the same process, the service idle beside it), against
 * the service in a process of its own run under `node --cpu-prof`, then the profile's CPU by stage
 * (scripts/profile/stages.ts). PROFILE_SECONDS (default 10) is the load's duration; PROFILE_RATE
 * (requests/s, default unset: as fast as answered) caps the load, to compare the sides at one rate. The load
 * generator and the database are other processes: the profile is the service's alone.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { loadConfig } from '../../src/config.js';
import { SubscriptionsStore } from '../../src/subscriptions/subscriptions.store.js';
import { SubscriptionSeeder } from '../../src/subscriptions/subscriptions.seed.js';
import { projectRoot } from '../../src/lib/project-root.js';
import { createLogger } from '../../src/logger.js';
import { buildOnce } from '../bench-bare.js';
import { listenOnLoopback, openScratchDatabase } from '../support.js';
import { printStages } from './stages.js';

const axis = process.argv[2] ?? 'c';
if (axis !== 'c' && axis !== 'f' && axis !== 'bare') throw new Error(`expected c, f or bare, got ${axis}`);
const seconds = Number(process.env.PROFILE_SECONDS ?? 10);
const rate = process.env.PROFILE_RATE ? Number(process.env.PROFILE_RATE) : undefined;
const log = createLogger('warn');
const config = loadConfig();
const scratch = await openScratchDatabase(config, 'profile', log);
const dir = join(projectRoot(), '.cache', 'profiles', `${axis}-${Date.now()}`);
mkdirSync(dir, { recursive: true });
// The service runs from dist/ (scripts/profile/service.ts), as bench (c) runs it: built from the sources as they are now.
buildOnce();
const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--import', 'tsx', 'scripts/profile/service.ts'], {
  cwd: projectRoot(),
  env: { ...process.env, MONGODB_URI: scratch.uri, PROFILE_WORKERS: axis === 'f' ? 'on' : 'off' },
  stdio: ['pipe', 'pipe', 'inherit'],
});
const exited = new Promise((resolve) => child.once('exit', resolve));
try {
  // The service's log goes to stdout too (level warn): its own lines are the url's and the marks'.
  const lines = createInterface({ input: child.stdout });
  const next = (prefix: string) =>
    new Promise<string>((resolve, reject) => {
      const take = (line: string) => {
        if (!line.startsWith(prefix)) return;
        lines.off('line', take);
        resolve(line);
      };
      lines.on('line', take);
      child.once('exit', (code) => reject(new Error(`the service exited (${code}) before it answered`)));
    });
  const mark = async () => {
    const answer = next('{"mark"');
    child.stdin.write('mark\n');
    return (JSON.parse(await answer) as { mark: number }).mark;
  };
  const first = await next('{"url"');
  const started = JSON.parse(first) as { url: string; bareUrl: string; apiKey: string; merchantId: string };
  const { apiKey, merchantId } = started;
  const url = axis === 'bare' ? started.bareUrl : started.url;
  const seeded = await new SubscriptionSeeder(new SubscriptionsStore(scratch.db)).seed({
    merchantId,
    count: 1000,
    status: 'fulfilled',
  });
  const ids = seeded.map((s) => s.id);
  let receiver: ReturnType<typeof createServer> | undefined;
  if (axis === 'f') {
    receiver = createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
    const hooks = `${await listenOnLoopback(receiver)}/hooks`;
    const res = await fetch(`${url}/v2/webhook-endpoints`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ url: hooks, events: ['*'] }),
    });
    if (res.status !== 201) throw new Error(`webhook endpoint: ${res.status} ${await res.text()}`);
  }
  let sent = 0;
  const path = () => {
    const n = sent++;
    return `/v2/subscriptions/${ids[n % ids.length]}/${axis === 'f' && Math.floor(n / ids.length) % 2 === 1 ? 'resume' : 'pause'}`;
  };
  const from = await mark();
  const result = await autocannon({
    url,
    connections: 32,
    duration: seconds,
    ...(rate ? { overallRate: rate } : {}),
    requests: [{ method: 'POST', headers: { 'x-api-key': apiKey }, setupRequest: (request) => ({ ...request, path: path() }) }],
  });
  const to = await mark();
  const requests = result['2xx'];
  console.log(
    `(${axis}) ${requests} requests answered 2xx in ${seconds} s (${(requests / seconds).toFixed(0)} req/s, p50 ${result.latency.p50} p99 ${result.latency.p99} ms), ${result.non2xx} others`,
  );
  child.stdin.end();
  await exited;
  receiver?.close();
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no profile written in ${dir}`);
  console.log(`profile: ${join(dir, file)}, load from ${from} to ${to} µs`);
  printStages(join(dir, file), requests, { from, to });
} finally {
  child.kill();
  await scratch.close();
}
