/**
 * The backfill (docs/billing.md "Backfill"): POST /v2/billing-connections/stripe/sync reads every
 * Stripe subscription from stripe-mock (behind the recorder), `GET /v1/subscriptions?status=all`,
 * into a subscription import that creates each by its Stripe id; without a connection, 404 0120.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { planIdOfPrice } from '../../src/billing/stripe-events.service.js';
import { connectedToStripe } from '../support/billing.js';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { startStripeMock, stripeMockBuilt, type StripeMock } from '../support/stripe-mock.js';
import { waitFor } from '../support/wait.js';

describe.skipIf(!stripeMockBuilt())('the backfill from Stripe', () => {
  let t: TestService;
  let stripe: StripeMock;
  beforeAll(async () => {
    stripe = await startStripeMock();
    t = await startTestService({ workers: 1, secretsKey: randomBytes(32).toString('base64'), stripeApiBase: stripe.base });
  });
  afterAll(async () => {
    await t?.close();
    await stripe?.close();
  });
  afterEach(() => {
    expect(stripe.invalid(), 'calls stripe-mock refused as not matching Stripe spec').toEqual([]);
  });

  const api = (apiKey: string, method: string, path: string) => call(t.baseUrl, path, { method, apiKey });
  const completedImport = (apiKey: string, id: string) =>
    waitFor(
      () => api(apiKey, 'GET', `/v2/subscription-imports/${id}`),
      (r) => r.body.state === 'completed',
      60_000,
      100,
      'the backfill import completed',
    );
  /** Stripe's list calls so far, oldest first. */
  const listCalls = () => stripe.calls.filter((s) => s.method === 'GET' && s.path.startsWith('/v1/subscriptions?'));

  it('answers 202 with an import fed from every page of Stripe subscriptions, which creates each by its Stripe id', async () => {
    const c = await connectedToStripe(t, 0);
    const reply = await api(c.apiKey, 'POST', '/v2/billing-connections/stripe/sync');
    expect(reply.status).toBe(202);
    expect(reply.body).toEqual({ id: expect.any(String), state: 'queued', createdAt: expect.any(String), livemode: false });
    expect(reply.headers.get('location')).toBe(`/v2/subscription-imports/${reply.body.id}`);
    const listed = listCalls();
    expect(listed.map((s) => new URLSearchParams(s.path.split('?')[1]).get('status'))).toContain('all');
    // stripe-mock answers one page of one subscription: its fixture.
    const [stripeSub] = JSON.parse(listed.at(-1)!.response).data as { id: string; items: { data: { price: { id: string } }[] } }[];

    const done = await completedImport(c.apiKey, reply.body.id);
    expect(done.body).toMatchObject({ rowCount: 1, createdCount: 1, rejectedCount: 0 });
    const [mirrored] = (await api(c.apiKey, 'GET', `/v2/subscriptions?externalId=${stripeSub!.id}`)).body.data;
    const priceId = stripeSub!.items.data[0]!.price.id;
    expect(mirrored).toMatchObject({ externalId: stripeSub!.id, planId: planIdOfPrice(priceId), metadata: { stripePriceId: priceId } });
    expect((await api(c.apiKey, 'GET', '/v2/billing-connections/stripe')).body.lastSyncAt).toEqual(expect.any(String));
  });

  it("follows Stripe's pages: each list call starts after the last subscription of the page before, until has_more is false", async () => {
    const c = await connectedToStripe(t, 0);
    stripe.subscriptionPages = { pages: 3, perPage: 2 };
    try {
      const reply = await api(c.apiKey, 'POST', '/v2/billing-connections/stripe/sync');
      expect(reply.status).toBe(202);
      const done = await completedImport(c.apiKey, reply.body.id);
      expect(done.body).toMatchObject({ rowCount: 6, createdCount: 6, rejectedCount: 0 });
      const listed = listCalls().slice(-3);
      expect(listed.map((s) => new URLSearchParams(s.path.split('?')[1]).get('starting_after'))).toEqual([
        null,
        'sub_page0x1',
        'sub_page1x1',
      ]);
      const page = (await api(c.apiKey, 'GET', '/v2/subscriptions?limit=100')).body.data as { externalId: string }[];
      expect(page.map((s) => s.externalId).sort()).toEqual(['0x0', '0x1', '1x0', '1x1', '2x0', '2x1'].map((n) => `sub_page${n}`));
    } finally {
      stripe.subscriptionPages = undefined;
    }
  });

  it('when Stripe refuses a later page, answers 409 0038 with its message and imports nothing', async () => {
    const c = await connectedToStripe(t, 0);
    stripe.subscriptionPages = { pages: 3, perPage: 2, refused: 1 };
    try {
      const answered = await api(c.apiKey, 'POST', '/v2/billing-connections/stripe/sync');
      expect([answered.status, answered.body.code]).toEqual([409, '0038']);
      expect(answered.body.detail).toContain('recorder answered 401');
      const listed = listCalls().slice(-2);
      expect(listed.map((s) => s.status)).toEqual([200, 401]);
      // The first page's two subscriptions were read, and not imported.
      expect(await t.db.collection('subscriptions').countDocuments({ merchantId: c.merchantId })).toBe(0);
      expect(await t.db.collection('subscriptionImports').countDocuments({ merchantId: c.merchantId })).toBe(0);
    } finally {
      stripe.subscriptionPages = undefined;
    }
  });

  it('when Stripe refuses the read (a revoked key), answers 409 0038 with its message and imports nothing', async () => {
    const c = await connectedToStripe(t, 0);
    stripe.answers.push(401);
    const reply = await api(c.apiKey, 'POST', '/v2/billing-connections/stripe/sync');
    expect([reply.status, reply.body.code]).toEqual([409, '0038']);
    expect(reply.body.detail).toContain('recorder answered 401');
    expect(await t.db.collection('subscriptionImports').countDocuments({ merchantId: c.merchantId })).toBe(0);
    expect((await api(c.apiKey, 'GET', '/v2/billing-connections/stripe')).body.lastSyncAt).toBeNull();
  });

  it('without a connection answers 404 0120 and calls Stripe not at all', async () => {
    const { testApiKey } = await t.merchant();
    const before = stripe.calls.length;
    const reply = await api(testApiKey, 'POST', '/v2/billing-connections/stripe/sync');
    expect([reply.status, reply.body.code]).toEqual([404, '0120']);
    expect(stripe.calls.length).toBe(before);
  });
});
