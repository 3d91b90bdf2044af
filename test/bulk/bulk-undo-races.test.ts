/**
 * An undo racing single changes (issue 46 §2, docs/design.md §6): a subscription changed after the
 * undo was accepted but before its command is applied is left alone, and its item is skipped with
 * reason `changed_since`, so the merchant's later word is never overwritten by the undo. Real
 * concurrency through HTTP on the real database, several rounds, each with its own merchant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 2 });
});
afterAll(() => t?.close());

const ROUNDS = 4;
const SUBSCRIPTIONS = 40;
const { api, completed } = httpOf(() => t);
interface Item {
  readonly subscriptionId: string;
  readonly outcome: string;
  readonly reason?: string | null;
}
async function items(apiKey: string, requestId: string): Promise<Map<string, Item>> {
  const res = await api(apiKey, 'GET', `/v2/bulk-requests/${requestId}/items?limit=100`);
  expect(res.status).toBe(200);
  return new Map((res.body.data as Item[]).map((item) => [item.subscriptionId, item]));
}

describe('an undo racing single changes', () => {
  it.each(Array.from({ length: ROUNDS }, (_, round) => round + 1))(
    'round %i: a subscription paused again with a new resumeAt after the undo was accepted keeps it (skipped, changed_since)',
    async () => {
      const { merchantId, apiKey } = await t.merchant();
      const ids = await t.seed(merchantId, SUBSCRIPTIONS);
      const original = await api(apiKey, 'POST', '/v2/subscriptions/bulk/pause', { subscriptions: ids });
      expect(original.status).toBe(202);
      await completed(apiKey, original.body.requestId);
      const raced = ids.filter((_, i) => i % 2 === 0);
      const resumeAt = new Date(Date.now() + 30 * 86_400_000).toISOString().replace('Z', '000Z');

      const [accepted, ...changes] = await Promise.all([
        api(apiKey, 'POST', `/v2/bulk-requests/${original.body.requestId}/undo`),
        ...raced.map((id) => api(apiKey, 'POST', `/v2/subscriptions/${id}/pause`, { resumeAt })),
      ]);

      expect(accepted.status).toBe(202);
      for (const change of changes) expect(change.status).toBe(200);
      await completed(apiKey, accepted.body.requestId);
      const outcomes = await items(apiKey, accepted.body.requestId);
      const rejected = new Map((accepted.body.rejected as Item[]).map((r) => [r.subscriptionId, r.reason]));
      for (const id of raced) {
        const now = (await api(apiKey, 'GET', `/v2/subscriptions/${id}`)).body;
        // Whichever came first, the pause sent last is what stands: paused until resumeAt.
        expect(now, `subscription ${id}`).toMatchObject({ status: 'paused', schedule: { pauseAt: null, resumeAt } });
        const item = outcomes.get(id);
        if (item && item.outcome !== 'applied') expect(item).toMatchObject({ outcome: 'skipped', reason: 'changed_since' });
        if (!item) expect(rejected.get(id)).toBe('changed_since');
      }
      for (const id of ids.filter((id) => !raced.includes(id))) {
        expect(outcomes.get(id)).toMatchObject({ outcome: 'applied' });
        expect((await api(apiKey, 'GET', `/v2/subscriptions/${id}`)).body.status).toBe('fulfilled');
      }
    },
  );
});
