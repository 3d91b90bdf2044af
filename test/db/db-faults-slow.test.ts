/**
 * A database that is up but slow is not a database that is down (docs/reliability.md, "Slow is
 * not unreachable"). On the embedded FerretDB every write of a database goes through one SQLite
 * writer; background writes that follow one another keep taking it, and a request's write that
 * waits for it (SQLite's busy handler polls every 100 ms) was measured waiting 1.5-3.7 s, past
 * DB_TIMEOUT_MS, with the database answering every ping. Those requests used to answer 503 0910.
 * Here real background writes (updateMany through the background client, as the bulk workers and
 * the events relay write) keep the writer busy while requests change subscriptions, until some of
 * them have waited longer than DB_TIMEOUT_MS: each must answer 200, and /readyz 200 meanwhile.
 * That a hung or refusing database still answers 503 within its bound is db-faults.test.ts.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ONE_WRITER_REQUEST_POOL } from '../../src/db/workarounds.js';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

const DB_TIMEOUT_MS = 1_500;
/** Requests at once: more than the request pool's connections on FerretDB, so some wait for a connection too. */
const CONCURRENT = ONE_WRITER_REQUEST_POOL + 4;
/** Requests that must have waited past DB_TIMEOUT_MS before the test has seen what it is about. */
const SLOW_WANTED = 3;
/** How long the background writes may run before the test gives up on seeing slow requests. */
const GIVE_UP_MS = 90_000;
const FILLERS = 3;
const FILLER_DOCS = 2_000;

const oneWriter = !inject('dbCapabilities').parallelWriters;
let t: TestService;
beforeAll(async () => {
  if (oneWriter) t = await startTestService({ dbTimeoutMs: DB_TIMEOUT_MS });
});
afterAll(async () => {
  await t?.close();
});

interface Answer {
  readonly status: number;
  readonly code: string | undefined;
  readonly ms: number;
}

describe('a database that is slow but up', () => {
  if (!oneWriter) {
    it.skip('needs a server with one writer (FerretDB) to make a write wait behind background writes', () => {});
    console.log(
      'db-faults-slow: skipped: this server writes in parallel, so background writes cannot hold a request write past DB_TIMEOUT_MS here',
    );
    return;
  }

  it(
    'with background writes holding the one writer, requests that wait past DB_TIMEOUT_MS answer 200, not 503',
    { timeout: GIVE_UP_MS + 60_000 },
    async () => {
      const { merchantId, apiKey } = await t.merchant();
      const ids = await t.seed(merchantId, CONCURRENT);
      for (let f = 0; f < FILLERS; f++) {
        const docs = Array.from({ length: FILLER_DOCS }, (_, i) => ({ _id: `filler-${i}`, n: 0, pad: 'x'.repeat(200) }));
        await t.db.collection<{ _id: string }>(`filler${f}`).insertMany(docs);
      }

      const answers: Answer[] = [];
      const slow = () => answers.filter((a) => a.ms > DB_TIMEOUT_MS).length;
      const deadline = Date.now() + GIVE_UP_MS;
      const enough = () => slow() >= SLOW_WANTED || Date.now() > deadline;
      // The background writes: whole-collection updates, one after another on each filler, as long as the requests go on.
      const background = Array.from({ length: FILLERS }, async (_, f) => {
        while (!enough()) await t.db.collection(`filler${f}`).updateMany({}, { $inc: { n: 1 } });
      });
      const requests = ids.map(async (id) => {
        for (let n = 0; !enough(); n++) {
          const started = Date.now();
          const res = await call(t.baseUrl, `/v2/subscriptions/${id}/${n % 2 === 0 ? 'pause' : 'resume'}`, { apiKey });
          answers.push({ status: res.status, code: (res.body as { code?: string }).code, ms: Date.now() - started });
        }
      });
      // And the process stays ready meanwhile: /readyz's ping waits behind the requests for a pooled connection.
      const readiness: number[] = [];
      const probes = (async () => {
        while (!enough()) {
          const res = await fetch(`${t.baseUrl}/readyz`);
          await res.arrayBuffer();
          readiness.push(res.status);
        }
      })();
      await Promise.all([...background, ...requests, probes]);

      const slowest = answers
        .map((a) => a.ms)
        .sort((a, b) => b - a)
        .slice(0, 5);
      console.log(
        `db-faults-slow: ${answers.length} requests, ${slow()} took longer than DB_TIMEOUT_MS (${DB_TIMEOUT_MS} ms); slowest ${slowest.join(', ')} ms`,
      );
      expect(slow(), `requests that waited past DB_TIMEOUT_MS within ${GIVE_UP_MS} ms of background writes`).toBeGreaterThanOrEqual(
        SLOW_WANTED,
      );
      expect(answers.filter((a) => a.status !== 200)).toEqual([]);
      expect(
        readiness.filter((status) => status !== 200),
        `of ${readiness.length} /readyz`,
      ).toEqual([]);
    },
  );
});
