/**
 * Stripe → the service (docs/billing.md "What comes from Stripe"): events signed with the
 * connection's webhook secret by the `stripe` package's own test helper, sent to the connection's
 * webhookUrl, create, update, pause, resume and cancel the subscription whose externalId is the
 * Stripe subscription's id; a bad signature or an unknown connection applies nothing; an event is
 * applied once, an older one does not overwrite a newer one, and Stripe's echo of a push changes
 * nothing. Pushes go to stripe-mock behind the recorder, which shows what was (not) sent back.
 */
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { planIdOfPrice } from '../../src/billing/stripe-events.service.js';
import { connectedToStripe, type Connected } from '../support/billing.js';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { startStripeMock, stripeMockBuilt, type StripeMock } from '../support/stripe-mock.js';
import { waitFor } from '../support/wait.js';

const now = () => Math.floor(Date.now() / 1000);

interface EventOptions {
  readonly type?: string;
  readonly status?: string;
  readonly paused?: boolean;
  readonly priceId?: string;
  readonly created?: number;
  readonly idempotencyKey?: string | null;
  readonly id?: string;
}

/** A Stripe event about subscription `stripeId`, as Stripe sends it (the fields the service reads, and some it does not). */
function stripeEvent(stripeId: string, options: EventOptions = {}) {
  return {
    id: options.id ?? `evt_${randomBytes(12).toString('hex')}`,
    object: 'event',
    api_version: '2026-11-18.endive',
    type: options.type ?? 'customer.subscription.updated',
    created: options.created ?? now(),
    livemode: false,
    pending_webhooks: 1,
    data: {
      object: {
        id: stripeId,
        object: 'subscription',
        customer: 'cus_RSy2tQ0v9LmK4d',
        status: options.status ?? 'active',
        pause_collection: options.paused ? { behavior: 'void', resumes_at: null } : null,
        items: { object: 'list', data: [{ id: 'si_RSy3kRp0Hm3VqT', price: { id: options.priceId ?? 'price_basic' } }] },
      },
    },
    request: { id: `req_${randomBytes(6).toString('hex')}`, idempotency_key: options.idempotencyKey ?? null },
  };
}

describe.skipIf(!stripeMockBuilt())('events from Stripe', () => {
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

  /** Sends the event signed with `secret` (by the stripe package's test helper), `signedAt` seconds. */
  const send = (c: Pick<Connected, 'connectionId' | 'webhookSecret'>, event: unknown, signedAt = now(), secret = c.webhookSecret) => {
    const payload = JSON.stringify(event);
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: signedAt });
    return call(t.baseUrl, `/connectors/stripe/${c.connectionId}/webhooks`, {
      headers: { 'content-type': 'application/json', 'stripe-signature': signature },
      rawBody: payload,
    });
  };

  const byExternalId = async (apiKey: string, externalId: string) =>
    (await api(apiKey, 'GET', `/v2/subscriptions?externalId=${externalId}`)).body.data[0];
  const eventsOf = async (apiKey: string, id: string) =>
    ((await api(apiKey, 'GET', `/v2/events?subscriptionId=${id}&limit=100`)).body.data as { id: string; type: string; data: any }[]).sort(
      (a, b) => a.id.localeCompare(b.id),
    );
  const callsTo = (externalId: string) => stripe.calls.filter((c) => c.path === `/v1/subscriptions/${externalId}`);

  it('a created event creates the subscription: externalId the Stripe id, planId from the price, the price id in metadata', async () => {
    const c = await connectedToStripe(t, 0);
    const stripeId = `sub_${randomBytes(8).toString('hex')}`;
    const event = stripeEvent(stripeId, { type: 'customer.subscription.created', priceId: 'price_gold' });
    const reply = await send(c, event);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ received: true, outcome: 'applied', livemode: false });
    const created = await byExternalId(c.apiKey, stripeId);
    expect(created).toMatchObject({ status: 'fulfilled', planId: planIdOfPrice('price_gold'), metadata: { stripePriceId: 'price_gold' } });
    const [first] = await waitFor(
      () => eventsOf(c.apiKey, created.id),
      (found) => found.length === 1,
    );
    expect(first!.type).toBe('subscription.created');
    expect(first!.data.cause).toEqual({ kind: 'billing', system: 'stripe', eventId: event.id });
  });

  it('a bad, missing or too old signature answers 400 0049 and an unknown connection 404 0120, each applying nothing', async () => {
    const c = await connectedToStripe(t, 0);
    const stripeId = `sub_${randomBytes(8).toString('hex')}`;
    const event = stripeEvent(stripeId, { type: 'customer.subscription.created' });
    const wrongSecret = await send(c, event, now(), `whsec_${randomBytes(16).toString('hex')}`);
    expect([wrongSecret.status, wrongSecret.body.code]).toEqual([400, '0049']);
    const tooOld = await send(c, event, now() - 400);
    expect([tooOld.status, tooOld.body.code]).toEqual([400, '0049']);
    const unsigned = await call(t.baseUrl, `/connectors/stripe/${c.connectionId}/webhooks`, { json: event });
    expect([unsigned.status, unsigned.body.code]).toEqual([400, '0049']);
    const unknown = await send({ ...c, connectionId: '0f3a6b1c-2d4e-4f50-8a6b-7c8d9e0f1a2b' }, event);
    expect([unknown.status, unknown.body.code]).toEqual([404, '0120']);
    expect(await byExternalId(c.apiKey, stripeId)).toBeUndefined();
  });

  it('pause_collection set in Stripe pauses with cause billing and cleared resumes; neither is sent back to Stripe', async () => {
    const c = await connectedToStripe(t, 1);
    const [id] = c.ids;
    const [stripeId] = c.externalIds;
    const paused = stripeEvent(stripeId!, { paused: true });
    expect((await send(c, paused)).body.outcome).toBe('applied');
    expect((await api(c.apiKey, 'GET', `/v2/subscriptions/${id}`)).body.status).toBe('paused');
    const resumed = stripeEvent(stripeId!, { paused: false, created: now() + 1 });
    expect((await send(c, resumed)).body.outcome).toBe('applied');
    expect((await api(c.apiKey, 'GET', `/v2/subscriptions/${id}`)).body.status).toBe('fulfilled');
    const changes = await waitFor(
      async () => (await eventsOf(c.apiKey, id!)).filter((e) => e.type === 'subscription.paused' || e.type === 'subscription.resumed'),
      (found) => found.length === 2,
    );
    expect(changes.map((e) => [e.type, e.data.cause])).toEqual([
      ['subscription.paused', { kind: 'billing', system: 'stripe', eventId: paused.id }],
      ['subscription.resumed', { kind: 'billing', system: 'stripe', eventId: resumed.id }],
    ]);
    // The analytics count Stripe's resume as the billing system's.
    const figures = await waitFor(
      async () => (await api(c.apiKey, 'GET', '/v2/analytics/pauses?groupBy=cause')).body.data,
      (rows: { resumed: number }[]) => rows.some((row) => row.resumed === 1),
    );
    expect(figures).toEqual([
      expect.objectContaining({ key: 'billing', pausesStarted: 1, resumedBy: expect.objectContaining({ billing: 1 }) }),
    ]);
    // A change made here afterwards is pushed; pushes go in order, so one for Stripe's own changes would have come first.
    await api(c.apiKey, 'POST', `/v2/subscriptions/${id}/pause`);
    const calls = await waitFor(
      async () => callsTo(stripeId!),
      (found) => found.length >= 1,
    );
    expect(calls.map((call) => call.form.get('pause_collection[behavior]'))).toEqual(['void']);
  });

  it('the same event delivered again changes nothing, and an older event than the last applied does not overwrite it', async () => {
    const c = await connectedToStripe(t, 1);
    const [id] = c.ids;
    const [stripeId] = c.externalIds;
    const paused = stripeEvent(stripeId!, { paused: true, created: now() });
    expect((await send(c, paused)).body.outcome).toBe('applied');
    await api(c.apiKey, 'POST', `/v2/subscriptions/${id}/resume`);
    expect((await send(c, paused)).body.outcome).toBe('duplicate');
    const older = stripeEvent(stripeId!, { paused: true, created: paused.created - 60 });
    expect((await send(c, older)).body.outcome).toBe('stale');
    expect((await api(c.apiKey, 'GET', `/v2/subscriptions/${id}`)).body.status).toBe('fulfilled');
    const changes = await waitFor(
      async () => (await eventsOf(c.apiKey, id!)).filter((e) => e.type === 'subscription.paused' || e.type === 'subscription.resumed'),
      (found) => found.length >= 2,
    );
    expect(changes.map((e) => e.type)).toEqual(['subscription.paused', 'subscription.resumed']);
  });

  it("Stripe's echo of a push the service sent changes nothing and makes no event, even after a later change here", async () => {
    const c = await connectedToStripe(t, 1);
    const [id] = c.ids;
    const [stripeId] = c.externalIds;
    await api(c.apiKey, 'POST', `/v2/subscriptions/${id}/pause`);
    const [pushed] = await waitFor(
      async () => callsTo(stripeId!).filter((call) => call.status === 200),
      (found) => found.length >= 1,
    );
    await api(c.apiKey, 'POST', `/v2/subscriptions/${id}/resume`);
    const before = await waitFor(
      () => eventsOf(c.apiKey, id!),
      (found) => found.some((e) => e.type === 'subscription.resumed'),
    );
    const echo = stripeEvent(stripeId!, { paused: true, idempotencyKey: pushed!.headers['idempotency-key'] as string });
    expect((await send(c, echo)).body.outcome).toBe('echo');
    expect((await api(c.apiKey, 'GET', `/v2/subscriptions/${id}`)).body.status).toBe('fulfilled');
    expect(await eventsOf(c.apiKey, id!)).toEqual(before);
  });

  it('deleted, canceled and incomplete_expired cancel; a price change updates the plan; other event types are ignored', async () => {
    const c = await connectedToStripe(t, 3);
    const [deleted, canceled, expired] = c.externalIds;
    expect((await send(c, stripeEvent(deleted!, { type: 'customer.subscription.deleted', status: 'canceled' }))).body.outcome).toBe(
      'applied',
    );
    await send(c, stripeEvent(canceled!, { status: 'canceled' }));
    await send(c, stripeEvent(expired!, { status: 'incomplete_expired' }));
    for (const id of c.ids) expect((await api(c.apiKey, 'GET', `/v2/subscriptions/${id}`)).body.status).toBe('cancelled');
    const [cancelled] = await waitFor(
      async () => (await eventsOf(c.apiKey, c.ids[0]!)).filter((e) => e.type === 'subscription.cancelled'),
      (found) => found.length === 1,
    );
    expect(cancelled!.data.cause).toMatchObject({ kind: 'billing', system: 'stripe' });

    const other = await connectedToStripe(t, 1);
    expect((await send(other, stripeEvent(other.externalIds[0]!, { priceId: 'price_silver' }))).body.outcome).toBe('applied');
    const updated = (await api(other.apiKey, 'GET', `/v2/subscriptions/${other.ids[0]}`)).body;
    expect(updated).toMatchObject({
      planId: planIdOfPrice('price_silver'),
      metadata: { stripePriceId: 'price_silver' },
      status: 'fulfilled',
    });
    const invoice = { ...stripeEvent(other.externalIds[0]!), type: 'invoice.paid' };
    expect((await send(other, invoice)).body).toEqual({ received: true, outcome: 'ignored', livemode: false });
  });
});
