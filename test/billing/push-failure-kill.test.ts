/**
 * A push Stripe refuses for good, through a worker killed with SIGKILL at either write that records
 * the failure (docs/billing.md "When a push fails"): while its `subscription.billing_sync_failed`
 * event is being stored, or while the push is being marked failed, each write held on the wire
 * (test/support/wire-proxy.ts). Another worker takes the push again once the lease ends, Stripe
 * refuses it again, and the merchant ends with the subscription's sync failed and its event once.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectedToStripe } from '../support/billing.js';
import { call } from '../support/http.js';
import { databaseUri, startTestService, type TestService } from '../support/service.js';
import { startStripeMock, stripeMockBuilt, type StripeMock } from '../support/stripe-mock.js';
import { waitFor } from '../support/wait.js';
import { startWireProxy, type WireCommand, type WireProxy } from '../support/wire-proxy.js';
import { FLEET_ON_ONE_DATABASE, startWorker } from '../support/worker-process.js';

const secretsKey = randomBytes(32).toString('base64');

type Doc = Record<string, unknown>;
const docs = (command: WireCommand, field: string) => (command.body[field] as Doc[] | undefined) ?? [];

describe.skipIf(!stripeMockBuilt())('a worker killed while it records a push Stripe refused', () => {
  let stripe: StripeMock;
  let t: TestService;
  let proxy: WireProxy;
  beforeAll(async () => {
    stripe = await startStripeMock();
    t = await startTestService({ workers: 0, secretsKey, stripeApiBase: stripe.base });
    proxy = await startWireProxy(inject('mongoUri'));
  });
  afterAll(async () => {
    await proxy?.close();
    await t?.close();
    await stripe?.close();
  });

  it.each([
    [
      'its subscription.billing_sync_failed event',
      (command: WireCommand) =>
        command.name === 'insert' &&
        command.collection === 'events' &&
        docs(command, 'documents').some((d) => d.type === 'subscription.billing_sync_failed'),
    ],
    [
      'the push as failed',
      (command: WireCommand) =>
        command.name === 'update' &&
        command.collection === 'billingPushes' &&
        docs(command, 'updates').some((u) => ((u.u as Doc | undefined)?.$set as Doc | undefined)?.status === 'failed'),
    ],
  ])(
    'while storing %s: another worker sends it again, and the event arrives once',
    async (_, match) => {
      const env = { ...FLEET_ON_ONE_DATABASE, SECRETS_KEY: secretsKey, STRIPE_API_BASE: stripe.base };
      const { apiKey, ids, externalIds } = await connectedToStripe(t, 1);
      const api = (method: string, path: string, json?: unknown) => call(t.baseUrl, path, { method, apiKey, json });
      const held = proxy.on({ match }, { action: 'hold' });
      // Refused by the doomed worker's call, then by the rescuer's.
      stripe.answers.push(404, 404);
      const doomed = await startWorker(proxy.uri(t.db.databaseName), env);
      expect((await api('POST', `/v2/subscriptions/${ids[0]}/pause`)).status).toBe(200);
      await held.reached;
      await doomed.stop('SIGKILL');
      held.remove();

      const rescuer = await startWorker(databaseUri(t.db.databaseName), env);
      try {
        const calls = () => stripe.calls.filter((c) => c.path === `/v1/subscriptions/${externalIds[0]}`);
        await waitFor(
          async () => calls().length,
          (n) => n === 2,
          150_000,
          500,
          "the rescuer to send the push again once the killed worker's lease ended",
        );
        // The push's own record is written last: once it reads failed, the failure is wholly recorded.
        await waitFor(
          () => t.db.collection('billingPushes').findOne({ subscriptionId: ids[0] }),
          (push) => push?.status === 'failed',
          30_000,
          200,
          'the push marked failed',
        );
        expect(calls().map((c) => c.status)).toEqual([404, 404]);
        expect(new Set(calls().map((c) => c.headers['idempotency-key'])).size).toBe(1);
        // Once, however often it was recorded.
        const events = (await api('GET', `/v2/events?subscriptionId=${ids[0]}&type=subscription.billing_sync_failed`)).body.data;
        expect(events).toHaveLength(1);
        const failedSync = { system: 'stripe', state: 'failed', syncedAt: null, error: 'recorder answered 404' };
        expect(events[0].data).toMatchObject({ subscription: { id: ids[0], status: 'paused', billingSync: failedSync } });
        expect((await api('GET', `/v2/subscriptions/${ids[0]}`)).body.billingSync).toEqual(failedSync);
      } finally {
        await rescuer.stop();
      }
    },
    240_000,
  );
});
