/**
 * Small bulk requests share a job's run (src/bulk/bulk.worker.ts): a run (whether or not its chunk is full)
 * also locks the waiting jobs of other chunks of the same merchant and operation, applies each
 * chunk with its own marks and outcomes, completes their requests and removes their jobs. Queued
 * while no worker runs, so that the worker finds them waiting, as under load.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CHUNK_SIZE } from '../../src/bulk/bulk.chunks.js';
import { EXTENDED_RUN_COMMANDS, RUN_COMMANDS } from '../../src/bulk/bulk.run.js';
import { call, httpOf, type Reply } from '../support/http.js';
import { databaseUri, startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { startWireProxy } from '../support/wire-proxy.js';
import { FLEET_ON_ONE_DATABASE, startWorker, type WorkerProcess } from '../support/worker-process.js';

const SIZE = 20;
let http: TestService;
const others: { close(): Promise<void> }[] = [];
/** Closes what a test started before the next test runs (its requests wait for a worker of their own), not at the end. */
async function closeNow(other: { close(): Promise<void> }): Promise<void> {
  others.splice(others.indexOf(other), 1);
  await other.close();
}
beforeAll(async () => {
  http = await startTestService({ workers: 0, rateLimitPerSecond: 0 });
});
afterAll(async () => {
  for (const other of others.reverse()) await other.close();
  await http.close();
});

interface Accepted {
  readonly requestId: string;
  readonly location: string;
  readonly operation: 'PAUSE' | 'RESUME';
  readonly ids: string[];
}

async function accept(apiKey: string, operation: 'pause' | 'resume', ids: string[]): Promise<Accepted> {
  const res = await api(apiKey, 'POST', `/v2/subscriptions/bulk/${operation}`, { subscriptions: ids });
  expect(res.status).toBe(202);
  return { requestId: res.body.requestId, location: res.headers.get('location')!, operation: res.body.operation, ids };
}

const { api, completed } = httpOf(() => http);
const queuedJobs = () => http.db.collection('bulkJobs').countDocuments({ nextRunAt: { $ne: null } });

/** The request once completed, with every item it reports. */
async function finished(
  apiKey: string,
  request: Accepted,
): Promise<{ counts: Record<string, number>; items: { subscriptionId: string; outcome: string }[] }> {
  const status = await completed(apiKey, request.location, 120_000);
  const items: { subscriptionId: string; outcome: string }[] = [];
  for (let cursor: string | null = ''; cursor !== null;) {
    const page: Reply = await api(apiKey, 'GET', `${request.location}/items?limit=100${cursor ? `&startingAfter=${cursor}` : ''}`);
    items.push(...page.body.data);
    cursor = page.body.nextCursor;
  }
  return { counts: status.body.counts, items };
}

const statusOf = async (ids: string[]) =>
  new Set(
    (
      await http.db
        .collection('subscriptions')
        .find({ _id: { $in: ids as never[] } })
        .toArray()
    ).map((d) => d.status),
  );

describe('small bulk requests sharing a run', () => {
  it(
    '50 requests of 20 ids (25 pauses, 25 resumes) run in fewer jobs than requests, pause and resume never together, each completing once with its own counts and items',
    { timeout: 300_000 },
    async () => {
      const { merchantId, apiKey } = await http.merchant();
      const fulfilled = await http.seed(merchantId, 25 * SIZE);
      const paused = await http.seed(merchantId, 25 * SIZE, 'paused');
      const requests: Accepted[] = [];
      for (let i = 0; i < 25; i++) {
        requests.push(await accept(apiKey, 'pause', fulfilled.slice(i * SIZE, (i + 1) * SIZE)));
        requests.push(await accept(apiKey, 'resume', paused.slice(i * SIZE, (i + 1) * SIZE)));
      }
      expect(await waitFor(queuedJobs, (n) => n === 50, 60_000, 100, 'the 50 jobs queued')).toBe(50);

      const worker = await startTestService({ workers: 2, databaseName: http.db.databaseName });
      others.push(worker);
      try {
        for (const request of requests) {
          const { counts, items } = await finished(apiKey, request);
          expect(counts).toEqual({ pending: 0, applied: SIZE, noop: 0, skipped: 0, failed: 0 });
          expect(items.map((i) => i.subscriptionId).sort()).toEqual([...request.ids].sort());
          expect(new Set(items.map((i) => i.outcome))).toEqual(new Set(['applied']));
        }
        expect(await statusOf(fulfilled)).toEqual(new Set(['paused']));
        expect(await statusOf(paused)).toEqual(new Set(['fulfilled']));
        expect(await waitFor(queuedJobs, (n) => n === 0, 30_000, 100, 'the queue empty')).toBe(0);

        const byRequest = new Map(requests.map((r) => [r.requestId, r]));
        const together = worker.logLines.filter((l) => l['msg'] === 'bulk chunks applied together');
        const companions = together.flatMap((l) => l['companions'] as string[]);
        // Each of these chunks was applied in another job's run and its own job removed: the queue ran at most 50 minus that many jobs.
        expect(companions.length).toBeGreaterThanOrEqual(25);
        expect(new Set(companions).size).toBe(companions.length);
        for (const line of together) {
          const operations = [line['chunkId'] as string, ...(line['companions'] as string[])].map(
            (chunkId) => byRequest.get(chunkId.split(':')[0]!)!.operation,
          );
          expect(new Set(operations)).toEqual(new Set([line['operation']]));
          expect(line['commands']).toBeLessThanOrEqual(RUN_COMMANDS);
        }
        // Each command logged once, each request completed once.
        const commandLines = worker.logLines.filter((l) => l['outcome'] === 'applied' && byRequest.has(l['requestId'] as string));
        expect(commandLines).toHaveLength(50 * SIZE);
        const completions = worker.logLines.filter((l) => l['msg'] === 'bulk request completed' && byRequest.has(l['requestId'] as string));
        expect(completions.map((l) => l['requestId']).sort()).toEqual([...byRequest.keys()].sort());
      } finally {
        await closeNow(worker);
      }
    },
  );

  it(
    'a worker killed while recording the outcomes of chunks it took together leaves them to another, which completes every request with each command applied once',
    { timeout: 180_000 },
    async () => {
      const { merchantId, apiKey } = await http.merchant();
      const ids = await http.seed(merchantId, 10 * SIZE);
      const requests: Accepted[] = [];
      for (let i = 0; i < 10; i++) requests.push(await accept(apiKey, 'pause', ids.slice(i * SIZE, (i + 1) * SIZE)));
      await waitFor(queuedJobs, (n) => n === 10, 60_000, 100, 'the 10 jobs queued');

      // The first worker reaches the database through a proxy that holds every outcome record: by
      // then its run has locked companions' jobs and paused their subscriptions; it is killed there.
      const proxy = await startWireProxy(inject('mongoUri'));
      let doomed: WorkerProcess | undefined;
      try {
        const record = proxy.on(
          { command: 'update', collection: 'bulkChunks', match: (c) => /"outcomes":[[{]/.test(JSON.stringify(c.body['updates'] ?? [])) },
          { action: 'hold' },
        );
        doomed = await startWorker(proxy.uri(http.db.databaseName), {
          ...FLEET_ON_ONE_DATABASE,
          BULK_CONCURRENCY: '1',
          BULK_LOCK_LIFETIME_MS: '1000',
        });
        await record.reached;
        // Its own job and the one Agenda locks ahead of it (BULK_CONCURRENCY 1), and the companions its run locked.
        const locked = await http.db.collection('bulkJobs').countDocuments({ lockedAt: { $ne: null } });
        await doomed.stop('SIGKILL');
        expect(locked).toBeGreaterThan(2);
        expect(await http.db.collection('bulkChunks').countDocuments({ merchantId, outcomes: null })).toBe(10);

        const rescuer = await startWorker(databaseUri(http.db.databaseName), { ...FLEET_ON_ONE_DATABASE, BULK_LOCK_LIFETIME_MS: '1000' });
        const stopRescuer = { close: () => rescuer.stop() };
        others.push(stopRescuer);
        for (const request of requests) {
          const { counts, items } = await finished(apiKey, request);
          // Already paused by the killed run under this request's marks: counted applied, not no-op.
          expect(counts).toEqual({ pending: 0, applied: SIZE, noop: 0, skipped: 0, failed: 0 });
          expect(items.map((i) => i.subscriptionId).sort()).toEqual([...request.ids].sort());
        }
        expect(await statusOf(ids)).toEqual(new Set(['paused']));
        expect(await waitFor(queuedJobs, (n) => n === 0, 30_000, 100, 'the queue empty')).toBe(0);
        await closeNow(stopRescuer);
      } finally {
        await doomed?.stop('SIGKILL');
        await proxy.close();
      }
    },
  );
  /**
   * Ten pause requests of 20 ids over 60 subscriptions (40 fulfilled, 10 paused, and 10 cancelled
   * after acceptance, by the billing system that owns them): windows of the list 6 apart, so that
   * each subscription is named by three or four of them, as under `npm run load`. Queued while no
   * worker runs, so that one run takes (all but one of) the ten chunks. `ahead`: pauses of other,
   * paused subscriptions (no-ops, no events) queued first, so that the worker's first run and the job
   * Agenda locks ahead of it are theirs and that first run takes all ten as companions.
   */
  async function overlappingPauses(ahead = 0): Promise<{
    apiKey: string;
    merchantId: string;
    fulfilled: string[];
    paused: string[];
    cancelled: string[];
    requests: Accepted[];
  }> {
    const { merchantId, apiKey } = await http.merchant();
    const live = await http.seed(merchantId, 50);
    const paused = await http.seed(merchantId, 10, 'paused');
    const [fulfilled, cancelled] = [live.slice(0, 40), live.slice(40)];
    const all = [...live, ...paused];
    const others = ahead > 0 ? await http.seed(merchantId, ahead, 'paused') : [];
    for (const other of others) await accept(apiKey, 'pause', [other]);
    // Queued before the ten (the queue takes the earliest first), whatever order the dispatches after the 202s land in.
    await waitFor(queuedJobs, (n) => n === ahead, 60_000, 100, `the ${ahead} jobs ahead queued`);
    const requests: Accepted[] = [];
    for (let i = 0; i < 10; i++)
      requests.push(
        await accept(
          apiKey,
          'pause',
          Array.from({ length: SIZE }, (_, k) => all[(i * 6 + k) % all.length]!),
        ),
      );
    await waitFor(queuedJobs, (n) => n === ahead + 10, 60_000, 100, 'the 10 jobs queued');
    await http.db.collection('subscriptions').updateMany({ _id: { $in: cancelled as never[] } }, { $set: { status: 'cancelled' } });
    return { apiKey, merchantId, fulfilled, paused, cancelled, requests };
  }

  /**
   * What the requests report, checked against what the same commands applied one after another
   * give, in whatever order: each fulfilled subscription applied by exactly one request (a no-op
   * for the others), each paused one a no-op for all, each cancelled one skipped; every request
   * complete with its own counts. Returns, for each subscription applied, the request that applied it.
   */
  async function checkOutcomes(
    apiKey: string,
    s: { fulfilled: string[]; paused: string[]; cancelled: string[]; requests: Accepted[] },
  ): Promise<Map<string, string>> {
    const appliedBy = new Map<string, string[]>();
    for (const request of s.requests) {
      const { counts, items } = await finished(apiKey, request);
      expect(items.map((i) => i.subscriptionId).sort()).toEqual([...request.ids].sort());
      const expected = { pending: 0, applied: 0, noop: 0, skipped: 0, failed: 0 };
      for (const { subscriptionId, outcome } of items) {
        expect(outcome).toBe(
          s.cancelled.includes(subscriptionId)
            ? 'skipped'
            : s.paused.includes(subscriptionId)
              ? 'noop'
              : outcome === 'applied'
                ? 'applied'
                : 'noop',
        );
        expected[outcome as keyof typeof expected]++;
        if (outcome === 'applied') appliedBy.set(subscriptionId, [...(appliedBy.get(subscriptionId) ?? []), request.requestId]);
      }
      expect(counts).toEqual(expected);
    }
    expect([...appliedBy.keys()].sort()).toEqual([...s.fulfilled].sort());
    for (const [id, by] of appliedBy) expect(by, `requests that applied ${id}`).toHaveLength(1);
    expect(await statusOf([...s.fulfilled, ...s.paused])).toEqual(new Set(['paused']));
    expect(await statusOf(s.cancelled)).toEqual(new Set(['cancelled']));
    return new Map([...appliedBy].map(([id, [by]]) => [id, by!]));
  }

  /** The events of the merchant's subscriptions (not of its requests) once `count` have been relayed. */
  async function eventsOf(
    apiKey: string,
    count: number,
  ): Promise<{ type: string; data: { subscription: { id: string; status: string }; cause: { kind: string; requestId?: string } } }[]> {
    const all = async () => {
      const events = [];
      for (let cursor: string | null = ''; cursor !== null;) {
        const page: Reply = await call(http.baseUrl, `/v2/events?limit=100${cursor ? `&startingAfter=${cursor}` : ''}`, {
          method: 'GET',
          apiKey,
        });
        events.push(...page.body.data);
        cursor = page.body.nextCursor;
      }
      return events.filter((e) => e.type.startsWith('subscription.'));
    };
    return waitFor(all, (e) => e.length >= count, 60_000, 250, `${count} subscription events relayed`);
  }

  it(
    'requests that name the same subscriptions: one run writes each of those once for all its commands, with the outcomes and events of the commands applied one after another',
    { timeout: 180_000 },
    async () => {
      // Two jobs ahead: the run is decided here, not by which of the ten Agenda happens to lock first or ahead.
      const s = await overlappingPauses(2);
      // What the worker asks the database to write for the commands (their updates filter on the marks; not the relay's outbox clears): the subscriptions each statement names.
      const proxy = await startWireProxy(inject('mongoUri'));
      const named = new Map<string, number>();
      proxy.on(
        {
          command: 'update',
          collection: 'subscriptions',
          match: (c) => {
            for (const { q } of (c.body['updates'] ?? []) as { q: { _id?: string | { $in?: string[] }; bulkCommands?: unknown } }[]) {
              if (q.bulkCommands === undefined) continue;
              for (const id of typeof q._id === 'string' ? [q._id] : (q._id?.$in ?? [])) named.set(id, (named.get(id) ?? 0) + 1);
            }
            return false;
          },
        },
        { action: 'hold', ms: 0 },
      );
      const worker = await startWorker(proxy.uri(http.db.databaseName), { ...FLEET_ON_ONE_DATABASE, BULK_CONCURRENCY: '1' });
      try {
        const appliedBy = await checkOutcomes(s.apiKey, s);
        // The run that took the ten chunks: the first job ahead's, with the ten as its companions. Its log
        // line comes after it completes their requests, so a loaded machine may show the completions first.
        const requestsOf = (run: Record<string, unknown>) =>
          new Set([run['chunkId'] as string, ...(run['companions'] as string[])].map((chunkId) => chunkId.split(':')[0]!));
        const runs = await waitFor(
          async () => worker.lines.filter((l) => l['msg'] === 'bulk chunks applied together').map(requestsOf),
          (logged) => logged.some((run) => s.requests.every((r) => run.has(r.requestId))),
          30_000,
          100,
          () =>
            `a run of all ten requests logged (runs: ${JSON.stringify(worker.lines.filter((l) => String(l['msg']).startsWith('bulk chunk')))})`,
        );
        const inRun = runs.find((run) => s.requests.every((r) => run.has(r.requestId)))!;
        const namedBy = (id: string, run: boolean) => s.requests.filter((r) => inRun.has(r.requestId) === run && r.ids.includes(id)).length;
        // Fulfilled or paused subscriptions that only the run's commands name, two or more of them: one statement wrote all their commands.
        const shared = [...s.fulfilled, ...s.paused].filter((id) => namedBy(id, true) >= 2 && namedBy(id, false) === 0);
        // Each of the 50 is named by three or four of the ten.
        expect(shared).toHaveLength(50);
        for (const id of shared) expect(named.get(id), `update statements naming ${id}, which ${namedBy(id, true)} commands name`).toBe(1);
        // Cancelled ones are read, never written.
        const cancelled = s.cancelled.filter((id) => namedBy(id, true) >= 2 && namedBy(id, false) === 0);
        expect(cancelled.length).toBeGreaterThan(0);
        for (const id of cancelled) expect(named.get(id), `update statements naming ${id}`).toBeUndefined();
        // One paused event per subscription applied, caused by the request that reports it applied.
        const events = await eventsOf(s.apiKey, s.fulfilled.length);
        expect(events).toHaveLength(s.fulfilled.length);
        for (const event of events) {
          expect(event.type).toBe('subscription.paused');
          expect(event.data.subscription.status).toBe('paused');
          expect(event.data.cause).toMatchObject({ kind: 'bulk', requestId: appliedBy.get(event.data.subscription.id) });
        }
        expect(await waitFor(queuedJobs, (n) => n === 0, 30_000, 100, 'the queue empty')).toBe(0);
      } finally {
        await worker.stop();
        await proxy.close();
      }
    },
  );

  it(
    'a subscription resumed between the run’s read and its shared write is left out of that write and applied on its own: exactly one pause applies it after the resume',
    { timeout: 180_000 },
    async () => {
      const s = await overlappingPauses();
      const proxy = await startWireProxy(inject('mongoUri'));
      // The shared write of subscriptions read paused (no-op marks for several requests at once) is held on its way to the database.
      let resumedId: string | undefined;
      const shared = proxy.on(
        {
          command: 'update',
          collection: 'subscriptions',
          match: (c) => {
            const statement = (
              (c.body['updates'] ?? []) as { q: { status?: string; _id?: { $in?: string[] }; bulkCommands?: { $nin?: string[] } } }[]
            ).find(({ q }) => q.status === 'paused' && (q.bulkCommands?.$nin?.length ?? 0) > 2);
            resumedId ??= statement?.q._id?.$in?.[0];
            return statement !== undefined;
          },
        },
        { action: 'hold', times: 1 },
      );
      const worker = await startWorker(proxy.uri(http.db.databaseName), { ...FLEET_ON_ONE_DATABASE, BULK_CONCURRENCY: '1' });
      try {
        await shared.reached;
        // Meanwhile the merchant resumes one of them (the request goes straight to the database).
        const resumed = await call(http.baseUrl, `/v2/subscriptions/${resumedId}/resume`, { apiKey: s.apiKey, json: {} });
        expect(resumed.status).toBe(200);
        expect(resumed.body.status).toBe('fulfilled');
        // This process relays the resume's event and clears its outbox. On FerretDB that clear writes the
        // whole document back, and across processes nothing queues it behind the worker's write (docs/design.md
        // §8): a clear landing beside the worker's pause undid it, and a second request paused it again. The
        // test is about the shared write, so the clear is let finish first.
        await waitFor(
          () => http.db.collection('subscriptions').findOne({ _id: resumedId as never }, { projection: { outbox: 1 } }),
          (doc) => (doc?.['outbox'] ?? []).length === 0,
          30_000,
          50,
          'the resume’s event relayed',
        );
        proxy.release();

        // As if it had been fulfilled: the first command to reach it after the resume paused it again, the others were no-ops.
        const paused = s.paused.filter((id) => id !== resumedId);
        const appliedBy = await checkOutcomes(s.apiKey, { ...s, fulfilled: [...s.fulfilled, resumedId!], paused });
        const events = await eventsOf(s.apiKey, s.fulfilled.length + 2);
        const own = events.filter((e) => e.data.subscription.id === resumedId);
        expect(own.map((e) => [e.type, e.data.cause.kind]).sort()).toEqual([
          ['subscription.paused', 'bulk'],
          ['subscription.resumed', 'api'],
        ]);
        expect(own.find((e) => e.type === 'subscription.paused')!.data.cause.requestId).toBe(appliedBy.get(resumedId!));
      } finally {
        proxy.release();
        await worker.stop();
        await proxy.close();
      }
    },
  );

  it(
    'a run repeated with other companions: subscriptions written together whose earlier marks differ each keep their own outcome',
    { timeout: 180_000 },
    async () => {
      // Four pause requests name the same two subscriptions. An earlier run (killed before recording
      // its outcomes) had applied the first request's command to one of them (it paused it) and
      // found the other paused already. Both are now paused, so the later requests' no-op marks go
      // in one statement for both, while the first request's outcomes differ between them.
      const { merchantId, apiKey } = await http.merchant();
      const [first, second] = await http.seed(merchantId, 2);
      const earlier = await accept(apiKey, 'pause', [first!, second!]);
      const later: Accepted[] = [];
      for (let i = 0; i < 3; i++) later.push(await accept(apiKey, 'pause', [first!, second!]));
      await waitFor(queuedJobs, (n) => n === 4, 60_000, 100, 'the 4 jobs queued');
      const subscriptions = http.db.collection<{ _id: string }>('subscriptions');
      await subscriptions.updateOne({ _id: first! }, { $set: { status: 'paused', bulkCommands: [`${earlier.requestId}:applied`] } });
      await subscriptions.updateOne({ _id: second! }, { $set: { status: 'paused', bulkCommands: [`${earlier.requestId}:noop`] } });

      const worker = await startWorker(databaseUri(http.db.databaseName), { ...FLEET_ON_ONE_DATABASE, BULK_CONCURRENCY: '1' });
      try {
        const outcomes = async (request: Accepted) =>
          Object.fromEntries((await finished(apiKey, request)).items.map((i) => [i.subscriptionId, i.outcome]));
        expect(await outcomes(earlier)).toEqual({ [first!]: 'applied', [second!]: 'noop' });
        expect((await finished(apiKey, earlier)).counts).toEqual({ pending: 0, applied: 1, noop: 1, skipped: 0, failed: 0 });
        for (const request of later) expect(await outcomes(request)).toEqual({ [first!]: 'noop', [second!]: 'noop' });
        // The first request's chunk was applied in a run with later ones: three chunks when Agenda locked one job ahead (which
        // runs alone), all four when, under load, it had not yet; and the run's own chunk is not always the oldest.
        // Its log line comes after it completes the requests: waited for.
        const ofEarlier = (l: Record<string, unknown>) =>
          l['msg'] === 'bulk chunks applied together' &&
          [l['chunkId'] as string, ...(l['companions'] as string[])].some((chunkId) => chunkId.startsWith(`${earlier.requestId}:`));
        const run = await waitFor(
          async () => worker.lines.find(ofEarlier),
          (found) => found !== undefined,
          30_000,
          100,
          'a run that applied the first request’s chunk with others, logged',
        );
        expect((run!['companions'] as string[]).length + 1, 'the chunks of that run').toBeGreaterThanOrEqual(3);
      } finally {
        await worker.stop();
      }
    },
  );

  /** The runs that applied chunks of these requests together, as their workers logged them. */
  const runsOf = (worker: TestService, requests: readonly Accepted[]) =>
    worker.logLines.filter(
      (l) => l['msg'] === 'bulk chunks applied together' && requests.some((r) => (l['chunkId'] as string).startsWith(`${r.requestId}:`)),
    );

  it(
    'a request alone in the queue takes more companions past RUN_COMMANDS: 3000 ids in at most two runs, each command applied once',
    { timeout: 180_000 },
    async () => {
      const { merchantId, apiKey } = await http.merchant();
      const ids = await http.seed(merchantId, 3000);
      const request = await accept(apiKey, 'pause', ids);
      await waitFor(queuedJobs, (n) => n === 30, 60_000, 100, 'the 30 jobs queued');
      const worker = await startTestService({ workers: 1, databaseName: http.db.databaseName });
      others.push(worker);
      // Closed whatever happens: a worker left running would take the next test's jobs.
      try {
        const { counts, items } = await finished(apiKey, request);
        expect(counts).toEqual({ pending: 0, applied: 3000, noop: 0, skipped: 0, failed: 0 });
        expect(items).toHaveLength(3000);
        expect(await statusOf(ids)).toEqual(new Set(['paused']));
        expect(await waitFor(queuedJobs, (n) => n === 0, 30_000, 100, 'the queue empty')).toBe(0);
        // A run of its first chunk and all but the one Agenda locked ahead of it, which runs alone (a run not logged as together) or with what is left.
        const commands = runsOf(worker, [request]).map((run) => run['commands'] as number);
        expect(commands.length).toBeLessThanOrEqual(2);
        expect(Math.max(...commands)).toBeGreaterThanOrEqual(3000 - 2 * CHUNK_SIZE);
        for (const n of commands) expect(n).toBeLessThanOrEqual(EXTENDED_RUN_COMMANDS);
      } finally {
        await closeNow(worker);
      }
    },
  );

  it(
    'a request whose chunks were queued twice (a dispatch repeated) counts each command once, as applied: a run that takes a chunk twice applies it once',
    { timeout: 180_000 },
    async () => {
      const { merchantId, apiKey } = await http.merchant();
      const ids = await http.seed(merchantId, 3 * CHUNK_SIZE);
      const request = await accept(apiKey, 'pause', ids);
      await waitFor(queuedJobs, (n) => n === 3, 60_000, 100, 'the 3 jobs queued');
      // What the sweep leaves after it dispatches again a request whose first dispatch was cut short after its jobs were queued.
      const jobs = http.db.collection('bulkJobs');
      const queued = await jobs.find({ 'data.chunkId': { $regex: `^${request.requestId}:` } }).toArray();
      await jobs.insertMany(queued.map(({ _id: _queued, ...job }) => job));
      expect(await queuedJobs()).toBe(6);
      const worker = await startTestService({ workers: 1, databaseName: http.db.databaseName });
      others.push(worker);
      try {
        const { counts, items } = await finished(apiKey, request);
        expect(counts).toEqual({ pending: 0, applied: 3 * CHUNK_SIZE, noop: 0, skipped: 0, failed: 0 });
        expect(items.filter((i) => i.outcome === 'applied')).toHaveLength(3 * CHUNK_SIZE);
        expect(await statusOf(ids)).toEqual(new Set(['paused']));
        expect(await waitFor(queuedJobs, (n) => n === 0, 30_000, 100, 'the queue empty')).toBe(0);
      } finally {
        await closeNow(worker);
      }
    },
  );

  it('while another merchant’s chunk is due, no run takes more than RUN_COMMANDS', { timeout: 180_000 }, async () => {
    const first = await http.merchant();
    const second = await http.merchant();
    const large = await accept(first.apiKey, 'pause', await http.seed(first.merchantId, 3000));
    const small = await accept(second.apiKey, 'pause', await http.seed(second.merchantId, SIZE));
    await waitFor(queuedJobs, (n) => n === 31, 60_000, 100, 'the 31 jobs queued');
    const worker = await startTestService({ workers: 1, databaseName: http.db.databaseName });
    others.push(worker);
    try {
      expect((await finished(first.apiKey, large)).counts.applied).toBe(3000);
      expect((await finished(second.apiKey, small)).counts.applied).toBe(SIZE);
      const runs = runsOf(worker, [large]);
      expect(runs.length).toBeGreaterThanOrEqual(2);
      for (const run of runs) expect(run['commands']).toBeLessThanOrEqual(RUN_COMMANDS);
    } finally {
      await closeNow(worker);
    }
  });
});
