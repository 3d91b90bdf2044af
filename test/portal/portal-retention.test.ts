/**
 * Portal links past their expiry (docs/api.md "Customer portal"): listed for 30 days after they
 * expire, then removed, by a TTL index where the server has them and by the retention sweep
 * where it has none (docs/design.md §8). The sweep is driven with the time it would run at.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { cannotHoldWithout } from '../support/workarounds.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 0 });
});
afterAll(async () => {
  await t?.close();
});

const DAY = 24 * 3600_000;
const { api } = httpOf(() => t);

async function linkFor(apiKey: string, subscriptionId: string, expiresInMinutes: number): Promise<{ id: string; expiresAt: string }> {
  const made = await api(apiKey, 'POST', `/v2/subscriptions/${subscriptionId}/portal-links`, { expiresInMinutes });
  expect(made.status).toBe(201);
  return made.body;
}

async function listedIds(apiKey: string): Promise<string[]> {
  const page = await api(apiKey, 'GET', '/v2/portal-links');
  expect(page.status).toBe(200);
  return page.body.data.map((link: { id: string }) => link.id);
}

describe('portal links past their expiry', () => {
  it('an expired link is listed for 30 days after it expires, then removed: its id answers 404 0027', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [subscriptionId] = await t.seed(merchantId, 1);
    const expiring = await linkFor(apiKey, subscriptionId!, 1);
    const lasting = await linkFor(apiKey, subscriptionId!, 10080);
    const expiredAt = Date.parse(expiring.expiresAt);

    await t.service.portalLinks.deleteExpired(new Date(expiredAt + 30 * DAY - 1000));
    expect(await listedIds(apiKey)).toEqual([expiring.id, lasting.id]);

    expect(await t.service.portalLinks.deleteExpired(new Date(expiredAt + 30 * DAY + 1000))).toBeGreaterThanOrEqual(1);
    expect(await listedIds(apiKey)).toEqual([lasting.id]);
    const revoked = await api(apiKey, 'DELETE', `/v2/portal-links/${expiring.id}`);
    expect([revoked.status, revoked.body.code]).toEqual([404, '0027']);
  });

  const test = 'where the server has no TTL index, the retention sweep removes them; where it has, a TTL index on removeAt does';
  it.skipIf(cannotHoldWithout('expirySweeps', test))(test, async () => {
    const links = t.db.collection('portalLinks');
    const sweeper = t.service.retention;
    if (!sweeper) {
      console.log('the server has TTL indexes: checked that portalLinks has one, with no sweep of ours (docs/design.md §8)');
      const ttl = (await links.indexes()).find((index) => index.expireAfterSeconds !== undefined);
      expect([ttl?.key, ttl?.expireAfterSeconds]).toEqual([{ removeAt: 1 }, 0]);
      return;
    }
    const { merchantId, apiKey } = await t.merchant();
    const [subscriptionId] = await t.seed(merchantId, 1);
    const [removed, kept] = [await linkFor(apiKey, subscriptionId!, 1), await linkFor(apiKey, subscriptionId!, 1)];
    // The sweep runs at the real time: the first link is made 30 days older than it is.
    await links.updateOne({ _id: removed.id as never }, { $set: { removeAt: new Date(Date.now() - 1000) } });
    await sweeper.sweep();
    expect(await listedIds(apiKey)).toEqual([kept.id]);
  });
});
