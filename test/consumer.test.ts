/**
 * One suite of consumer scenarios, run through the generated client twice: against the Prism
 * mock partner teams test with, and against the real service. A consumer who passed against the
 * mock works against the service. The mock is steered with `Prefer: code=…`, as the README shows.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BulkRequestsApi, Configuration, EventsApi, ResponseError, SubscriptionsApi, WebhookEndpointsApi, type InitOverrideFunction } from '../generated/client/index.js';
import { startPrism, type RunningPrism } from './support/prism.js';
import { startTestService, type TestService } from './support/service.js';

interface Target {
  readonly api: SubscriptionsApi;
  readonly bulkRequests: BulkRequestsApi;
  readonly events: EventsApi;
  readonly webhooks: WebhookEndpointsApi;
  /** A URL the target accepts: the mock's example, or loopback (the test service allows private URLs). */
  readonly webhookUrl: string;
  readonly anonymous: SubscriptionsApi;
  readonly fulfilledId: () => Promise<string>;
  readonly pausedId: () => Promise<string>;
  /** The mock needs to be told which documented response to give; the service decides by itself. */
  readonly prefer: (code: number) => InitOverrideFunction | undefined;
  readonly preferExample: (name: string) => InitOverrideFunction | undefined;
}

function preferring(code: number): InitOverrideFunction {
  return async ({ init }) => ({ headers: { ...(init.headers as Record<string, string>), Prefer: `code=${code}` } });
}

function preferringExample(name: string): InitOverrideFunction {
  return async ({ init }) => ({ headers: { ...(init.headers as Record<string, string>), Prefer: `example=${name}` } });
}

const REASON = 'Travelling until the 1st';

async function problemOf(call: Promise<unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ResponseError);
  const { response } = error as ResponseError;
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function scenarios(name: string, target: () => Target) {
  describe(`consumer scenarios against ${name}`, () => {
    it('pauses a subscription: 200 with the subscription, paused, merchantId included', async () => {
      const t = target();
      const paused = await t.api.pauseSubscription({ subscriptionId: await t.fulfilledId() });
      expect(paused.status).toBe('paused');
      expect(paused.merchantId).toMatch(/^[0-9a-f-]{36}$/i);
      expect(paused.modifiedAt).toMatch(/\.\d{6}Z$/);
    });

    it('resumes a subscription: 200 with the subscription, fulfilled', async () => {
      const t = target();
      const resumed = await t.api.resumeSubscription({ subscriptionId: await t.pausedId() });
      expect(resumed.status).toBe('fulfilled');
      expect(Number.isInteger(resumed.cycle)).toBe(true);
    });

    it('bulk-pauses subscriptions through the typed method: requestId, operation and acceptedCount', async () => {
      const t = target();
      const ids = [await t.fulfilledId(), await t.fulfilledId()];
      const accepted = await t.api.bulkPauseSubscriptions({ bulkCommandRequest: { subscriptions: ids } });
      expect(accepted.operation).toBe('PAUSE');
      expect(accepted.requestId).toMatch(/^[0-9a-f-]{36}$/i);
      expect(Number.isInteger(accepted.acceptedCount)).toBe(true);
    });

    it('bulk-resumes subscriptions through the typed method: every rejected id has a documented reason', async () => {
      const t = target();
      const accepted = await t.api.bulkResumeSubscriptions({ bulkCommandRequest: { subscriptions: [await t.pausedId(), randomUUID()] } });
      expect(accepted.requestId).toMatch(/^[0-9a-f-]{36}$/i);
      for (const { reason } of accepted.rejected ?? []) expect(['not_found', 'cancelled']).toContain(reason);
    });

    it('follows a bulk pause from its 202 to each outcome: Location, status until completed, items, each subscription', async () => {
      const t = target();
      const ids = [await t.fulfilledId(), await t.fulfilledId()];
      const raw = await t.api.bulkPauseSubscriptionsRaw({ bulkCommandRequest: { subscriptions: ids } });
      const { requestId } = await raw.value();
      expect(raw.raw.status).toBe(202);
      expect(raw.raw.headers.get('location')).toBe(`/v2/bulk-requests/${requestId}`);
      let status = await t.bulkRequests.getBulkRequest({ requestId });
      for (let polls = 0; status.state !== 'completed' && polls < 100; polls++) {
        await new Promise((r) => setTimeout(r, 100));
        status = await t.bulkRequests.getBulkRequest({ requestId });
      }
      expect(status.state).toBe('completed');
      const { pending, applied, noop, skipped, failed } = status.counts;
      expect(pending + applied + noop + skipped + failed).toBe(status.acceptedCount);
      const items = await t.bulkRequests.listBulkRequestItems({ requestId });
      for (const item of items.data.filter((i) => i.outcome === 'applied')) {
        const subscription = await t.api.getSubscription({ subscriptionId: item.subscriptionId });
        expect(subscription.status).toBe('paused');
      }
      expect(items.data.some((i) => i.outcome === 'applied')).toBe(true);
    });

    it('pauses a subscription until a time ahead, with a reason: paused, and the read shows when it resumes', async () => {
      const t = target();
      const resumeAt = new Date(Date.now() + 600_000);
      const request = { subscriptionId: await t.fulfilledId(), commandRequest: { resumeAt, reason: REASON } };
      const paused = await t.api.pauseSubscription(request, t.preferExample('pausedUntil'));
      expect(paused).toMatchObject({ status: 'paused', pauseReason: REASON, schedule: { pauseAt: null } });
      expect(paused.schedule?.resumeAt).toMatch(/\.\d{6}Z$/);
      const read = await t.api.getSubscription({ subscriptionId: paused.id }, t.preferExample('pausedUntil'));
      expect(read.schedule).toEqual(paused.schedule);
    });

    it('bulk-pauses subscriptions until a time ahead: 202, then each one paused with its scheduled resume', async () => {
      const t = target();
      const ids = [await t.fulfilledId(), await t.fulfilledId()];
      const resumeAt = new Date(Date.now() + 600_000);
      const accepted = await t.api.bulkPauseSubscriptions({ bulkCommandRequest: { subscriptions: ids, resumeAt } });
      expect(accepted.operation).toBe('PAUSE');
      let status = await t.bulkRequests.getBulkRequest({ requestId: accepted.requestId });
      for (let polls = 0; status.state !== 'completed' && polls < 100; polls++) {
        await new Promise((r) => setTimeout(r, 100));
        status = await t.bulkRequests.getBulkRequest({ requestId: accepted.requestId });
      }
      const subscription = await t.api.getSubscription({ subscriptionId: ids[0]! }, t.preferExample('pausedUntil'));
      expect(subscription.status).toBe('paused');
      expect(subscription.schedule?.resumeAt).toMatch(/\.\d{6}Z$/);
    });

    it('lists subscriptions a page at a time', async () => {
      const t = target();
      await t.fulfilledId();
      const page = await t.api.listSubscriptions({ limit: 1 });
      expect(page.data.length).toBeLessThanOrEqual(1);
      expect(page.hasMore).toBe(page.nextCursor !== null);
    });

    it('registers a webhook endpoint (201, secret shown once) and lists the paused events, newest first', async () => {
      const t = target();
      const endpoint = await t.webhooks.createWebhookEndpoint({ webhookEndpointCreate: { url: t.webhookUrl, events: ['*'], description: 'Billing' } });
      expect([endpoint.url, endpoint.status, endpoint.events]).toEqual([t.webhookUrl, 'enabled', ['*']]);
      expect(endpoint.secret).toMatch(/^whsec_/);
      await t.api.pauseSubscription({ subscriptionId: await t.fulfilledId() });
      // The service records the event right after its answer: look until it is there.
      let page = await t.events.listEvents({ type: 'subscription.paused', limit: 20 });
      for (let tries = 0; page.data.length === 0 && tries < 50; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        page = await t.events.listEvents({ type: 'subscription.paused', limit: 20 });
      }
      expect(page.data.length).toBeGreaterThan(0);
      expect(page.data.every((e) => e.type === 'subscription.paused')).toBe(true);
      expect(page.hasMore).toBe(page.nextCursor !== null);
    });

    it('pausing an unknown subscription answers 404 0020', async () => {
      const t = target();
      const { status, body } = await problemOf(t.api.pauseSubscription({ subscriptionId: randomUUID() }, t.prefer(404)));
      expect(status).toBe(404);
      expect(body.code).toBe('0020');
    });

    it('without an API key answers 401 0010', async () => {
      const t = target();
      const { status, body } = await problemOf(t.anonymous.resumeSubscription({ subscriptionId: randomUUID() }));
      expect(status).toBe(401);
      expect(body.code).toBe('0010');
    });

    it('a bulk list with an invalid id answers 400 0040', async () => {
      const t = target();
      const { status, body } = await problemOf(t.api.bulkPauseSubscriptions({ bulkCommandRequest: { subscriptions: ['not-a-uuid'] } }));
      expect(status).toBe(400);
      expect(body.code).toBe('0040');
    });
  });
}

let mock: RunningPrism;
let service: TestService;
let merchant: { merchantId: string; apiKey: string };
beforeAll(async () => {
  [mock, service] = await Promise.all([startPrism(), startTestService({ workers: 2 })]);
  merchant = await service.merchant();
});
afterAll(async () => {
  await mock?.stop();
  await service?.close();
});

const configuration = (basePath: string, apiKey?: string) => new Configuration({ basePath, ...(apiKey ? { apiKey } : {}) });
const client = (basePath: string, apiKey?: string) => new SubscriptionsApi(configuration(basePath, apiKey));

scenarios('the Prism mock', () => ({
  api: client(mock.baseUrl, 'sk_any-key-the-mock-accepts'),
  bulkRequests: new BulkRequestsApi(configuration(mock.baseUrl, 'sk_any-key-the-mock-accepts')),
  events: new EventsApi(configuration(mock.baseUrl, 'sk_any-key-the-mock-accepts')),
  webhooks: new WebhookEndpointsApi(configuration(mock.baseUrl, 'sk_any-key-the-mock-accepts')),
  webhookUrl: 'https://example.com/webhooks',
  anonymous: client(mock.baseUrl),
  fulfilledId: async () => randomUUID(),
  pausedId: async () => randomUUID(),
  prefer: preferring,
  preferExample: preferringExample,
}));

scenarios('the real service', () => ({
  api: client(service.baseUrl, merchant.apiKey),
  bulkRequests: new BulkRequestsApi(configuration(service.baseUrl, merchant.apiKey)),
  events: new EventsApi(configuration(service.baseUrl, merchant.apiKey)),
  webhooks: new WebhookEndpointsApi(configuration(service.baseUrl, merchant.apiKey)),
  webhookUrl: 'http://127.0.0.1:9/hooks',
  anonymous: client(service.baseUrl),
  fulfilledId: async () => (await service.seed(merchant.merchantId, 1, 'fulfilled'))[0]!,
  pausedId: async () => (await service.seed(merchant.merchantId, 1, 'paused'))[0]!,
  prefer: () => undefined,
  preferExample: () => undefined,
}));

// The mock answers with the same documented example whenever it is asked: time does not pass for it.
describe('consumer scenario against the real service only (a stateless mock cannot resume anything later)', () => {
  it('pauses until two seconds ahead, reads it paused, waits, reads it resumed', async () => {
    const api = client(service.baseUrl, merchant.apiKey);
    const [subscriptionId] = await service.seed(merchant.merchantId, 1, 'fulfilled');
    const resumeAt = new Date(Date.now() + 2000);
    await api.pauseSubscription({ subscriptionId: subscriptionId!, commandRequest: { resumeAt, reason: REASON } });
    const paused = await api.getSubscription({ subscriptionId: subscriptionId! });
    expect(paused).toMatchObject({ status: 'paused', pauseReason: REASON });
    await new Promise((r) => setTimeout(r, Math.max(resumeAt.getTime() - Date.now(), 0)));
    let read = await api.getSubscription({ subscriptionId: subscriptionId! });
    for (let polls = 0; read.status !== 'fulfilled' && polls < 100; polls++) {
      await new Promise((r) => setTimeout(r, 200));
      read = await api.getSubscription({ subscriptionId: subscriptionId! });
    }
    expect(read.status).toBe('fulfilled');
    expect(read.schedule).toBeUndefined();
    expect(read.pauseReason).toBeUndefined();
  });
});
