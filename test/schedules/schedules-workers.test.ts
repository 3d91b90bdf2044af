/**
 * Due schedules at scale and across processes (docs/design.md §9): 3000 scheduled resumes from
 * one bulk pause, a schedule that fell due while the service was stopped, and two worker
 * processes polling the same due schedules.
 */
import { afterAll, describe, expect, inject, it } from 'vitest';
import { call, httpOf } from '../support/http.js';
import { databaseUri, startTestService, type TestService } from '../support/service.js';
import { pollFor, waitFor } from '../support/wait.js';
import { startWireProxy } from '../support/wire-proxy.js';
import { cannotHoldWithout } from '../support/workarounds.js';
import { FLEET_ON_ONE_DATABASE, startWorker, type WorkerProcess } from '../support/worker-process.js';

const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();
const started: TestService[] = [];
const processes: WorkerProcess[] = [];
afterAll(async () => {
  await Promise.all(processes.map((w) => w.stop('SIGKILL')));
  for (const s of started.reverse()) await s.close();
});

async function service(options: Parameters<typeof startTestService>[0]): Promise<TestService> {
  const s = await startTestService(options);
  started.push(s);
  return s;
}

/** Accepts a bulk pause with resumeAt and waits until its commands are applied. */
async function bulkPauseUntil(t: TestService, apiKey: string, ids: string[], resumeAt: string): Promise<void> {
  const res = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { apiKey, json: { subscriptions: ids, resumeAt } });
  expect(res.body.acceptedCount).toBe(ids.length);
  const location = res.headers.get('location')!;
  const done = await httpOf(() => t).completed(apiKey, location, 120_000, 250);
  expect(done.body.counts).toMatchObject({ applied: ids.length });
}

const atomic = inject('dbCapabilities').atomicConditionalUpdate;
const NOT_ATOMIC =
  'FerretDB v1 has no atomic conditional update across processes (it queries, then writes by _id): two worker processes can both ' +
  "apply one schedule, and a whole-document write of one can undo the other's (docs/design.md §9); the test beside it asserts what FerretDB does give";
if (!atomic) console.log(`schedules-workers: exactly-once across two worker processes is skipped: ${NOT_ATOMIC}`);

/** An HTTP-only service and two worker processes polling every 100 ms; `count` subscriptions paused with resumeAt 4 s ahead. */
let shared: TestService | undefined;
const t = () => shared!;
async function twoWorkersResume(count: number): Promise<{ merchantId: string; ids: string[] }> {
  shared = await service({ workers: 0 });
  const uri = databaseUri(shared.db.databaseName);
  const env = { ...FLEET_ON_ONE_DATABASE, SCHEDULE_POLL_MS: '100' };
  processes.push(...(await Promise.all([startWorker(uri, env), startWorker(uri, env)])));
  const { merchantId, apiKey } = await shared.merchant();
  const ids = await shared.seed(merchantId, count);
  await bulkPauseUntil(shared, apiKey, ids, inMs(4000));
  return { merchantId, ids };
}

/** Subscription id -> how many times the last two worker processes logged its scheduled resume. */
function resumesLogged(merchantId: string): Map<unknown, number> {
  const lines = processes
    .slice(-2)
    .flatMap((p) => p.lines)
    .filter((l) => l.msg === 'scheduled resume applied' && l.merchantId === merchantId);
  const perSubscription = new Map<unknown, number>();
  for (const l of lines) perSubscription.set(l.subscriptionId, (perSubscription.get(l.subscriptionId) ?? 0) + 1);
  return perSubscription;
}

const resumedWithoutSchedule = (t: TestService, ids: string[]) =>
  t.db.collection('subscriptions').countDocuments({
    _id: { $in: ids as never[] },
    status: 'fulfilled',
    resumeAt: { $exists: false },
    nextScheduledAt: { $exists: false },
  });

describe('due schedules', () => {
  it(
    'a 3000-id bulk pause with resumeAt a few seconds ahead ends with all 3000 fulfilled, each resumed once, schedules gone',
    { timeout: 240_000 },
    async () => {
      const t = await service({ workers: 2, schedulePollMs: 500 });
      const { merchantId, apiKey } = await t.merchant();
      const ids = await t.seed(merchantId, 3000);
      const resumeAt = inMs(5000);
      await bulkPauseUntil(t, apiKey, ids, resumeAt);
      const pausedBy = Date.now() - Date.parse(resumeAt);
      expect(
        await waitFor(
          () => resumedWithoutSchedule(t, ids),
          (n) => n === 3000,
          120_000,
          500,
        ),
      ).toBe(3000);
      const resumed = t.logLines.filter((l) => l.msg === 'scheduled resume applied' && l.merchantId === merchantId);
      expect(resumed).toHaveLength(3000);
      expect(new Set(resumed.map((l) => l.subscriptionId)).size).toBe(3000);
      const lastMs = Math.max(...resumed.map((l) => Number(l.time)));
      const paused = pausedBy > 0 ? `${pausedBy} ms after resumeAt` : `${-pausedBy} ms before resumeAt`;
      const lastAfter = lastMs - Date.parse(resumeAt);
      console.log(
        `3000 scheduled resumes: the bulk pause was applied ${paused}; the last resume was logged ${lastAfter} ms after resumeAt, ${lastAfter - pausedBy} ms after the pause was (poll 500 ms)`,
      );
    },
  );

  it('a schedule that falls due while the service is stopped is applied when it starts again', { timeout: 60_000 }, async () => {
    const first = await startTestService({ workers: 1, schedulePollMs: 200, databaseName: `restart_${Date.now()}` });
    const { merchantId, apiKey } = await first.merchant();
    const [id] = await first.seed(merchantId, 1);
    const resumeAt = inMs(1000);
    const res = await call(first.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey, json: { resumeAt } });
    expect(res.body.status).toBe('paused');
    await first.close();
    // Stopped until the schedule is due (no longer than that: the close itself may have taken most of it).
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(resumeAt) + 100 - Date.now())));
    const again = await service({ workers: 0, databaseName: first.db.databaseName });
    expect(await again.db.collection('subscriptions').findOne({ _id: id as never })).toMatchObject({ status: 'paused' });
    const restarted = await service({ workers: 1, schedulePollMs: 200, databaseName: first.db.databaseName });
    const read = () => call(restarted.baseUrl, `/v2/subscriptions/${id}`, { apiKey, method: 'GET' });
    const after = await waitFor(read, (r) => r.body.status === 'fulfilled', 20_000);
    expect(after.body).toMatchObject({ status: 'fulfilled' });
    expect(after.body.schedule).toBeUndefined();
    await again.db.dropDatabase();
  });

  it.skipIf(!atomic)(
    `two worker processes polling the same due schedules apply each exactly once${atomic ? '' : ` (skipped: ${NOT_ATOMIC})`}`,
    { timeout: 240_000 },
    async () => {
      const { merchantId, ids } = await twoWorkersResume(1000);
      expect(
        await waitFor(
          () => resumedWithoutSchedule(t(), ids),
          (n) => n === 1000,
          120_000,
          500,
          'all 1000 resumed',
        ),
      ).toBe(1000);
      // A resume's log line reaches the pipe just after its write reaches the database.
      await waitFor(
        async () => resumesLogged(merchantId).size,
        (n) => n === 1000,
        10_000,
        100,
        'a logged resume of each',
      );
      const perSubscription = resumesLogged(merchantId);
      expect([...perSubscription.values()].filter((n) => n > 1)).toEqual([]);
    },
  );

  it.runIf(!atomic)(
    'on FerretDB, two worker processes lose no due schedule: each ends resumed, or paused with its schedule still due (fired again at the next full read)',
    { timeout: 240_000 },
    async () => {
      const { merchantId, ids } = await twoWorkersResume(1000);
      // How far two processes get in 60 s: a measurement window, not a wait for a fact.
      await pollFor(
        () => resumedWithoutSchedule(t(), ids),
        (n) => n === 1000,
        60_000,
        500,
      );
      // Every subscription classified from one read, so that none moves between two counts.
      const docs = await t()
        .db.collection('subscriptions')
        .find({ _id: { $in: ids as never[] } })
        .toArray();
      const kind = (d: (typeof docs)[number]) =>
        d.status === 'fulfilled' && d.resumeAt === undefined && d.nextScheduledAt === undefined
          ? 'resumed'
          : d.status === 'paused' && d.resumeAt !== undefined && d.nextScheduledAt !== undefined
            ? 'still due'
            : `${d.status}, resumeAt ${d.resumeAt === undefined ? 'absent' : 'set'}, nextScheduledAt ${d.nextScheduledAt === undefined ? 'absent' : 'set'}`;
      const kinds = new Map<string, number>();
      for (const d of docs) kinds.set(kind(d), (kinds.get(kind(d)) ?? 0) + 1);
      const resumed = kinds.get('resumed') ?? 0;
      const stillDue = kinds.get('still due') ?? 0;
      expect(Object.fromEntries(kinds), 'subscriptions either resumed or paused with their schedule still due').toEqual({
        ...(resumed ? { resumed } : {}),
        ...(stillDue ? { 'still due': stillDue } : {}),
      });
      expect(docs).toHaveLength(1000);
      expect(resumed).toBeGreaterThan(0);
      const perSubscription = resumesLogged(merchantId);
      const twice = [...perSubscription.values()].filter((n) => n > 1).length;
      const byProcess = processes
        .slice(-2)
        .map((p) => p.lines.filter((l) => l.msg === 'scheduled resume applied' && l.merchantId === merchantId).length);
      // A process logs the resumes its own run wrote (read back by its run id); a whole-document
      // write of the other process (its own resume, or an outbox clear) can replace that id, or put
      // back the state the other process changed, schedule included (docs/design.md §8, §9).
      console.log(
        `FerretDB limit, measured: with two worker processes, ${stillDue} of 1000 scheduled resumes were undone by a concurrent write of the ` +
          `other process and still due after 60 s; ${twice} were written by both; each process logged ${byProcess.join(' and ')}; ` +
          `${1000 - perSubscription.size} were logged by neither. None was lost. Run one worker process on FerretDB.`,
      );
    },
  );

  const idlePoll = 'an idle poll reads one clock document, not the subscriptions; they are read when a schedule is due';
  it.skipIf(cannotHoldWithout('scheduleClock', idlePoll))(idlePoll, { timeout: 60_000 }, async () => {
    // On FerretDB the due query reads every subscription (7.8–9.4 s at 100,000, measured): polled
    // every interval, it would keep the engine busy however few schedules there are.
    const proxy = await startWireProxy(inject('mongoUri'));
    try {
      // The due queries (the events relay also reads subscriptions, by _id, after each change), and
      // the polls themselves, each of which reads the clock first: counted on the wire.
      const dueQuery = ({ body }: { body: { filter?: object } }) => JSON.stringify(body.filter ?? {}).includes('nextScheduledAt');
      const reads = proxy.on({ command: 'find', collection: 'subscriptions', match: dueQuery }, { action: 'hold', ms: 0 });
      const clockReads = proxy.on({ command: 'find', collection: 'scheduleClock' }, { action: 'hold', ms: 0 });
      const polls = async (n: number) => {
        const from = clockReads.hits;
        await waitFor(
          async () => clockReads.hits,
          (hits) => hits >= from + n,
          20_000,
          20,
          `${n} polls`,
        );
      };
      const t = await service({ workers: 1, schedulePollMs: 100, serverUri: proxy.uri('') });
      const { merchantId, apiKey } = await t.merchant();
      const [id] = await t.seed(merchantId, 1);
      // The first poll reads the subscriptions whatever the clock says; then the clock settles.
      await waitFor(
        async () => reads.hits,
        (n) => n >= 1,
        20_000,
        20,
        "the first poll's full read",
      );
      await polls(2);
      const idle = reads.hits;
      // Far enough ahead that the idle polls below end before it on a loaded machine.
      const resumeAt = inMs(5000);
      expect((await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey, json: { resumeAt } })).status).toBe(200);
      await polls(10);
      expect(Date.now(), 'the idle polls ended before resumeAt').toBeLessThan(Date.parse(resumeAt));
      expect(reads.hits - idle, 'due queries during 10 idle polls').toBe(0);
      const resumed = await waitFor(
        () => call(t.baseUrl, `/v2/subscriptions/${id}`, { apiKey, method: 'GET' }),
        (r) => r.body.status === 'fulfilled',
        20_000,
        200,
      );
      expect(resumed.body.schedule).toBeUndefined();
      await polls(3); // the poll that resumed it then reads what is left, and settles the clock
      const whenDue = reads.hits;
      expect(whenDue).toBeGreaterThan(idle);
      await polls(15);
      expect(reads.hits, 'due queries in the 15 idle polls after the resume').toBe(whenDue);
    } finally {
      await proxy.close();
    }
  });
});
