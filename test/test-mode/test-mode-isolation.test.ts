/**
 * A test key never reads or changes live data, and a live key never test data: every operation
 * of the spec, both ways, against the other mode's objects of the same merchant (docs/partners.md).
 */
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSpec } from '../../src/lib/spec.js';
import { call, httpOf, type Reply } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 1, bulkPollIntervalMs: 50 });
});
afterAll(() => t.close());

const { api, completed } = httpOf(() => t);

/** One mode's objects: what the other mode's key is pointed at. */
interface World {
  readonly key: string;
  readonly livemode: boolean;
  readonly fulfilled: string;
  readonly paused: string;
  readonly bulkId: string;
  readonly eventId: string;
  readonly endpointId: string;
  /** A Kafka event destination (never reached: nothing listens there). */
  readonly destinationId: string;
  readonly keyId: string;
  /** A hold placed and released: its subscriptions are as they were. */
  readonly holdId: string;
}

const KAFKA_DESTINATION = {
  type: 'kafka',
  bootstrapServers: ['127.0.0.1:9'],
  topic: 'isolation',
  tls: false,
  types: ['bulk_request.completed'],
};

/** Places a hold with `key` and releases it, each applied: what it covered is as it was. */
async function heldAndReleased(key: string): Promise<string> {
  const hold = await api(key, 'POST', '/v2/holds');
  expect(hold.status).toBe(202);
  await completed(key, hold.body.requestId);
  const release = await api(key, 'POST', `/v2/holds/${hold.body.id}/release`);
  await completed(key, release.body.releaseRequestId);
  return hold.body.id;
}

async function world(key: string, livemode: boolean, seed: (count: number) => Promise<string[]>): Promise<World> {
  const [fulfilled, paused, bulked] = await seed(3);
  expect((await api(key, 'POST', `/v2/subscriptions/${paused}/pause`)).status).toBe(200);
  const bulk = await api(key, 'POST', '/v2/subscriptions/bulk/pause', { subscriptions: [bulked] });
  expect(bulk.status).toBe(202);
  const events = await waitFor(
    async () => (await api(key, 'GET', '/v2/events')).body.data,
    (d: { id: string }[]) => d.length > 0,
    30_000,
  );
  const endpoint = await api(key, 'POST', '/v2/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks', events: ['*'] });
  const made = await api(key, 'POST', '/v2/api-keys');
  const destination = await api(key, 'POST', '/v2/event-destinations', KAFKA_DESTINATION);
  const holdId = await heldAndReleased(key);
  return {
    key,
    livemode,
    fulfilled: fulfilled!,
    paused: paused!,
    bulkId: bulk.body.requestId,
    eventId: events[0]!.id,
    endpointId: endpoint.body.id,
    destinationId: destination.body.id,
    keyId: made.body.id,
    holdId,
  };
}

const notFound = (code: string) => (res: Reply) => {
  expect(res.status).toBe(404);
  expect(res.body.code).toBe(code);
};
const ids = (res: Reply, field = 'id') => res.body.data.map((x: Record<string, string>) => x[field]);

const POLICY_OFF = { maxPauseDays: null, maxPausesPerYear: null, requireResumeAt: false };
const STRICT_POLICY = { maxPauseDays: null, maxPausesPerYear: 0, requireResumeAt: true };
/** A policy as GET and PUT answer it: the rules a PUT left out are null. */
const shown = (policy: object, livemode: boolean) => ({
  cooldownDays: null,
  allowedPauseDays: null,
  resumeNoticeHours: null,
  ...policy,
  livemode,
});

/** Each operation called with `by`'s key on `other`'s objects, and what the caller must see. */
const table: Record<string, (by: World, other: World) => Promise<void>> = {
  pauseSubscription: async (by, other) => notFound('0020')(await api(by.key, 'POST', `/v2/subscriptions/${other.fulfilled}/pause`)),
  resumeSubscription: async (by, other) => notFound('0020')(await api(by.key, 'POST', `/v2/subscriptions/${other.paused}/resume`)),
  getSubscription: async (by, other) => notFound('0020')(await api(by.key, 'GET', `/v2/subscriptions/${other.fulfilled}`)),
  deleteSubscriptionSchedule: async (by, other) =>
    notFound('0020')(await api(by.key, 'DELETE', `/v2/subscriptions/${other.paused}/schedule`)),
  listSubscriptions: async (by, other) => {
    const res = await api(by.key, 'GET', '/v2/subscriptions?limit=100');
    expect(ids(res)).not.toContain(other.fulfilled);
    expect(res.body.data.every((s: { livemode: boolean }) => s.livemode === by.livemode)).toBe(true);
  },
  bulkPauseSubscriptions: async (by, other) =>
    expect((await api(by.key, 'POST', '/v2/subscriptions/bulk/pause', { subscriptions: [other.fulfilled] })).body).toMatchObject({
      acceptedCount: 0,
      livemode: by.livemode,
    }),
  bulkResumeSubscriptions: async (by, other) =>
    expect((await api(by.key, 'POST', '/v2/subscriptions/bulk/resume', { subscriptions: [other.paused] })).body).toMatchObject({
      acceptedCount: 0,
      livemode: by.livemode,
    }),
  previewBulkPause: async (by, other) =>
    expect((await api(by.key, 'POST', '/v2/subscriptions/bulk/pause/preview', { subscriptions: [other.fulfilled] })).body).toEqual({
      matchedCount: 0,
      cancelledCount: 0,
      policyRejectedCount: 0,
      sample: [],
      livemode: by.livemode,
    }),
  previewBulkResume: async (by, other) =>
    expect((await api(by.key, 'POST', '/v2/subscriptions/bulk/resume/preview', { subscriptions: [other.paused] })).body).toEqual({
      matchedCount: 0,
      cancelledCount: 0,
      policyRejectedCount: 0,
      sample: [],
      livemode: by.livemode,
    }),
  listBulkRequests: async (by, other) =>
    expect(ids(await api(by.key, 'GET', '/v2/bulk-requests'), 'requestId')).not.toContain(other.bulkId),
  getBulkRequest: async (by, other) => notFound('0022')(await api(by.key, 'GET', `/v2/bulk-requests/${other.bulkId}`)),
  listBulkRequestItems: async (by, other) => notFound('0022')(await api(by.key, 'GET', `/v2/bulk-requests/${other.bulkId}/items`)),
  undoBulkRequest: async (by, other) => notFound('0022')(await api(by.key, 'POST', `/v2/bulk-requests/${other.bulkId}/undo`)),
  listEvents: async (by, other) => expect(ids(await api(by.key, 'GET', '/v2/events?limit=100'))).not.toContain(other.eventId),
  getEvent: async (by, other) => notFound('0024')(await api(by.key, 'GET', `/v2/events/${other.eventId}`)),
  resendEvent: async (by, other) => notFound('0024')(await api(by.key, 'POST', `/v2/events/${other.eventId}/resend`)),
  createWebhookEndpoint: async (by, other) => {
    const made = await api(by.key, 'POST', '/v2/webhook-endpoints', { url: 'http://127.0.0.1:9/other', events: ['*'] });
    expect(made.body.livemode).toBe(by.livemode);
    notFound('0023')(await api(other.key, 'GET', `/v2/webhook-endpoints/${made.body.id}`));
  },
  listWebhookEndpoints: async (by, other) => expect(ids(await api(by.key, 'GET', '/v2/webhook-endpoints'))).not.toContain(other.endpointId),
  getWebhookEndpoint: async (by, other) => notFound('0023')(await api(by.key, 'GET', `/v2/webhook-endpoints/${other.endpointId}`)),
  updateWebhookEndpoint: async (by, other) =>
    notFound('0023')(await api(by.key, 'PATCH', `/v2/webhook-endpoints/${other.endpointId}`, { description: 'taken over' })),
  deleteWebhookEndpoint: async (by, other) => notFound('0023')(await api(by.key, 'DELETE', `/v2/webhook-endpoints/${other.endpointId}`)),
  listWebhookDeliveries: async (by, other) =>
    notFound('0023')(await api(by.key, 'GET', `/v2/webhook-endpoints/${other.endpointId}/deliveries`)),
  replayWebhookEvents: async (by, other) => {
    const range = { from: new Date(Date.now() - 60_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() };
    notFound('0023')(await api(by.key, 'POST', `/v2/webhook-endpoints/${other.endpointId}/replay`, range));
  },
  putStripeConnection: async (by, other) => {
    const mode = by.livemode ? 'live' : 'test';
    const made = await api(by.key, 'PUT', '/v2/billing-connections/stripe', {
      apiKey: `sk_${mode}_${'x'.repeat(24)}`,
      webhookSecret: `whsec_${'y'.repeat(24)}`,
    });
    expect([made.status, made.body.livemode]).toEqual([200, by.livemode]);
    notFound('0120')(await api(other.key, 'GET', '/v2/billing-connections/stripe'));
    expect((await api(by.key, 'DELETE', '/v2/billing-connections/stripe')).status).toBe(204);
  },
  syncStripeConnection: async (by, other) => {
    const mode = by.livemode ? 'live' : 'test';
    await api(by.key, 'PUT', '/v2/billing-connections/stripe', {
      apiKey: `sk_${mode}_${'x'.repeat(24)}`,
      webhookSecret: `whsec_${'y'.repeat(24)}`,
    });
    notFound('0120')(await api(other.key, 'POST', '/v2/billing-connections/stripe/sync'));
    expect((await api(by.key, 'DELETE', '/v2/billing-connections/stripe')).status).toBe(204);
  },
  // Stripe's events name a connection, so a mode's: what they create is that mode's only.
  receiveStripeEvent: async (by, other) => {
    const mode = by.livemode ? 'live' : 'test';
    const secret = `whsec_${'z'.repeat(24)}`;
    const made = await api(by.key, 'PUT', '/v2/billing-connections/stripe', {
      apiKey: `sk_${mode}_${'x'.repeat(24)}`,
      webhookSecret: secret,
    });
    const stripeId = `sub_isolation_${mode}`;
    const payload = JSON.stringify({
      id: `evt_isolation_${mode}`,
      type: 'customer.subscription.created',
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: stripeId, status: 'active', pause_collection: null, items: { data: [{ price: { id: 'price_isolation' } }] } } },
    });
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret });
    const received = await call(t.baseUrl, `/connectors/stripe/${made.body.id}/webhooks`, {
      headers: { 'content-type': 'application/json', 'stripe-signature': signature },
      rawBody: payload,
    });
    expect([received.status, received.body.livemode]).toEqual([200, by.livemode]);
    expect((await api(other.key, 'GET', `/v2/subscriptions?externalId=${stripeId}`)).body.data).toEqual([]);
    expect((await api(by.key, 'GET', `/v2/subscriptions?externalId=${stripeId}`)).body.data).toHaveLength(1);
    expect((await api(by.key, 'DELETE', '/v2/billing-connections/stripe')).status).toBe(204);
  },
  getStripeConnection: async (by) => notFound('0120')(await api(by.key, 'GET', '/v2/billing-connections/stripe')),
  deleteStripeConnection: async (by) => notFound('0120')(await api(by.key, 'DELETE', '/v2/billing-connections/stripe')),
  // Each mode's figures are its own: every row says the mode of the key that read it.
  getPauseAnalytics: async (by) => {
    const read = await api(by.key, 'GET', '/v2/analytics/pauses?groupBy=cause');
    expect([read.body.livemode, ...read.body.data.map((r: { livemode: boolean }) => r.livemode)].every((m) => m === by.livemode)).toBe(
      true,
    );
  },
  getResumeForecast: async (by) => {
    const read = await api(by.key, 'GET', '/v2/analytics/resumes');
    expect([read.body.livemode, ...read.body.data.map((r: { livemode: boolean }) => r.livemode)].every((m) => m === by.livemode)).toBe(
      true,
    );
  },
  createEventDestination: async (by, other) => {
    const made = await api(by.key, 'POST', '/v2/event-destinations', KAFKA_DESTINATION);
    expect(made.body.livemode).toBe(by.livemode);
    notFound('0121')(await api(other.key, 'GET', `/v2/event-destinations/${made.body.id}`));
  },
  listEventDestinations: async (by, other) =>
    expect(ids(await api(by.key, 'GET', '/v2/event-destinations'))).not.toContain(other.destinationId),
  getEventDestination: async (by, other) => notFound('0121')(await api(by.key, 'GET', `/v2/event-destinations/${other.destinationId}`)),
  deleteEventDestination: async (by, other) =>
    notFound('0121')(await api(by.key, 'DELETE', `/v2/event-destinations/${other.destinationId}`)),
  testEventDestination: async (by, other) =>
    notFound('0121')(await api(by.key, 'POST', `/v2/event-destinations/${other.destinationId}/test`)),
  createHold: async (by, other) => {
    const holdId = await heldAndReleased(by.key);
    expect(ids(await api(other.key, 'GET', '/v2/holds'))).not.toContain(holdId);
    expect((await api(other.key, 'GET', `/v2/subscriptions/${other.fulfilled}`)).body).toMatchObject({ status: 'fulfilled' });
  },
  listHolds: async (by, other) => expect(ids(await api(by.key, 'GET', '/v2/holds'))).not.toContain(other.holdId),
  getHold: async (by, other) => notFound('0026')(await api(by.key, 'GET', `/v2/holds/${other.holdId}`)),
  releaseHold: async (by, other) => notFound('0026')(await api(by.key, 'POST', `/v2/holds/${other.holdId}/release`)),
  listApiKeys: async (by, other) => expect(ids(await api(by.key, 'GET', '/v2/api-keys'))).not.toContain(other.keyId),
  createApiKey: async (by, other) => {
    const made = await api(by.key, 'POST', '/v2/api-keys');
    expect(made.body.livemode).toBe(by.livemode);
    expect(ids(await api(other.key, 'GET', '/v2/api-keys'))).not.toContain(made.body.id);
  },
  rollApiKey: async (by, other) => notFound('0025')(await api(by.key, 'POST', `/v2/api-keys/${other.keyId}/roll`, { expiresInHours: 0 })),
  revokeApiKey: async (by, other) => notFound('0025')(await api(by.key, 'DELETE', `/v2/api-keys/${other.keyId}`)),
  createPortalLink: async (by, other) => notFound('0020')(await api(by.key, 'POST', `/v2/subscriptions/${other.fulfilled}/portal-links`)),
  listPortalLinks: async (by, other) => {
    const made = await api(other.key, 'POST', `/v2/subscriptions/${other.fulfilled}/portal-links`);
    expect(made.body.livemode).toBe(other.livemode);
    expect(ids(await api(by.key, 'GET', '/v2/portal-links'))).not.toContain(made.body.id);
  },
  revokePortalLink: async (by, other) => {
    const made = await api(other.key, 'POST', `/v2/subscriptions/${other.fulfilled}/portal-links`);
    notFound('0027')(await api(by.key, 'DELETE', `/v2/portal-links/${made.body.id}`));
    expect(ids(await api(other.key, 'GET', '/v2/portal-links?limit=100'))).toContain(made.body.id);
  },
  // An externalId is unique per merchant and mode: the other mode may use it for another subscription.
  createSubscription: async (by, other) => {
    const externalId = `sub_${randomUUID()}`;
    const mine = await api(by.key, 'POST', '/v2/subscriptions', { externalId, planId: randomUUID() });
    expect(mine.body).toMatchObject({ externalId, livemode: by.livemode });
    expect((await api(other.key, 'POST', '/v2/subscriptions', { externalId, planId: randomUUID() })).status).toBe(201);
    expect(ids(await api(by.key, 'GET', `/v2/subscriptions?externalId=${externalId}`))).toEqual([mine.body.id]);
  },
  updateSubscription: async (by, other) =>
    notFound('0020')(
      await call(t.baseUrl, `/v2/subscriptions/${other.fulfilled}`, {
        method: 'PATCH',
        apiKey: by.key,
        rawBody: '{"cycle":9}',
        headers: { 'content-type': 'application/merge-patch+json' },
      }),
    ),
  // An import is its mode's: the other mode neither reads it nor gets its subscriptions.
  createSubscriptionImport: async (by, other) => {
    const externalId = `imp_${randomUUID()}`;
    const res = await call(t.baseUrl, '/v2/subscription-imports', {
      method: 'POST',
      apiKey: by.key,
      rawBody: `${JSON.stringify({ externalId, planId: randomUUID() })}\n`,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(res.body).toMatchObject({ state: 'queued', livemode: by.livemode });
    notFound('0029')(await api(other.key, 'GET', `/v2/subscription-imports/${res.body.id}`));
    expect(ids(await api(other.key, 'GET', `/v2/subscriptions?externalId=${externalId}`))).toEqual([]);
  },
  getSubscriptionImport: async (by, other) => {
    const res = await call(t.baseUrl, '/v2/subscription-imports', {
      method: 'POST',
      apiKey: other.key,
      rawBody: `${JSON.stringify({ externalId: `imp_${randomUUID()}`, planId: randomUUID() })}\n`,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    notFound('0029')(await api(by.key, 'GET', `/v2/subscription-imports/${res.body.id}`));
  },
  listSubscriptionImportRows: async (by, other) => {
    const res = await call(t.baseUrl, '/v2/subscription-imports', {
      method: 'POST',
      apiKey: other.key,
      rawBody: `${JSON.stringify({ externalId: `imp_${randomUUID()}`, planId: randomUUID() })}\n`,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    notFound('0029')(await api(by.key, 'GET', `/v2/subscription-imports/${res.body.id}/rows`));
  },
  cancelSubscription: async (by, other) => notFound('0020')(await api(by.key, 'POST', `/v2/subscriptions/${other.fulfilled}/cancel`)),
  // Plan names are per mode: the same plan id may carry another name in the other mode.
  putPlan: async (by, other) => {
    const planId = randomUUID();
    expect((await api(by.key, 'PUT', `/v2/plans/${planId}`, { name: 'Gold' })).body).toEqual({
      planId,
      name: 'Gold',
      livemode: by.livemode,
    });
    notFound('0028')(await api(other.key, 'GET', `/v2/plans/${planId}`));
  },
  getPlan: async (by, other) => {
    const planId = randomUUID();
    expect((await api(other.key, 'PUT', `/v2/plans/${planId}`, { name: 'Gold' })).status).toBe(200);
    notFound('0028')(await api(by.key, 'GET', `/v2/plans/${planId}`));
  },
  listPlans: async (by, other) => {
    const planId = randomUUID();
    expect((await api(other.key, 'PUT', `/v2/plans/${planId}`, { name: 'Gold' })).status).toBe(200);
    expect(ids(await api(by.key, 'GET', '/v2/plans?limit=100'), 'planId')).not.toContain(planId);
  },
  // Each mode has its own pause policy: one mode's never shows in, nor applies to, the other's.
  getPausePolicy: async (by, other) => {
    expect((await api(other.key, 'PUT', '/v2/pause-policy', STRICT_POLICY)).status).toBe(200);
    try {
      expect((await api(by.key, 'GET', '/v2/pause-policy')).body).toEqual(shown(POLICY_OFF, by.livemode));
    } finally {
      await api(other.key, 'PUT', '/v2/pause-policy', POLICY_OFF);
    }
  },
  putPausePolicy: async (by, other) => {
    expect((await api(by.key, 'PUT', '/v2/pause-policy', STRICT_POLICY)).body).toEqual(shown(STRICT_POLICY, by.livemode));
    try {
      expect((await api(other.key, 'GET', '/v2/pause-policy')).body).toEqual(shown(POLICY_OFF, other.livemode));
      // A policy refusing every pause is not the other mode's: its subscription still pauses (and is resumed after, as found).
      expect((await api(other.key, 'POST', `/v2/subscriptions/${other.fulfilled}/pause`)).status).toBe(200);
      expect((await api(other.key, 'POST', `/v2/subscriptions/${other.fulfilled}/resume`)).status).toBe(200);
    } finally {
      await api(by.key, 'PUT', '/v2/pause-policy', POLICY_OFF);
    }
  },
};

/** The test helpers: a live key is refused (test-mode.test.ts); a test key acts on its own test mode only (below). */
const TEST_HELPERS = [
  'createTestSubscriptions',
  'deleteTestSubscriptions',
  'getTestClock',
  'advanceTestClock',
  'createTestTrigger',
  'listTestScenarios',
  'resetTestMode',
];

describe('test mode isolation', () => {
  it('the table covers every operation of the spec', () => {
    const operations = Object.values(loadSpec().paths ?? {}).flatMap((item) =>
      Object.values(item as Record<string, { operationId?: string }>).flatMap((op) => (op?.operationId ? [op.operationId] : [])),
    );
    expect([...Object.keys(table), ...TEST_HELPERS].sort()).toEqual(operations.sort());
  });

  it('on every operation, a test key never reads or changes live data, nor a live key test data; each side is unchanged after', async () => {
    const m = await t.merchant();
    const live = await world(m.apiKey, true, (count) => t.seed(m.merchantId, count));
    const test = await world(m.testApiKey, false, async (count) =>
      (await api(m.testApiKey, 'POST', '/v2/test-helpers/subscriptions', { count })).body.data.map((s: { id: string }) => s.id),
    );
    for (const [by, other] of [
      [test, live],
      [live, test],
    ] as const) {
      for (const [operation, check] of Object.entries(table)) {
        await check(by, other).catch((error: Error) => {
          throw new Error(`${operation} with the ${by.livemode ? 'live' : 'test'} key: ${error.message}`);
        });
      }
    }
    for (const w of [live, test]) {
      expect((await api(w.key, 'GET', `/v2/subscriptions/${w.fulfilled}`)).body).toMatchObject({
        status: 'fulfilled',
        livemode: w.livemode,
      });
      expect((await api(w.key, 'GET', `/v2/subscriptions/${w.paused}`)).body).toMatchObject({ status: 'paused', livemode: w.livemode });
      expect((await api(w.key, 'GET', `/v2/webhook-endpoints/${w.endpointId}`)).body).toMatchObject({ livemode: w.livemode });
      expect((await api(w.key, 'GET', `/v2/webhook-endpoints/${w.endpointId}`)).body.description).toBeUndefined();
      expect(ids(await api(w.key, 'GET', '/v2/api-keys'))).toContain(w.keyId);
      expect((await api(w.key, 'GET', `/v2/bulk-requests/${w.bulkId}`)).body.livemode).toBe(w.livemode);
      expect((await api(w.key, 'GET', `/v2/events/${w.eventId}`)).body.livemode).toBe(w.livemode);
    }
    // The test helpers of a test key touch its own test mode only: wiping it leaves live subscriptions.
    await api(m.testApiKey, 'DELETE', '/v2/test-helpers/subscriptions');
    expect((await api(m.apiKey, 'GET', `/v2/subscriptions/${live.fulfilled}`)).status).toBe(200);
    // A trigger's subscription and event are the test mode's: the live key sees neither.
    const triggered = await api(m.testApiKey, 'POST', '/v2/test-helpers/triggers', { type: 'subscription.paused' });
    expect(triggered.status).toBe(201);
    notFound('0020')(await api(m.apiKey, 'GET', `/v2/subscriptions/${triggered.body.subscriptionId}`));
    notFound('0024')(await api(m.apiKey, 'GET', `/v2/events/${triggered.body.eventIds[0]}`));
  });

  it('the same Idempotency-Key in each mode names two requests: neither replays nor refuses the other', async () => {
    const m = await t.merchant();
    const [liveId] = await t.seed(m.merchantId, 1);
    const [testId] = (await api(m.testApiKey, 'POST', '/v2/test-helpers/subscriptions', { count: 1 })).body.data.map(
      (s: { id: string }) => s.id,
    );
    const headers = { 'Idempotency-Key': `same-${liveId}` };
    const a = await api(m.apiKey, 'POST', `/v2/subscriptions/${liveId}/pause`, undefined, headers);
    const b = await api(m.testApiKey, 'POST', `/v2/subscriptions/${testId}/pause`, undefined, headers);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect([a.body.id, a.body.livemode, b.body.id, b.body.livemode]).toEqual([liveId, true, testId, false]);
    expect(b.headers.get('Idempotent-Replayed')).not.toBe('true');
  });
});
