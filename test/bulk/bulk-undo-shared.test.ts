/**
 * An undo's chunk in a shared run (src/bulk/bulk.run.ts, docs/design.md §6): queued beside another
 * request of the same merchant and operation naming the same subscriptions, it is taken into the
 * same run, yet never applied together with it: its commands keep their own condition, so a
 * subscription changed after the undo was accepted is skipped (`changed_since`), whichever of the
 * two the run applies first. Queued while no worker runs, so that the worker finds both waiting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

const SUBSCRIPTIONS = 20;
/**
 * Resumes queued after the undo, naming the same subscriptions: Agenda locks two jobs per worker
 * slot ahead of running them (src/bulk/bulk.queue.ts), so the undo's run finds the others waiting.
 */
const BESIDE = 3;
let http: TestService;
beforeAll(async () => {
  http = await startTestService({ workers: 0, rateLimitPerSecond: 0 });
});
afterAll(() => http?.close());

const { api, completed } = httpOf(() => http);
const queuedJobs = () => http.db.collection('bulkJobs').countDocuments({ nextRunAt: { $ne: null } });

interface Item {
  readonly subscriptionId: string;
  readonly outcome: string;
  readonly reason?: string | null;
}

describe('an undo queued beside another request naming the same subscriptions', () => {
  it(
    'shares the run but skips, as changed_since, every subscription changed after the undo was accepted',
    { timeout: 300_000 },
    async () => {
      const { merchantId, apiKey } = await http.merchant();
      const ids = await http.seed(merchantId, SUBSCRIPTIONS);
      const original = await api(apiKey, 'POST', '/v2/subscriptions/bulk/pause', { subscriptions: ids });
      expect(original.status).toBe(202);
      const first = await startTestService({ workers: 1, databaseName: http.db.databaseName });
      try {
        await completed(apiKey, original.body.requestId, 120_000);
      } finally {
        await first.close();
      }

      const undo = await api(apiKey, 'POST', `/v2/bulk-requests/${original.body.requestId}/undo`);
      expect(undo).toMatchObject({ status: 202, body: { operation: 'RESUME', acceptedCount: SUBSCRIPTIONS } });
      // Changed after the undo was accepted: still paused, with a schedule of their own and a later modifiedAt.
      const changed = ids.filter((_, i) => i % 2 === 0);
      const resumeAt = new Date(Date.now() + 30 * 86_400_000).toISOString().replace('Z', '000Z');
      for (const id of changed) expect((await api(apiKey, 'POST', `/v2/subscriptions/${id}/pause`, { resumeAt })).status).toBe(200);
      const beside: string[] = [];
      for (let i = 0; i < BESIDE; i++) {
        const resume = await api(apiKey, 'POST', '/v2/subscriptions/bulk/resume', { subscriptions: ids });
        expect(resume.status).toBe(202);
        beside.push(resume.body.requestId);
      }
      expect(await waitFor(queuedJobs, (n) => n === BESIDE + 1, 60_000, 100, 'every job queued')).toBe(BESIDE + 1);

      const worker = await startTestService({ workers: 1, databaseName: http.db.databaseName });
      try {
        for (const requestId of [undo.body.requestId, ...beside]) await completed(apiKey, requestId, 120_000);
      } finally {
        await worker.close();
      }

      const shared = worker.logLines.filter((l) => l['msg'] === 'bulk chunks applied together');
      const requestsOf = (line: Record<string, unknown>) =>
        [line['chunkId'] as string, ...(line['companions'] as string[])].map((chunkId) => chunkId.split(':')[0]);
      // The case under test: the undo and another request in one run (else each was applied on its own, which proves nothing here).
      const runs = shared.map(requestsOf);
      expect(
        runs.some((run) => run.includes(undo.body.requestId) && run.some((r) => beside.includes(r!))),
        JSON.stringify(runs),
      ).toBe(true);
      const items = await api(apiKey, 'GET', `/v2/bulk-requests/${undo.body.requestId}/items?limit=100`);
      const outcomes = new Map((items.body.data as Item[]).map((item) => [item.subscriptionId, item]));
      for (const id of changed) {
        expect(outcomes.get(id), `subscription ${id}`).toMatchObject({ outcome: 'skipped', reason: 'changed_since' });
      }
    },
  );
});
