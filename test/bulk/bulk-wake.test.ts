/**
 * A process taking jobs takes the chunks it queues at once, not at Agenda's next poll, and takes
 * the next waiting chunk as each run ends (src/db/job-queue.ts, wakeOnWork). With a poll interval
 * of a minute, a request of two runs' worth of chunks and three more (three runs of up to
 * RUN_COMMANDS commands) completes well before the first poll after its acceptance: without the
 * wake-ups it waits for one poll per run (measured: not completed 30 s after its 202).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHUNK_SIZE } from '../../src/bulk/bulk.chunks.js';
import { RUN_COMMANDS } from '../../src/bulk/bulk.run.js';
import { call, httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

const POLL_MS = 60_000;
let t: TestService;
const { completed } = httpOf(() => t);
beforeAll(async () => {
  t = await startTestService({ workers: 1, bulkPollIntervalMs: POLL_MS, rateLimitPerSecond: 0 });
});
afterAll(async () => {
  await t.close();
});

describe('bulk chunks taken without waiting for a poll', () => {
  it(
    `a request needing three runs completes within the first poll interval (${POLL_MS / 1000} s) after its 202`,
    { timeout: 120_000 },
    async () => {
      const { merchantId, apiKey } = await t.merchant();
      const ids = await t.seed(merchantId, 2 * RUN_COMMANDS + 3 * CHUNK_SIZE);
      const accepted = Date.now();
      const res = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { apiKey, json: { subscriptions: ids } });
      expect(res.status).toBe(202);
      const location = res.headers.get('location')!;
      // Within half the poll interval: Agenda polled as the workers started, and polls next a minute after.
      const status = await completed(apiKey, location, POLL_MS / 2, 250);
      expect(status.body.counts).toMatchObject({ applied: ids.length });
      expect(Date.now() - accepted).toBeLessThan(POLL_MS);
      expect(await t.db.collection('subscriptions').countDocuments({ _id: { $in: ids as never[] }, status: 'paused' })).toBe(ids.length);
    },
  );
});
