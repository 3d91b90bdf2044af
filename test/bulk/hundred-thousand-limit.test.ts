/**
 * The 100,000 limit of what one request changes (docs/design.md §6a): a merchant with 100,001
 * fulfilled subscriptions of one plan, and 5 cancelled ones that nothing covers. A bulk request by
 * filter, its dry run and its preview are refused with 400 0046, and so is a hold over the store;
 * nothing is stored. One seeding serves both, on a server of its own (test/support/own-server.ts):
 * it is most of the file's time.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkRequestsOf } from '../support/bulk.js';
import { call, httpOf } from '../support/http.js';
import { serviceOnOwnServer } from '../support/own-server.js';
import type { TestService } from '../support/service.js';

let t: TestService;
let merchant: { merchantId: string; apiKey: string };
let firstId: string;
const plan = randomUUID();

beforeAll(async () => {
  // The background reads' bound is raised: on an engine that scans (FerretDB), the read of 100,001
  // matches on a loaded machine can outlast the service's default, and the verdict here is the
  // refusal, not the machine's speed.
  t = await serviceOnOwnServer({ workers: 2, rateLimitPerSecond: 0, bulkDbTimeoutMs: 300_000 });
  merchant = await t.merchant();
  const started = performance.now();
  for (let seeded = 0; seeded < 100_001; seeded += 10_000) {
    const count = Math.min(10_000, 100_001 - seeded);
    const ids = await t.service.seeder.seed({ merchantId: merchant.merchantId, count, status: 'fulfilled', planId: plan });
    firstId ??= ids[0]!.id;
  }
  await t.service.seeder.seed({ merchantId: merchant.merchantId, count: 5, status: 'cancelled', planId: plan });
  console.log(`hundred-thousand-limit: 100,006 subscriptions seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}, 600_000);
afterAll(() => t?.close());

const { api } = httpOf(() => t);

describe('more than 100,000 subscriptions in one request', () => {
  it('a bulk request by filter, its dry run and its preview are refused with 400 0046 saying more than 100,000, and nothing is stored', async () => {
    // At once: each reads the matches up to one past the limit, and counts no further.
    const filter = { planId: [plan] };
    const timedAt = performance.now();
    const answers = await Promise.all([
      api(merchant.apiKey, 'POST', '/v2/subscriptions/bulk/pause', { filter }),
      api(merchant.apiKey, 'POST', '/v2/subscriptions/bulk/pause', { filter, dryRun: true }),
      call(t.baseUrl, '/v2/subscriptions/bulk/pause/preview', { apiKey: merchant.apiKey, json: { filter } }),
    ]);
    console.log(
      `hundred-thousand-limit: the filter refused, with its dry run and preview at once, in ${((performance.now() - timedAt) / 1000).toFixed(1)} s`,
    );
    const detail = 'The filter matches more than 100,000 subscriptions; a bulk request takes at most 100,000. Narrow the filter.';
    for (const answer of answers)
      expect({ status: answer.status, code: answer.body.code, detail: answer.body.detail }).toEqual({ status: 400, code: '0046', detail });
    expect(await bulkRequestsOf(t.db, merchant.merchantId)).toBe(0);
  }, 600_000);

  it('a hold over the store is refused with 400 0046 saying more than 100,000, and nothing is stored', async () => {
    const timedAt = performance.now();
    const res = await api(merchant.apiKey, 'POST', '/v2/holds', { reason: 'Stock-out' });
    console.log(`hundred-thousand-limit: the hold refused in ${((performance.now() - timedAt) / 1000).toFixed(1)} s`);
    expect([res.status, res.body.code]).toEqual([400, '0046']);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body.detail).toBe(
      'The hold would cover more than 100,000 subscriptions; a hold takes at most 100,000. Pause by filter in parts instead.',
    );
    expect((await api(merchant.apiKey, 'GET', '/v2/holds')).body.data).toEqual([]);
    expect(await bulkRequestsOf(t.db, merchant.merchantId)).toBe(0);
    const first = (await api(merchant.apiKey, 'GET', `/v2/subscriptions/${firstId}`)).body;
    expect(first.status).toBe('fulfilled');
    expect(first).not.toHaveProperty('holdIds');
  }, 600_000);
});
