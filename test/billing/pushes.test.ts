/**
 * The service → Stripe (docs/billing.md "What goes to Stripe"): every applied pause and resume of a
 * subscription with a Stripe `externalId`, whatever caused it, reaches stripe-mock (behind the
 * recorder) as `POST /v1/subscriptions/{externalId}` with `pause_collection`, the event's id as its
 * `Idempotency-Key`, in the order of the changes; 429, 5xx and an unreachable Stripe are retried.
 * Subscriptions get their `externalId` as fixtures, in the database, as an import would set it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { STRIPE_API_VERSION } from '../../src/billing/stripe.client.js';
import { testModeIdOf } from '../../src/merchants/livemode.js';
import { connectedToStripe } from '../support/billing.js';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { startStripeMock, stripeMockBuilt, type StripeCall, type StripeMock } from '../support/stripe-mock.js';
import { waitFor } from '../support/wait.js';

describe.skipIf(!stripeMockBuilt())('pushes to Stripe', () => {
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

  const api = (apiKey: string, method: string, path: string, json?: unknown) => call(t.baseUrl, path, { method, apiKey, json });

  const connected = (count: number, pauseBehavior?: string) => connectedToStripe(t, count, pauseBehavior);

  const callsTo = (externalId: string): StripeCall[] => stripe.calls.filter((c) => c.path === `/v1/subscriptions/${externalId}`);
  const answered = (externalId: string) => callsTo(externalId).filter((c) => c.status === 200);
  const arrived = (externalId: string, n: number) =>
    waitFor(
      async () => answered(externalId),
      (calls) => calls.length >= n,
      60_000,
      100,
      `${n} answered calls for ${externalId}`,
    );
  const syncOf = async (apiKey: string, id: string) => (await api(apiKey, 'GET', `/v2/subscriptions/${id}`)).body.billingSync;
  const syncState = (apiKey: string, id: string, state: string) =>
    waitFor(
      () => syncOf(apiKey, id),
      (sync) => sync?.state === state,
      60_000,
      100,
      `billingSync ${state}`,
    );
  const eventIds = async (apiKey: string, subscriptionId: string): Promise<string[]> => {
    const list = await api(apiKey, 'GET', `/v2/events?subscriptionId=${subscriptionId}&limit=100`);
    return (list.body.data as { id: string; type: string; createdAt: string }[])
      .filter((e) => e.type === 'subscription.paused' || e.type === 'subscription.resumed')
      .sort((a, b) => a.id.localeCompare(b.id))
      .map((e) => e.id);
  };

  it('a pause sends pause_collection[behavior]=void and a resume clears it, each keyed by its event id, with the pinned Stripe-Version', async () => {
    const { apiKey, ids, externalIds } = await connected(1);
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${ids[0]}/pause`)).status).toBe(200);
    const [paused] = await arrived(externalIds[0]!, 1);
    expect(paused!.method).toBe('POST');
    expect(Object.fromEntries(paused!.form)).toEqual({ 'pause_collection[behavior]': 'void' });
    expect(paused!.headers['stripe-version']).toBe(STRIPE_API_VERSION);

    expect((await api(apiKey, 'POST', `/v2/subscriptions/${ids[0]}/resume`)).status).toBe(200);
    const [, resumed] = await arrived(externalIds[0]!, 2);
    expect(Object.fromEntries(resumed!.form)).toEqual({ pause_collection: '' });
    expect([paused!.headers['idempotency-key'], resumed!.headers['idempotency-key']]).toEqual(await eventIds(apiKey, ids[0]!));
    expect(await syncState(apiKey, ids[0]!, 'synced')).toEqual({ system: 'stripe', state: 'synced', syncedAt: expect.any(String) });
  });

  it('a pause with a scheduled resume sends resumes_at, with the connection pauseBehavior', async () => {
    const { apiKey, ids, externalIds } = await connected(1, 'keep_as_draft');
    const resumeAt = new Date(Date.now() + 7 * 24 * 3600_000).toISOString();
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${ids[0]}/pause`, { resumeAt })).status).toBe(200);
    const [paused] = await arrived(externalIds[0]!, 1);
    expect(Object.fromEntries(paused!.form)).toEqual({
      'pause_collection[behavior]': 'keep_as_draft',
      'pause_collection[resumes_at]': String(Math.floor(Date.parse(resumeAt) / 1000)),
    });
  });

  it('changes in quick succession arrive in their order; a subscription without externalId or a merchant without a connection sends nothing', async () => {
    const { apiKey, merchantId, ids, externalIds } = await connected(2);
    await t.db.collection('subscriptions').updateOne({ _id: ids[1], merchantId } as never, { $unset: { externalId: '' } });
    const other = await t.merchant();
    const [unconnected] = await t.seed(testModeIdOf(other.merchantId), 1);
    await t.db.collection('subscriptions').updateOne({ _id: unconnected } as never, { $set: { externalId: 'sub_unconnected' } });
    await api(other.testApiKey, 'POST', `/v2/subscriptions/${unconnected}/pause`);
    await api(apiKey, 'POST', `/v2/subscriptions/${ids[1]}/pause`);
    for (const step of ['pause', 'resume', 'pause', 'resume']) await api(apiKey, 'POST', `/v2/subscriptions/${ids[0]}/${step}`);
    const calls = await arrived(externalIds[0]!, 4);
    expect(calls.map((c) => c.form.get('pause_collection[behavior]') ?? c.form.get('pause_collection'))).toEqual(['void', '', 'void', '']);
    expect(calls.map((c) => c.headers['idempotency-key'])).toEqual(await eventIds(apiKey, ids[0]!));
    expect(callsTo('sub_unconnected')).toEqual([]);
    expect(callsTo(externalIds[1]!)).toEqual([]);
  });

  it('a 429, a 500 and an unreachable Stripe are retried with the same Idempotency-Key until Stripe answers', async () => {
    const { apiKey, ids, externalIds } = await connected(1);
    stripe.answers.push(429, 500);
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${ids[0]}/pause`)).status).toBe(200);
    await arrived(externalIds[0]!, 1);
    const calls = callsTo(externalIds[0]!);
    expect(calls.map((c) => c.status)).toEqual([429, 500, 200]);
    expect(new Set(calls.map((c) => c.headers['idempotency-key'])).size).toBe(1);
  });

  it('a 4xx other than 429 fails the push with Stripe message, is not retried, sends subscription.billing_sync_failed and counts in subsvc_billing_pushes_total', async () => {
    const { apiKey, ids, externalIds } = await connected(1);
    stripe.answers.push(404);
    await api(apiKey, 'POST', `/v2/subscriptions/${ids[0]}/pause`);
    const failedSync = { system: 'stripe', state: 'failed', syncedAt: null, error: 'recorder answered 404' };
    expect(await syncState(apiKey, ids[0]!, 'failed')).toEqual(failedSync);
    const [failedEvent] = await waitFor(
      async () => (await api(apiKey, 'GET', `/v2/events?subscriptionId=${ids[0]}&type=subscription.billing_sync_failed`)).body.data,
      (events: { data: unknown }[]) => events.length === 1,
    );
    expect(failedEvent!.data).toMatchObject({
      subscription: { id: ids[0], status: 'paused', billingSync: failedSync },
      cause: { kind: 'billing', system: 'stripe' },
      failedEventId: (await eventIds(apiKey, ids[0]!))[0],
    });
    await api(apiKey, 'POST', `/v2/subscriptions/${ids[0]}/resume`);
    const [resumed] = await arrived(externalIds[0]!, 1);
    expect(resumed!.form.get('pause_collection')).toBe('');
    expect(await syncState(apiKey, ids[0]!, 'synced')).not.toHaveProperty('error');
    expect(callsTo(externalIds[0]!).map((c) => c.status)).toEqual([404, 200]);
    const scrape = await (await fetch(`${t.baseUrl}/metrics`)).text();
    expect(scrape).toMatch(/^subsvc_billing_pushes_total\{outcome="failed"\} [1-9]/m);
  });

  it('a key Stripe refuses fails the push, and the key Stripe quotes back in its message is not logged', async () => {
    // stripe-mock refuses live keys with a 401 that quotes the whole Authorization header.
    const { apiKey, merchantId } = await t.merchant();
    const key = `sk_live_${randomBytes(12).toString('hex')}`;
    await api(apiKey, 'PUT', '/v2/billing-connections/stripe', { apiKey: key, webhookSecret: `whsec_${randomBytes(16).toString('hex')}` });
    const [id] = await t.seed(merchantId, 1);
    await t.db.collection('subscriptions').updateOne({ _id: id, merchantId } as never, { $set: { externalId: 'sub_livekey' } });
    await api(apiKey, 'POST', `/v2/subscriptions/${id}/pause`);
    const [failed] = await waitFor(
      async () => t.logLines.filter((l) => l.msg === 'billing push failed' && l.subscriptionId === id),
      (lines) => lines.length === 1,
    );
    expect(callsTo('sub_livekey')[0]!.response).toContain(key);
    expect(failed!.error).toContain(key.slice(-4));
    expect(JSON.stringify(t.logLines)).not.toContain(key);
  });

  it('while Stripe is unreachable a pushed subscription shows billingSync pending, then synced once Stripe is back; one never pushed shows none', async () => {
    const { apiKey, ids } = await connected(2);
    await stripe.stop();
    try {
      await api(apiKey, 'POST', `/v2/subscriptions/${ids[0]}/pause`);
      expect(await syncState(apiKey, ids[0]!, 'pending')).toEqual({ system: 'stripe', state: 'pending', syncedAt: null });
    } finally {
      await stripe.start();
    }
    await syncState(apiKey, ids[0]!, 'synced');
    const list = await api(apiKey, 'GET', '/v2/subscriptions?limit=100');
    const shown = new Map((list.body.data as { id: string; billingSync?: unknown }[]).map((s) => [s.id, s.billingSync]));
    expect(shown.get(ids[0]!)).toMatchObject({ state: 'synced' });
    expect(shown.get(ids[1]!)).toBeUndefined();
  });
});
