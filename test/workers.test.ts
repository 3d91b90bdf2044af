/**
 * Bulk workers as separate processes sharing one database with an HTTP-only service.
 * On FerretDB two processes contend for SQLite's single writer and may lock the same chunk twice
 * (its conditional update is not atomic, DESIGN.md §8): applying a chunk twice changes nothing,
 * which is what these tests rely on and check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './support/http.js';
import { databaseUri, startTestService, type TestService } from './support/service.js';
import { waitFor } from './support/wait.js';
import { startWorker, type WorkerProcess } from './support/worker-process.js';

const DRAIN_MS = 300_000;
let t: TestService;
const workers: WorkerProcess[] = [];
beforeAll(async () => {
  t = await startTestService({ workers: 0 });
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop('SIGKILL')));
  await t.close();
});

const paused = (ids: string[]) => t.db.collection('subscriptions').countDocuments({ _id: { $in: ids as never[] }, status: 'paused' });

async function acceptBulkPause(count: number): Promise<string[]> {
  const { merchantId, apiKey } = await t.merchant();
  const ids = await t.seed(merchantId, count);
  const res = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { apiKey, json: { subscriptions: ids } });
  expect(res.status).toBe(202);
  expect(res.body.acceptedCount).toBe(count);
  return ids;
}

describe('worker processes', () => {
  it('an HTTP-only service applies nothing: the commands wait, durable, for a worker', async () => {
    const ids = await acceptBulkPause(5);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await paused(ids)).toBe(0);
    expect(await t.db.collection('bulkRequests').countDocuments({ subscriptionIds: { $in: ids } })).toBe(1);
    const worker = await startWorker(databaseUri(t.db.databaseName));
    workers.push(worker);
    expect(await waitFor(() => paused(ids), (n) => n === 5, 30_000)).toBe(5);
    await worker.stop();
  });

  it('two worker processes on one database apply 3000 commands with none lost', { timeout: DRAIN_MS + 60_000 }, async () => {
    const ids = await acceptBulkPause(3000);
    const pair = [await startWorker(databaseUri(t.db.databaseName)), await startWorker(databaseUri(t.db.databaseName))];
    workers.push(...pair);
    expect(await waitFor(() => paused(ids), (n) => n === 3000, DRAIN_MS, 1_000)).toBe(3000);
    // A chunk's log lines reach the pipe just after its update reaches the database: wait for them.
    const applied = () => new Set(pair.flatMap((w) => w.lines.filter((l) => l.outcome === 'applied').map((l) => l.subscriptionId))).size;
    expect(await waitFor(async () => applied(), (n) => n === 3000, 10_000)).toBe(3000);
    await Promise.all(pair.map((w) => w.stop()));
  });

  it('a worker killed with SIGKILL mid-batch leaves its chunk to another, and every command ends applied', { timeout: DRAIN_MS + 60_000 }, async () => {
    const ids = await acceptBulkPause(1000);
    const doomed = await startWorker(databaseUri(t.db.databaseName));
    workers.push(doomed);
    await waitFor(() => paused(ids), (n) => n > 0, 60_000, 50);
    await doomed.stop('SIGKILL');
    const before = await paused(ids);
    expect(before).toBeLessThan(1000);
    const rescuer = await startWorker(databaseUri(t.db.databaseName));
    workers.push(rescuer);
    expect(await waitFor(() => paused(ids), (n) => n === 1000, DRAIN_MS, 1_000)).toBe(1000);
    await rescuer.stop();
  });

  it('SIGTERM lets the in-flight chunk finish, leaves no chunk locked, and exits; the rest is applied by the next worker', { timeout: DRAIN_MS }, async () => {
    const ids = await acceptBulkPause(500);
    const worker = await startWorker(databaseUri(t.db.databaseName), { SHUTDOWN_TIMEOUT_MS: '20000' });
    workers.push(worker);
    await waitFor(() => paused(ids), (n) => n > 0, 60_000, 50);
    const exit = new Promise<number | null>((resolve) => worker.child.once('exit', (code) => resolve(code)));
    worker.child.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(worker.lines.map((l) => l.msg)).toContain('stopped');
    expect(await t.db.collection('bulkJobs').countDocuments({ lockedAt: { $ne: null } })).toBe(0);
    const next = await startWorker(databaseUri(t.db.databaseName));
    workers.push(next);
    expect(await waitFor(() => paused(ids), (n) => n === 500, DRAIN_MS, 1_000)).toBe(500);
    await next.stop();
  });
});
