/**
 * What background work logs around its end (issue 24): a stop waits for the events relay before
 * the database clients close, and a chunk job that another run completed is not an error.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BulkQueue, JOBS_COLLECTION } from '../src/bulk/bulk.queue.js';
import { createLogger } from '../src/logger.js';
import { call } from './support/http.js';
import { startTestService, type TestService } from './support/service.js';
import { waitFor } from './support/wait.js';

describe('stopping', () => {
  it('a change made just before stop has its event recorded before the database clients close, and nothing fails on closed clients', async () => {
    const t = await startTestService({ workers: 1 });
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    expect((await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { method: 'POST', apiKey })).status).toBe(200);
    await t.close();
    const recorded = t.logLines.filter((l) => l['msg'] === 'event recorded' && l['type'] === 'subscription.paused');
    expect(recorded).toHaveLength(1);
    expect(t.logLines.filter((l) => /not relayed|sweep failed|closed/i.test(JSON.stringify(l)))).toEqual([]);
  });
});

describe('workers stopped and started again', () => {
  it("relay each change's event as they did before the stop, not only at the sweep", async () => {
    const t = await startTestService({ workers: 1 });
    try {
      const { merchantId, apiKey } = await t.merchant();
      const [id] = await t.seed(merchantId, 1);
      await t.service.workers.stop(10_000);
      await t.service.workers.start();
      // The start's sweep has just run; the next is SWEEP_EVERY_MS (5 s) away, so an event
      // recorded within 4 s was relayed by the change's own notice.
      expect((await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { method: 'POST', apiKey })).status).toBe(200);
      await waitFor(
        async () => ((await t.db.collection('subscriptions').findOne({ _id: id as never }))?.['outbox'] ?? []) as unknown[],
        (outbox) => outbox.length === 0,
        4_000,
        100,
        "the change's outbox entry to be relayed",
      );
      expect(await t.db.collection('events').countDocuments({ merchantId, type: 'subscription.paused' })).toBe(1);
    } finally {
      await t.close();
    }
  });
});

describe('bulk chunk jobs', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => {
    await t.close();
  });

  it('a job this worker had locked, then completed and removed by another run, is logged as that at info level, not as a queue error', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const jobs = t.db.collection(JOBS_COLLECTION);
    const queue = new BulkQueue(t.db, createLogger('debug', sink), { concurrency: 1, lockLifetimeMs: 10_000, pollIntervalMs: 50 });
    await queue.enqueue('merchant', 'PAUSE', [
      { chunkId: 'first', commands: 1 },
      { chunkId: 'second', commands: 1 },
    ]);
    const processed: string[] = [];
    await queue.consume({
      // Whichever job runs first (both are due at once), the other is locked here, one ahead; another worker runs it to completion meanwhile, which removes it.
      process: async (chunkId) => {
        processed.push(chunkId);
        const other = { 'data.chunkId': chunkId === 'first' ? 'second' : 'first' };
        await waitFor(
          () => jobs.findOne(other),
          (job) => job?.['lockedAt'] instanceof Date,
          10_000,
          20,
        );
        await jobs.deleteOne(other);
      },
      giveUp: async () => undefined,
    });
    const gone = await waitFor(
      async () => lines.filter((l) => /maybe it does not exist anymore/.test(JSON.stringify(l))),
      (found) => found.length > 0,
      10_000,
    );
    await queue.stop(5_000);
    expect(processed).toHaveLength(1);
    expect(gone).toHaveLength(1);
    expect(gone[0]).toMatchObject({ level: 30, component: 'bulk' });
    expect(lines.filter((l) => (l['level'] as number) >= 50)).toEqual([]);
  });
});
