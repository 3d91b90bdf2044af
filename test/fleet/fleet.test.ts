/**
 * The fleet knows itself: `subsvc serve` and `subsvc worker` processes on one database record
 * heartbeats, `subsvc status` lists them and drops a killed one, and the per-merchant rate limit
 * is shared among the live HTTP processes (two processes allow the configured limit, not twice it).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeDomain, type Domain } from '../../src/main/composition.js';
import { loadConfig } from '../../src/config.js';
import { connectDatabase, type Database } from '../../src/db/mongo.js';
import { expiredHeartbeats, Heartbeat, PROCESSES_COLLECTION as PROCESSES } from '../../src/fleet/heartbeat.js';
import { createLogger } from '../../src/logger.js';
import { call } from '../support/http.js';
import { databaseUri } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { FLEET_ON_ONE_DATABASE, startServe, startWorker, type ServiceProcess } from '../support/worker-process.js';

const HEARTBEAT_MS = 300;
const BURST = 10;
let uri: string;
let database: Database;
let domain: Domain;
const started: ServiceProcess[] = [];

beforeAll(async () => {
  uri = databaseUri(`test_fleet_${randomUUID().slice(0, 8)}`);
  // The test's own client: no heartbeat, so it is not one of the fleet it looks at.
  database = await connectDatabase(uri, { dbTimeoutMs: 10_000, bulkDbTimeoutMs: 10_000 }, createLogger('silent'));
  domain = await composeDomain(database, loadConfig({}));
});
afterAll(async () => {
  await Promise.all(started.map((p) => p.stop('SIGKILL')));
  await database.db.dropDatabase().catch(() => undefined);
  await database.close();
});

/** `subsvc status` as an operator runs it (stdout not a terminal: one JSON object). */
function status(): Promise<any> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/cli.ts', 'status'], {
      env: { ...process.env, MONGODB_URI: uri, HEARTBEAT_INTERVAL_MS: String(HEARTBEAT_MS) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`subsvc status exited ${code}: ${err}`))));
  });
}

const env = {
  ...FLEET_ON_ONE_DATABASE,
  HEARTBEAT_INTERVAL_MS: String(HEARTBEAT_MS),
  RATE_LIMIT_BURST: String(BURST),
  RATE_LIMIT_PER_SECOND: '1',
};

describe('two serve processes and a worker on one database', () => {
  let a: Awaited<ReturnType<typeof startServe>>;
  let b: Awaited<ReturnType<typeof startServe>>;

  it(
    'subsvc status lists the live processes with role, version, host, pid, started and last seen; a killed one drops out',
    { timeout: 120_000 },
    async () => {
      // Started together: each start loads the service's code on its own, which takes seconds under load.
      const [first, second, worker] = await Promise.all([
        startServe(uri, { ...env, BULK_CONCURRENCY: '0' }),
        startServe(uri, { ...env, BULK_CONCURRENCY: '0' }),
        startWorker(uri, env),
      ]);
      [a, b] = [first, second];
      started.push(a, b, worker);

      const all = await status();
      expect(all.processes).toEqual({ serve: 2, worker: 1 });
      expect(all.live.map((p: any) => p.pid).sort()).toEqual([a.child.pid, b.child.pid, worker.child.pid].sort());
      for (const p of all.live) {
        expect(p).toMatchObject({
          version: expect.stringMatching(/^\d+\.\d+\.\d+/),
          host: expect.any(String),
          startedAt: expect.any(String),
          lastSeenAt: expect.any(String),
        });
      }
      expect(all).toMatchObject({ chunksQueued: 0, oldestChunkAgeSeconds: 0, schedulesDue: 0, outboxBacklog: 0, endpointsDisabled: 0 });

      await worker.stop('SIGKILL');
      const after = await waitFor(status, (s) => s.processes.worker === 0, 10 * HEARTBEAT_MS + 20_000, HEARTBEAT_MS);
      expect(after.processes).toEqual({ serve: 2, worker: 0 });
    },
  );

  it(`the rate limit is the fleet's: ${BURST} requests at once across both processes, not ${2 * BURST}`, { timeout: 60_000 }, async () => {
    // Both processes have taken their half: each logged the share once it saw the other.
    const shared = (p: ServiceProcess) => p.lines.some((l) => l.msg === 'rate limit share changed' && l.httpProcesses === 2);
    await waitFor(
      async () => [a, b].every(shared),
      (ok) => ok,
      10_000,
      HEARTBEAT_MS,
    );
    expect([a, b].map(shared)).toEqual([true, true]);

    const { merchantId, apiKey } = await domain.auth.createMerchant('fleet');
    const [id] = (await domain.seeder.seed({ merchantId, count: 1, status: 'fulfilled' })).map((s) => s.id);
    const statuses: number[] = [];
    for (let i = 0; i < 2 * BURST; i++) {
      const target = i % 2 === 0 ? a : b;
      statuses.push((await call(target.baseUrl, `/v2/subscriptions/${id}`, { method: 'GET', apiKey })).status);
    }
    const allowed = statuses.filter((s) => s === 200).length;
    // The refill (1 a second for the fleet) may add one or two while the requests are sent.
    console.log(`fleet rate limit: ${allowed} of ${2 * BURST} requests allowed across two processes (burst ${BURST})`);
    expect(allowed).toBeGreaterThanOrEqual(BURST);
    expect(allowed).toBeLessThanOrEqual(BURST + 2);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
  });
});

describe('heartbeats of gone processes', () => {
  it('are deleted by the retention sweep once expired (where no TTL index does it); a live process keeps its own', async () => {
    const heartbeats = database.db.collection<{ _id: string; expiresAt: Date }>(PROCESSES);
    const log = createLogger('silent');
    const live = new Heartbeat(database.db, { role: 'worker', http: false, version: 'test', intervalMs: 60_000, ttlIndexes: false }, log);
    await live.start();
    try {
      const gone = `gone-${randomUUID()}`;
      await heartbeats.insertOne({
        _id: gone,
        role: 'worker',
        http: false,
        version: 'test',
        host: 'h',
        pid: 1,
        startedAt: new Date(0),
        lastSeenAt: new Date(0),
        expiresAt: new Date(Date.now() - 1000),
      } as never);
      expect(await expiredHeartbeats(database.db).deleteExpired()).toBeGreaterThanOrEqual(1);
      expect(await heartbeats.countDocuments({ _id: gone })).toBe(0);
      expect(await heartbeats.countDocuments({ _id: live.id })).toBe(1);
    } finally {
      await live.stop();
    }
  });
});
