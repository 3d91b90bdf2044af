/**
 * Database faults at chosen moments of a bulk request or an Idempotency-Key request, reproduced
 * through a wire proxy between the service and the real database (test/support/wire-proxy.ts):
 * an answer of 503 means nothing was done, and a success is not turned into an error.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { bulkRequestsOf } from '../support/bulk.js';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { startWireProxy, type WireProxy } from '../support/wire-proxy.js';

let proxy: WireProxy;
let t: TestService;
beforeAll(async () => {
  proxy = await startWireProxy(inject('mongoUri'));
  t = await startTestService({ serverUri: proxy.uri('unused'), workers: 2 });
});
afterAll(async () => {
  await t?.close();
  await proxy?.close();
});

const statuses = async (ids: string[]) =>
  (
    await t.db
      .collection('subscriptions')
      .find({ _id: { $in: ids as never[] } })
      .toArray()
  ).map((d) => d.status);
/**
 * After a 503 nothing is left to apply, with no waiting: the service takes the request back before
 * it answers (src/bulk/bulk.service.ts), only a stored request is ever dispatched (after a 202, or
 * by the workers' sweep of stored undispatched ones), so a request counted as absent at the answer
 * can never be applied later.
 */

describe('a bulk request cut off by the database', () => {
  it.each([1, 6])(
    'is stored whole or not at all when its %ith write is cut: 503 0910 and nothing applied, or 202 and everything applied',
    async (nth) => {
      const { merchantId, apiKey } = await t.merchant();
      const ids = await t.seed(merchantId, 1000);
      let writes = 0;
      const rule = proxy.on(
        { command: 'insert', match: (c) => c.collection !== 'idempotencyKeys' && ++writes === nth },
        { action: 'cut', times: 1 },
      );
      const res = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { apiKey, json: { subscriptions: ids } });
      if (res.status === 503) {
        expect(res.body.code).toBe('0910');
        expect(await bulkRequestsOf(t.db, merchantId)).toBe(0);
        expect(new Set(await statuses(ids))).toEqual(new Set(['fulfilled']));
      } else {
        // The cut fell after the acceptance (on the dispatch that follows the 202): the sweep dispatches again.
        expect(res.status).toBe(202);
        expect(res.body.acceptedCount).toBe(1000);
        const paused = () => t.db.collection('subscriptions').countDocuments({ _id: { $in: ids as never[] }, status: 'paused' });
        expect(await waitFor(paused, (n) => n === 1000, 60_000, 500)).toBe(1000);
        // The cut insert may come after the last change (a finished note, an event the relay inserts
        // once the chunks are done): waited for, as the request's own work has been (a clean-clone CI
        // run checked it the moment the last subscription was paused, before its 6th insert).
        await waitFor(
          async () => rule.hits,
          (n) => n === 1,
          30_000,
          100,
          'the 6th insert cut',
        );
      }
      expect(rule.hits).toBe(1);
    },
  );

  it('whose insert is stored but its answer lost answers 503 0910, takes the request back, and applies nothing', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const ids = await t.seed(merchantId, 3);
    const rule = proxy.on({ command: 'insert', collection: 'bulkRequests' }, { action: 'cut', at: 'reply', times: 1 });
    const res = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { apiKey, json: { subscriptions: ids } });
    expect(rule.hits).toBe(1);
    expect(res.status).toBe(503);
    expect(await bulkRequestsOf(t.db, merchantId)).toBe(0);
    expect(await statuses(ids)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
  });
});

describe('Idempotency-Key when storing the answer fails', () => {
  it('a pause whose key-completion write is cut still answers 200, and the subscription is paused', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const rule = proxy.on({ command: 'update', collection: 'idempotencyKeys' }, { action: 'cut', times: 1 });
    const res = await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey, headers: { 'idempotency-key': 'completion-cut-1' } });
    expect(rule.hits).toBe(1);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('paused');
    expect(await statuses([id!])).toEqual(['paused']);
  });
});
