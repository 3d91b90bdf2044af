/**
 * Pushes to Stripe across faults (docs/billing.md "When a push fails"): Stripe unreachable for a
 * minute during a bulk pause of 300, and a worker killed with SIGKILL while its calls are under way.
 * Every push arrives, counted at the recorder in front of stripe-mock, with its event's id as its
 * `Idempotency-Key` however often it is sent.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectedToStripe } from '../support/billing.js';
import { call } from '../support/http.js';
import { databaseUri, startTestService } from '../support/service.js';
import { startStripeMock, stripeMockBuilt, type StripeMock } from '../support/stripe-mock.js';
import { waitFor } from '../support/wait.js';
import { FLEET_ON_ONE_DATABASE, startWorker } from '../support/worker-process.js';

const secretsKey = randomBytes(32).toString('base64');

describe.skipIf(!stripeMockBuilt())('pushes to Stripe across faults', () => {
  let stripe: StripeMock;
  beforeAll(async () => {
    stripe = await startStripeMock();
  });
  afterAll(async () => {
    await stripe?.close();
  });
  afterEach(() => {
    expect(stripe.invalid(), 'calls stripe-mock refused as not matching Stripe spec').toEqual([]);
  });

  const pathOf = (externalId: string) => `/v1/subscriptions/${externalId}`;
  const keysOf = (externalId: string) =>
    new Set(stripe.received.filter((c) => c.path === pathOf(externalId)).map((c) => c.headers['idempotency-key']));

  it('with Stripe unreachable for 60 s during a bulk pause of 300, the bulk completes, and once Stripe is back all 300 pushes arrive, none lost', async () => {
    const t = await startTestService({ workers: 1, secretsKey, stripeApiBase: stripe.base });
    try {
      const { apiKey, ids, externalIds } = await connectedToStripe(t, 300);
      await stripe.stop();
      const bulk = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { apiKey, json: { subscriptions: ids } });
      expect(bulk.status).toBe(202);
      await waitFor(
        async () => (await call(t.baseUrl, `/v2/bulk-requests/${bulk.body.requestId}`, { method: 'GET', apiKey })).body.state,
        (state) => state === 'completed',
        60_000,
        200,
        'the bulk request to complete while Stripe is unreachable',
      );
      await new Promise((resolve) => setTimeout(resolve, 60_000));
      await stripe.start();
      const last = (externalId: string) => stripe.calls.filter((c) => c.path === pathOf(externalId) && c.status === 200).at(-1);
      await waitFor(
        async () => externalIds.filter((e) => last(e) === undefined).length,
        (missing) => missing === 0,
        120_000,
        500,
        'every subscription to have its push answered',
      );
      for (const externalId of externalIds) {
        expect(last(externalId)!.form.get('pause_collection[behavior]')).toBe('void');
        expect(keysOf(externalId).size).toBe(1);
      }
    } finally {
      await t.close();
    }
  }, 300_000);

  it('a worker killed with SIGKILL while its calls wait for Stripe: another worker sends them again, with the same Idempotency-Key', async () => {
    const t = await startTestService({ workers: 0, secretsKey, stripeApiBase: stripe.base });
    const env = { ...FLEET_ON_ONE_DATABASE, SECRETS_KEY: secretsKey, STRIPE_API_BASE: stripe.base };
    try {
      const { apiKey, ids, externalIds } = await connectedToStripe(t, 20);
      stripe.hold();
      const doomed = await startWorker(databaseUri(t.db.databaseName), env);
      await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { apiKey, json: { subscriptions: ids } });
      const inFlight = await waitFor(
        async () => externalIds.filter((e) => keysOf(e).size > 0),
        (sent) => sent.length > 0,
        60_000,
        50,
        'the worker to send its first calls',
      );
      await doomed.stop('SIGKILL');
      const before = new Map(externalIds.map((e) => [e, stripe.received.filter((c) => c.path === pathOf(e)).length]));
      stripe.release();
      const rescuer = await startWorker(databaseUri(t.db.databaseName), env);
      try {
        await waitFor(
          async () => externalIds.filter((e) => stripe.received.filter((c) => c.path === pathOf(e)).length <= before.get(e)!).length,
          (missing) => missing === 0,
          150_000,
          500,
          'every push to be sent again after the kill',
        );
      } finally {
        await rescuer.stop();
      }
      expect(inFlight.length).toBeGreaterThan(0);
      for (const externalId of externalIds) expect(keysOf(externalId).size).toBe(1);
    } finally {
      await t.close();
    }
  }, 300_000);
});
