/**
 * A chunk whose commands end differently: some change, some find their subscription already in the
 * target status (no-op), some change though their schedule kept them out of the chunk's first
 * update. The repository settles such a chunk with one read of the states after its
 * first update (src/subscriptions/bulk-commands.store.ts, settleMixed); each command must
 * still end with its own outcome, and each subscription as one command would leave it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, httpOf, type Reply } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

let t: TestService;
const { completed } = httpOf(() => t);
let merchantId: string;
let apiKey: string;
beforeAll(async () => {
  t = await startTestService({ workers: 1, rateLimitPerSecond: 0 });
  ({ merchantId, apiKey } = await t.merchant());
});
afterAll(async () => {
  await t.close();
});

const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();
const read = async (id: string) => (await call(t.baseUrl, `/v2/subscriptions/${id}`, { apiKey, method: 'GET' })).body;

async function bulk(
  operation: 'pause' | 'resume',
  ids: string[],
): Promise<{ counts: Record<string, number>; outcomes: Map<string, string> }> {
  const res = await call(t.baseUrl, `/v2/subscriptions/bulk/${operation}`, { apiKey, json: { subscriptions: ids } });
  expect(res.status).toBe(202);
  const location = res.headers.get('location')!;
  const done = await completed(apiKey, location, 60_000, 100);
  const page: Reply = await call(t.baseUrl, `${location}/items?limit=100`, { apiKey, method: 'GET' });
  return {
    counts: done.body.counts,
    outcomes: new Map(page.body.data.map((i: { subscriptionId: string; outcome: string }) => [i.subscriptionId, i.outcome])),
  };
}

describe('a bulk chunk of mixed outcomes', () => {
  it(
    'a resume: paused ones applied (with and without a scheduled resume, which is dropped), active ones no-ops',
    { timeout: 120_000 },
    async () => {
      const paused = await t.seed(merchantId, 3, 'paused');
      const scheduled = await t.seed(merchantId, 3);
      for (const id of scheduled)
        expect((await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey, json: { resumeAt: inMs(3_600_000) } })).status).toBe(200);
      const active = await t.seed(merchantId, 3);
      const { counts, outcomes } = await bulk('resume', [...active, ...scheduled, ...paused]);
      expect(counts).toMatchObject({ applied: 6, noop: 3, skipped: 0, failed: 0, pending: 0 });
      for (const id of [...paused, ...scheduled]) expect(outcomes.get(id)).toBe('applied');
      for (const id of active) expect(outcomes.get(id)).toBe('noop');
      for (const id of [...paused, ...scheduled, ...active]) expect(await read(id)).toMatchObject({ status: 'fulfilled' });
      for (const id of scheduled) expect((await read(id)).schedule?.resumeAt ?? null).toBeNull();
    },
  );

  it(
    'a pause: fulfilled ones applied (with and without a scheduled pause, which is dropped), paused ones no-ops; run again, every one a no-op',
    { timeout: 120_000 },
    async () => {
      const fulfilled = await t.seed(merchantId, 3);
      const scheduled = await t.seed(merchantId, 3);
      for (const id of scheduled)
        expect((await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey, json: { pauseAt: inMs(3_600_000) } })).status).toBe(200);
      const paused = await t.seed(merchantId, 3, 'paused');
      const ids = [...paused, ...scheduled, ...fulfilled];
      const first = await bulk('pause', ids);
      expect(first.counts).toMatchObject({ applied: 6, noop: 3, skipped: 0, failed: 0 });
      for (const id of [...fulfilled, ...scheduled]) expect(first.outcomes.get(id)).toBe('applied');
      for (const id of paused) expect(first.outcomes.get(id)).toBe('noop');
      for (const id of ids) expect(await read(id)).toMatchObject({ status: 'paused' });
      for (const id of scheduled) expect((await read(id)).schedule?.pauseAt ?? null).toBeNull();
      const again = await bulk('pause', ids);
      expect(again.counts).toMatchObject({ applied: 0, noop: 9 });
    },
  );
});
