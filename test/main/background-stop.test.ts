/**
 * What background work does around its start and end: a stop waits for the events relay and for a
 * sweep under way before the database clients close; a job queue whose index creation fails goes
 * on; a request dispatched by the sweep is not queued again; and a chunk job that another run
 * completed is not an error.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BulkQueue, JOBS_COLLECTION } from '../../src/bulk/bulk.queue.js';
import { BulkDispatcher } from '../../src/bulk/bulk.dispatcher.js';
import { BulkRepository } from '../../src/bulk/bulk.repository.js';
import { timestampBefore } from '../../src/lib/clock.js';
import { collectedLog } from '../support/collected-log.js';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { startWireProxy } from '../support/wire-proxy.js';

/** A one-chunk pause request accepted a minute ago and not dispatched yet: what the dispatch sweep looks for. */
const undispatched = (merchantId: string, ids: string[]) => ({
  requestId: randomUUID(),
  merchantId,
  operation: 'PAUSE' as const,
  acceptedCount: ids.length,
  rejected: [],
  chunkCount: 1,
  createdAt: timestampBefore(60_000),
  completedAt: null,
  subscriptionIds: ids,
});

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

describe('a job queue whose database goes while Agenda still creates its index', () => {
  it('rejects nothing unhandled, says the index is left for later, and its enqueue answers rather than waiting for ever', async () => {
    const proxy = await startWireProxy(inject('mongoUri'));
    // Agenda creates its jobs index as it is constructed, unawaited: held here until the client closes.
    const agendaIndex = proxy.on(
      {
        command: 'createIndexes',
        match: (c) => (c.body['indexes'] as { name?: string }[] | undefined)?.some((i) => i.name === 'findAndLockNextJobIndex') ?? false,
      },
      { action: 'hold' },
    );
    const client = new MongoClient(proxy.uri(`queue_connecting_${randomUUID().slice(0, 8)}`));
    const unhandled: unknown[] = [];
    const noteUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', noteUnhandled);
    try {
      await client.connect();
      const { lines, log } = collectedLog();
      const queue = new BulkQueue(client.db(), log, { concurrency: 0, lockLifetimeMs: 10_000, pollIntervalMs: 50 });
      await agendaIndex.reached;
      await client.close(true);
      await expect(queue.enqueue('merchant', 'PAUSE', [{ chunkId: 'one', commands: 1 }])).rejects.toThrow(/client/i);
      expect(unhandled).toEqual([]);
      const reported = lines.filter(
        (l) => l['msg'] === 'job queue index not created; the queue works without it, and the next start creates it',
      );
      expect(reported).toMatchObject([{ level: 40, queue: 'bulk workers' }]);
    } finally {
      process.off('unhandledRejection', noteUnhandled);
      await client.close(true);
      await proxy.close();
    }
  });
});

describe('the bulk dispatch sweep', () => {
  it('a stop while a sweep is under way waits for it: the request a stopped process left undispatched is dispatched, and nothing fails', async () => {
    const proxy = await startWireProxy(inject('mongoUri'));
    // Only the sweep reads requests by their creation time (those accepted over 5 s ago and not dispatched): its read is held here.
    const sweepRead = proxy.on(
      { command: 'find', collection: 'bulkRequests', match: (c) => 'createdAt' in ((c.body['filter'] as object | undefined) ?? {}) },
      { action: 'hold', times: 1 },
    );
    const t = await startTestService({ serverUri: proxy.uri('unused'), workers: 1 });
    try {
      const { merchantId } = await t.merchant();
      const ids = await t.seed(merchantId, 3);
      // As a process stopped right after its 202 leaves a request: stored, never dispatched.
      const left = undispatched(merchantId, ids);
      await new BulkRepository(t.db, 86_400_000).insert(left);
      const { requestId } = left;
      await sweepRead.reached;
      let stopped = false;
      const stopping = t.service.workers.stop(10_000).then(() => (stopped = true));
      await sleep(1_000);
      expect(stopped, 'the stop ended while the sweep was still reading').toBe(false);
      proxy.release();
      await stopping;
      expect(t.logLines.filter((l) => l['msg'] === 'bulk request dispatched by the sweep' && l['requestId'] === requestId)).toHaveLength(1);
      const request = await t.db.collection('bulkRequests').findOne({ _id: requestId as never });
      expect(request?.['dispatchedAt']).toEqual(expect.any(String));
      expect(t.logLines.filter((l) => /sweep failed/.test(String(l['msg'])))).toEqual([]);
    } finally {
      await t.close();
      await proxy.close();
    }
  });
});

describe('a request the sweep dispatched before its response closed', () => {
  it("is not queued again by the response's own dispatch: one job per chunk", async () => {
    const t = await startTestService({ workers: 0 });
    try {
      const { merchantId } = await t.merchant();
      const ids = await t.seed(merchantId, 3);
      const repository = new BulkRepository(t.db, 86_400_000);
      // Accepted a minute ago, its response still open (the dispatch waits for it to close): the sweep takes it first.
      const request = undispatched(merchantId, ids);
      await repository.insert(request);
      const { log } = collectedLog();
      const dispatcher = new BulkDispatcher(
        repository,
        new BulkQueue(t.db, log, { concurrency: 0, lockLifetimeMs: 10_000, pollIntervalMs: 50 }),
        log,
      );
      await dispatcher.sweep();
      await dispatcher.dispatch(merchantId, request.requestId, request);
      const jobs = await t.db.collection(JOBS_COLLECTION).countDocuments({ 'data.chunkId': { $regex: `^${request.requestId}:` } });
      expect(jobs).toBe(1);
    } finally {
      await t.close();
    }
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
    const { lines, log } = collectedLog();
    const jobs = t.db.collection(JOBS_COLLECTION);
    const queue = new BulkQueue(t.db, log, { concurrency: 1, lockLifetimeMs: 10_000, pollIntervalMs: 50 });
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
