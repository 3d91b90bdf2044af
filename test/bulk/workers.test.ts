/**
 * Bulk workers as separate processes sharing one database with an HTTP-only service.
 * On FerretDB two processes contend for SQLite's single writer and may lock the same chunk twice
 * (its conditional update is not atomic, docs/design.md §8): applying a chunk twice changes nothing,
 * which is what these tests rely on and check.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, httpOf } from '../support/http.js';
import { databaseUri, startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { startWireProxy } from '../support/wire-proxy.js';
import { FLEET_ON_ONE_DATABASE, startWorker, type WorkerProcess } from '../support/worker-process.js';

const DRAIN_MS = 300_000;
let t: TestService;
const { completed } = httpOf(() => t);
const workers: WorkerProcess[] = [];
beforeAll(async () => {
  t = await startTestService({ workers: 0 });
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop('SIGKILL')));
  await t.close();
});

const paused = (ids: string[]) => t.db.collection('subscriptions').countDocuments({ _id: { $in: ids as never[] }, status: 'paused' });

let lastAccepted: { apiKey: string; location: string };
async function acceptBulkPause(count: number): Promise<string[]> {
  const { merchantId, apiKey } = await t.merchant();
  const ids = await t.seed(merchantId, count);
  const res = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { apiKey, json: { subscriptions: ids } });
  expect(res.status).toBe(202);
  expect(res.body.acceptedCount).toBe(count);
  lastAccepted = { apiKey, location: res.headers.get('location')! };
  return ids;
}

/** The last accepted request's counts, once it has completed: each command counted once, whoever ran it. */
async function finalCounts(): Promise<Record<string, number>> {
  const { apiKey, location } = lastAccepted;
  const res = await completed(apiKey, location, 30_000, 250);
  return res.body.counts;
}

describe('worker processes', () => {
  it('an HTTP-only service applies nothing: the commands wait, durable, for a worker', async () => {
    const ids = await acceptBulkPause(5);
    const waiting = await call(t.baseUrl, lastAccepted.location, { method: 'GET', apiKey: lastAccepted.apiKey });
    expect(waiting.body).toMatchObject({ state: 'queued', counts: { pending: 5 } });
    const worker = await startWorker(databaseUri(t.db.databaseName), FLEET_ON_ONE_DATABASE);
    workers.push(worker);
    expect(
      await waitFor(
        () => paused(ids),
        (n) => n === 5,
        30_000,
      ),
    ).toBe(5);
    // Who applied them, as recorded: the worker logged each of the five as applied (had the
    // service applied one first, the worker would have found it paused: noop), the service none.
    const appliedBy = (lines: Record<string, unknown>[]) =>
      lines
        .filter((l) => l.outcome === 'applied' && ids.includes(l.subscriptionId as string))
        .map((l) => l.subscriptionId)
        .sort();
    expect(
      await waitFor(
        async () => appliedBy(worker.lines),
        (a) => a.length === 5,
        10_000,
        100,
        "the worker's five 'applied' lines",
      ),
    ).toEqual([...ids].sort());
    expect(appliedBy(t.logLines)).toEqual([]);
    expect(await finalCounts()).toEqual({ pending: 0, applied: 5, noop: 0, skipped: 0, failed: 0 });
    await worker.stop();
  });

  it('two worker processes on one database apply 3000 commands with none lost', { timeout: DRAIN_MS + 60_000 }, async () => {
    const ids = await acceptBulkPause(3000);
    // Started together: each start loads the service's code on its own, which takes seconds under load.
    const pair = await Promise.all([
      startWorker(databaseUri(t.db.databaseName), FLEET_ON_ONE_DATABASE),
      startWorker(databaseUri(t.db.databaseName), FLEET_ON_ONE_DATABASE),
    ]);
    workers.push(...pair);
    expect(
      await waitFor(
        () => paused(ids),
        (n) => n === 3000,
        DRAIN_MS,
        1_000,
      ),
    ).toBe(3000);
    // A chunk's log lines reach the pipe just after its update reaches the database: wait for them.
    const applied = () => new Set(pair.flatMap((w) => w.lines.filter((l) => l.outcome === 'applied').map((l) => l.subscriptionId))).size;
    expect(
      await waitFor(
        async () => applied(),
        (n) => n === 3000,
        10_000,
      ),
    ).toBe(3000);
    expect(await finalCounts()).toEqual({ pending: 0, applied: 3000, noop: 0, skipped: 0, failed: 0 });
    await Promise.all(pair.map((w) => w.stop()));
  });

  it(
    'a worker killed with SIGKILL mid-batch leaves its chunk to another, and every command ends applied',
    { timeout: DRAIN_MS + 60_000 },
    async () => {
      const ids = await acceptBulkPause(1000);
      const doomed = await startWorker(databaseUri(t.db.databaseName), FLEET_ON_ONE_DATABASE);
      workers.push(doomed);
      await waitFor(
        () => paused(ids),
        (n) => n > 0,
        60_000,
        50,
      );
      await doomed.stop('SIGKILL');
      const before = await paused(ids);
      expect(before).toBeLessThan(1000);
      const rescuer = await startWorker(databaseUri(t.db.databaseName), FLEET_ON_ONE_DATABASE);
      workers.push(rescuer);
      expect(
        await waitFor(
          () => paused(ids),
          (n) => n === 1000,
          DRAIN_MS,
          1_000,
        ),
      ).toBe(1000);
      expect(await finalCounts()).toEqual({ pending: 0, applied: 1000, noop: 0, skipped: 0, failed: 0 });
      await rescuer.stop();
    },
  );

  it(
    'SIGTERM lets the in-flight chunk finish, leaves no chunk locked, and exits; the rest is applied by the next worker',
    { timeout: DRAIN_MS },
    async () => {
      const ids = await acceptBulkPause(500);
      const worker = await startWorker(databaseUri(t.db.databaseName), { ...FLEET_ON_ONE_DATABASE, SHUTDOWN_TIMEOUT_MS: '20000' });
      workers.push(worker);
      await waitFor(
        () => paused(ids),
        (n) => n > 0,
        60_000,
        50,
      );
      const exit = new Promise<number | null>((resolve) => worker.child.once('exit', (code) => resolve(code)));
      worker.child.kill('SIGTERM');
      expect(await exit).toBe(0);
      expect(worker.lines.map((l) => l.msg)).toContain('stopped');
      expect(await t.db.collection('bulkJobs').countDocuments({ lockedAt: { $ne: null } })).toBe(0);
      const next = await startWorker(databaseUri(t.db.databaseName), FLEET_ON_ONE_DATABASE);
      workers.push(next);
      expect(
        await waitFor(
          () => paused(ids),
          (n) => n === 500,
          DRAIN_MS,
          1_000,
        ),
      ).toBe(500);
      await next.stop();
    },
  );

  it(
    'a chunk run again after its worker was killed never undoes a change made after the chunk was applied',
    { timeout: 120_000 },
    async () => {
      const { merchantId, apiKey } = await t.merchant();
      const ids = await t.seed(merchantId, 50);
      const accepted = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { apiKey, json: { subscriptions: ids } });
      const location = accepted.headers.get('location')!;
      // The first worker reaches the database through a proxy that holds the chunk's outcome record:
      // by then it has paused all 50; it is killed before it can say so.
      const proxy = await startWireProxy(inject('mongoUri'));
      try {
        const record = proxy.on({ command: 'update', collection: 'bulkChunks' }, { action: 'hold' });
        const first = await startWorker(proxy.uri(t.db.databaseName), { ...FLEET_ON_ONE_DATABASE, BULK_LOCK_LIFETIME_MS: '1000' });
        workers.push(first);
        await record.reached;
        await first.stop('SIGKILL');
        expect(await paused(ids)).toBe(50);
        // The merchant resumes one of them afterwards.
        const resumed = await call(t.baseUrl, `/v2/subscriptions/${ids[0]}/resume`, { apiKey });
        expect(resumed.body.status).toBe('fulfilled');
        const rescuer = await startWorker(databaseUri(t.db.databaseName), { ...FLEET_ON_ONE_DATABASE, BULK_LOCK_LIFETIME_MS: '1000' });
        workers.push(rescuer);
        const status = await completed(apiKey, location, 60_000, 250);
        expect(status.body.counts).toEqual({ pending: 0, applied: 50, noop: 0, skipped: 0, failed: 0 });
        expect(await t.db.collection('subscriptions').findOne({ _id: ids[0] as never })).toMatchObject({
          status: 'fulfilled',
          modifiedAt: resumed.body.modifiedAt,
        });
        expect(await paused(ids)).toBe(49);
        await rescuer.stop();
      } finally {
        await proxy.close();
      }
    },
  );
});
