/**
 * One suite of consumer scenarios, run through the generated client twice: against the Prism
 * mock partner teams test with, and against the real service. A consumer who passed against the
 * mock works against the service. The mock is steered with `Prefer: code=…`, as docs/partners.md shows.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APIKeysApi,
  PausePolicyApi,
  BulkRequestsApi,
  Configuration,
  EventsApi,
  HoldsApi,
  PlansApi,
  ResponseError,
  SubscriptionsApi,
  TestHelpersApi,
  WebhookEndpointsApi,
  type EventList,
  type SubscriptionEventData,
  type InitOverrideFunction,
  type Middleware,
} from '../../clients/typescript/src/index.js';
import { contractViolations } from '../support/contract.js';
import { startPrism, type RunningPrism } from '../support/prism.js';
import { startReceiver } from '../support/receiver.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

interface Target {
  readonly api: SubscriptionsApi;
  readonly bulkRequests: BulkRequestsApi;
  readonly events: EventsApi;
  readonly webhooks: WebhookEndpointsApi;
  readonly plans: PlansApi;
  /** A URL the target accepts: the mock's example, or loopback (the test service allows private URLs). */
  readonly webhookUrl: string;
  readonly anonymous: SubscriptionsApi;
  readonly fulfilledId: () => Promise<string>;
  readonly pausedId: () => Promise<string>;
  readonly cancelledId: () => Promise<string>;
  /**
   * Whether what a request changed can be read back: the service keeps it; the mock answers each
   * request with a documented example or a value generated from the schema, whatever came before.
   */
  readonly stateful: boolean;
  /** The mock needs to be told which documented response to give; the service decides by itself. */
  readonly prefer: (code: number) => InitOverrideFunction | undefined;
  readonly preferExample: (name: string) => InitOverrideFunction | undefined;
  /** A merchant of its own with its one key (on the service: rolling and revoking the shared merchant's key would end the other scenarios). */
  readonly keyHolder: () => Promise<{
    readonly apiKey: string;
    readonly apiKeys: (key: string) => APIKeysApi;
    readonly api: (key: string) => SubscriptionsApi;
  }>;
  /** A merchant of its own (on the service: a policy of the shared merchant would refuse the other scenarios' pauses) and one fulfilled subscription of it. */
  readonly policyHolder: () => Promise<{ readonly policies: PausePolicyApi; readonly api: SubscriptionsApi; readonly fulfilledId: string }>;
  /** A merchant of its own (on the service: a hold covers every subscription of the merchant) with one fulfilled subscription. */
  readonly holdHolder: () => Promise<{
    readonly holds: HoldsApi;
    readonly api: SubscriptionsApi;
    readonly bulkRequests: BulkRequestsApi;
    readonly fulfilledId: string;
  }>;
  /** The merchant's test mode through its test key (docs/partners.md), and the test helpers with the live key (403). */
  readonly testMode: {
    readonly api: SubscriptionsApi;
    readonly events: EventsApi;
    readonly helpers: TestHelpersApi;
    readonly helpersWithLiveKey: TestHelpersApi;
  };
}

function preferring(code: number): InitOverrideFunction {
  return async ({ init }) => ({ headers: { ...(init.headers as Record<string, string>), Prefer: `code=${code}` } });
}

function preferringExample(name: string): InitOverrideFunction {
  return async ({ init }) => ({ headers: { ...(init.headers as Record<string, string>), Prefer: `example=${name}` } });
}

function preferringCodeAndExample(code: number, name: string): InitOverrideFunction {
  return async ({ init }) => ({ headers: { ...(init.headers as Record<string, string>), Prefer: `code=${code}, example=${name}` } });
}

const REASON = 'Travelling until the 1st';
const DAY = 24 * 60 * 60 * 1000;

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

    it('undoes a completed bulk pause: 202 with the resume that undoes it, followed to completion; a second undo answers 409 0034', async () => {
      const t = target();
      const ids = [await t.fulfilledId(), await t.fulfilledId()];
      const { requestId } = await t.api.bulkPauseSubscriptions({ bulkCommandRequest: { subscriptions: ids } });
      let status = await t.bulkRequests.getBulkRequest({ requestId });
      for (let polls = 0; status.state !== 'completed' && polls < 100; polls++) {
        await new Promise((r) => setTimeout(r, 100));
        status = await t.bulkRequests.getBulkRequest({ requestId });
      }
      const raw = await t.bulkRequests.undoBulkRequestRaw({ requestId });
      const undo = await raw.value();
      expect(raw.raw.status).toBe(202);
      expect(raw.raw.headers.get('location')).toBe(`/v2/bulk-requests/${undo.requestId}`);
      expect(undo.operation).toBe('RESUME');
      for (const { reason } of undo.rejected) expect(['changed_since', 'not_found', 'cancelled']).toContain(reason);
      if (t.stateful) {
        expect(undo).toMatchObject({ undoes: requestId, acceptedCount: 2, rejected: [] });
        let followed = await t.bulkRequests.getBulkRequest({ requestId: undo.requestId });
        for (let polls = 0; followed.state !== 'completed' && polls < 100; polls++) {
          await new Promise((r) => setTimeout(r, 100));
          followed = await t.bulkRequests.getBulkRequest({ requestId: undo.requestId });
        }
        expect(followed).toMatchObject({ state: 'completed', undoes: requestId, operation: 'RESUME' });
        for (const subscriptionId of ids) expect((await t.api.getSubscription({ subscriptionId })).status).toBe('fulfilled');
      }
      const again = t.stateful ? undefined : preferringCodeAndExample(409, 'alreadyUndone');
      const { status: code, body } = await problemOf(t.bulkRequests.undoBulkRequest({ requestId }, again));
      expect([code, body.code]).toEqual([409, '0034']);
    });

    it('holds the store and releases it: 202 with the hold and its Location, the released hold, then 409 0035 for another release', async () => {
      const t = target();
      const { holds, api, bulkRequests, fulfilledId } = await t.holdHolder();
      const placed = await holds.createHoldRaw({ holdRequest: { reason: 'Stock-out' } });
      expect(placed.raw.status).toBe(202);
      const hold = await placed.value();
      expect(placed.raw.headers.get('location')).toBe(`/v2/holds/${hold.id}`);
      expect(hold.status).toBe('active');
      const completed = async (requestId: string) => {
        let status = await bulkRequests.getBulkRequest({ requestId });
        for (let polls = 0; status.state !== 'completed' && polls < 100; polls++) {
          await new Promise((r) => setTimeout(r, 100));
          status = await bulkRequests.getBulkRequest({ requestId });
        }
        return status;
      };
      if (t.stateful) {
        expect(await completed(hold.requestId)).toMatchObject({ operation: 'PAUSE', holdId: hold.id });
        expect(await api.getSubscription({ subscriptionId: fulfilledId })).toMatchObject({ status: 'paused', holdIds: [hold.id] });
      }
      const released = await holds.releaseHold({ holdId: hold.id }, t.prefer(202));
      expect(released).toMatchObject({ id: hold.id, status: 'released' });
      if (t.stateful) {
        expect(await completed(released.releaseRequestId!)).toMatchObject({ operation: 'RESUME', holdId: hold.id });
        expect((await api.getSubscription({ subscriptionId: fulfilledId })).status).toBe('fulfilled');
      }
      const again = t.stateful ? undefined : preferringCodeAndExample(409, 'released');
      const { status: code, body } = await problemOf(holds.releaseHold({ holdId: hold.id }, again));
      expect([code, body.code]).toEqual([409, '0035']);
    });

    it("reads a bulk request's events and one subscription's history, then the request's items as a CSV file", async () => {
      const t = target();
      const ids = [await t.fulfilledId(), await t.fulfilledId()].sort();
      const { requestId } = await t.api.bulkPauseSubscriptions({ bulkCommandRequest: { subscriptions: ids } }, t.prefer(202));
      // The service: both pauses and the completion, once applied; the mock: its documented page.
      const ofRequest = await waitFor(
        () => t.events.listEvents({ requestId }),
        (p) => !t.stateful || p.data.length === 3,
        20_000,
      );
      expect(ofRequest.data.length).toBeGreaterThan(0);
      const history = await t.events.listEvents({ subscriptionId: ids[0]!, limit: 10 });
      expect(history.data.length).toBeGreaterThan(0);
      if (t.stateful) {
        expect(ofRequest.data.map((e) => e.type).sort()).toEqual(['bulk_request.completed', 'subscription.paused', 'subscription.paused']);
        expect(
          history.data.map((e) => [
            e.type,
            (e.data as SubscriptionEventData).subscription.id,
            (e.data as SubscriptionEventData).cause.requestId,
          ]),
        ).toEqual([['subscription.paused', ids[0], requestId]]);
      }
      const asCsv: InitOverrideFunction = async ({ init }) => ({
        headers: { ...(init.headers as Record<string, string>), Accept: 'text/csv' },
      });
      const file = await t.bulkRequests.listBulkRequestItemsRaw({ requestId }, asCsv);
      expect(file.raw.headers.get('content-type')).toMatch(/^text\/csv/);
      expect(file.raw.headers.get('content-disposition')).toMatch(/^attachment; filename="bulk-request-[0-9a-f-]{36}\.csv"$/);
      const [header, ...rows] = (await file.raw.text()).trimEnd().split(/\r?\n/);
      expect(header).toBe('subscriptionId,outcome,reason,at');
      expect(rows.length).toBeGreaterThan(0);
      if (t.stateful) expect(rows.map((row) => row.split(',').slice(0, 2))).toEqual(ids.map((id) => [id, 'applied']));
    });

    it('bulk-pauses by filter after a preview: 200 with the count and a sample, then 202 accepting that many, followed to completion', async () => {
      const t = target();
      const planId = t.stateful ? randomUUID() : '9c4f5d7b-6eaf-4fbc-8c3d-4e5f60718293';
      const ids = t.stateful ? [await t.fulfilledId(), await t.fulfilledId()] : [];
      if (t.stateful) await seedPlan(ids, planId);
      const filter = { status: ['fulfilled' as const], planId: [planId] };
      const dry = await t.api.previewBulkPause({ bulkPausePreviewRequest: { filter } });
      expect(dry.sample.length).toBeLessThanOrEqual(Math.min(20, dry.matchedCount));
      const accepted = await t.api.bulkPauseSubscriptions({ bulkCommandRequest: { filter } });
      expect(accepted.operation).toBe('PAUSE');
      if (!t.stateful) return;
      expect(dry).toEqual({ matchedCount: 2, cancelledCount: 0, policyRejectedCount: 0, sample: [...ids].sort(), livemode: true });
      expect(accepted.acceptedCount).toBe(dry.matchedCount - dry.cancelledCount);
      let status = await t.bulkRequests.getBulkRequest({ requestId: accepted.requestId });
      for (let polls = 0; status.state !== 'completed' && polls < 100; polls++) {
        await new Promise((r) => setTimeout(r, 100));
        status = await t.bulkRequests.getBulkRequest({ requestId: accepted.requestId });
      }
      expect(status.counts.applied).toBe(2);
      for (const id of ids) expect((await t.api.getSubscription({ subscriptionId: id })).status).toBe('paused');
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

    it('drops a scheduled resume: 200, still paused with its reason, and the read shows no schedule', async () => {
      const t = target();
      const resumeAt = new Date(Date.now() + 600_000);
      const request = { subscriptionId: await t.fulfilledId(), commandRequest: { resumeAt, reason: REASON } };
      const paused = await t.api.pauseSubscription(request, t.preferExample('pausedUntil'));
      const dropped = await t.api.deleteSubscriptionSchedule({ subscriptionId: paused.id });
      expect(dropped).toMatchObject({ id: paused.id, status: 'paused', pauseReason: REASON });
      expect(dropped.schedule).toBeUndefined();
      const read = await t.api.getSubscription({ subscriptionId: paused.id }, t.preferExample('paused'));
      expect([read.status, read.schedule]).toEqual(['paused', undefined]);
    });

    it('drops a scheduled pause before it starts: 200 without a schedule; the service keeps it fulfilled, and a second drop changes nothing', async () => {
      const t = target();
      const [pauseAt, resumeAt] = [new Date(Date.now() + 600_000), new Date(Date.now() + 1_200_000)];
      const request = { subscriptionId: await t.fulfilledId(), commandRequest: { pauseAt, resumeAt } };
      const scheduled = await t.api.pauseSubscription(request, t.preferExample('pauseScheduled'));
      expect(scheduled.status).toBe('fulfilled');
      expect(scheduled.schedule?.pauseAt).toMatch(/\.\d{6}Z$/);
      const dropped = await t.api.deleteSubscriptionSchedule({ subscriptionId: scheduled.id });
      expect(dropped.id).toBe(scheduled.id);
      expect(dropped.schedule).toBeUndefined();
      // The mock's one documented answer is a paused subscription ('dropped'): it cannot know this one was fulfilled.
      if (!t.stateful) return;
      expect(dropped.status).toBe('fulfilled');
      expect(dropped.modifiedAt).not.toBe(scheduled.modifiedAt);
      expect(await t.api.deleteSubscriptionSchedule({ subscriptionId: scheduled.id })).toEqual(dropped);
      expect(await t.api.getSubscription({ subscriptionId: scheduled.id })).toEqual(dropped);
    });

    it('dropping the schedule of a cancelled subscription answers 409 0030', async () => {
      const t = target();
      const { status, body } = await problemOf(t.api.deleteSubscriptionSchedule({ subscriptionId: await t.cancelledId() }, t.prefer(409)));
      expect([status, body.code]).toEqual([409, '0030']);
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
      const endpoint = await t.webhooks.createWebhookEndpoint({
        webhookEndpointCreate: { url: t.webhookUrl, events: ['*'], description: 'Billing' },
      });
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

    it('schedules a pause: its subscription.pause_scheduled event shows the subscription as answered, the schedule, and the API key that asked', async () => {
      const t = target();
      const [pauseAt, resumeAt] = [new Date(Date.now() + 600_000), new Date(Date.now() + 1_200_000)];
      const scheduled = await t.api.pauseSubscription(
        { subscriptionId: await t.fulfilledId(), commandRequest: { pauseAt, resumeAt } },
        t.preferExample('pauseScheduled'),
      );
      expect(scheduled.status).toBe('fulfilled');
      // The service records the event right after its answer: look until it is there (the mock is asked for its documented one).
      const subscriptionOf = (e: EventList['data'][number]) => ('subscription' in e.data ? e.data.subscription : undefined);
      const ofIt = (page: EventList) => (t.stateful ? page.data.find((e) => subscriptionOf(e)?.id === scheduled.id) : page.data[0]);
      const page = await waitFor(
        () => t.events.listEvents({ type: 'subscription.pause_scheduled', limit: 100 }, t.preferExample('pauseScheduled')),
        (p) => ofIt(p) !== undefined,
        20_000,
      );
      const event = ofIt(page)!;
      expect(event.type).toBe('subscription.pause_scheduled');
      const data = event.data as SubscriptionEventData;
      expect(data.cause.kind).toBe('api');
      expect(data.cause.apiKeyId).toEqual(expect.any(String));
      expect(data.schedule).toEqual(data.subscription.schedule);
      if (!t.stateful) return;
      expect(data.subscription).toEqual(scheduled);
      expect(event.createdAt).toBe(scheduled.modifiedAt);
    });

    it('manages a webhook endpoint: registers it, sees a delivery, lists and reads it, disables and narrows it, deletes it (204), then 404 0023', async () => {
      const t = target();
      const created = await t.webhooks.createWebhookEndpoint({
        webhookEndpointCreate: { url: t.webhookUrl, events: ['*'], description: 'Lifecycle' },
      });
      await t.api.pauseSubscription({ subscriptionId: await t.fulfilledId() });
      // The service fans the event out to its endpoints right after its answer: look until the delivery is there.
      const deliveries = await waitFor(
        () => t.webhooks.listWebhookDeliveries({ endpointId: created.id }),
        (page) => page.data.length > 0,
        20_000,
      );
      expect(deliveries.data.map((d) => d.eventType)).toContain('subscription.paused');
      expect(deliveries.hasMore).toBe(deliveries.nextCursor !== null);
      const listed = await t.webhooks.listWebhookEndpoints({ limit: 100 });
      expect(listed.hasMore).toBe(listed.nextCursor !== null);
      const read = await t.webhooks.getWebhookEndpoint({ endpointId: created.id });
      const updated = await t.webhooks.updateWebhookEndpoint({
        endpointId: created.id,
        webhookEndpointUpdate: { status: 'disabled', events: ['subscription.resumed'] },
      });
      if (t.stateful) {
        const { secret: _shownOnce, ...endpoint } = created;
        expect(listed.data).toContainEqual(endpoint);
        expect(read).toEqual(endpoint);
        expect(updated).toEqual({ ...endpoint, status: 'disabled', events: ['subscription.resumed'] });
        expect(await t.webhooks.getWebhookEndpoint({ endpointId: created.id })).toEqual(updated);
      }
      const deleted = await t.webhooks.deleteWebhookEndpointRaw({ endpointId: created.id });
      expect(deleted.raw.status).toBe(204);
      const { status, body } = await problemOf(t.webhooks.getWebhookEndpoint({ endpointId: created.id }, t.prefer(404)));
      expect([status, body.code]).toEqual([404, '0023']);
    });

    it('reads one event from the list by its id, and sends it again: 202, queued to the endpoints that take it', async () => {
      const t = target();
      await t.webhooks.createWebhookEndpoint({ webhookEndpointCreate: { url: t.webhookUrl, events: ['subscription.paused'] } });
      const paused = await t.api.pauseSubscription({ subscriptionId: await t.fulfilledId() });
      const ofIt = (page: EventList) => page.data.find((e) => 'subscription' in e.data && e.data.subscription.id === paused.id);
      const page = await waitFor(
        () => t.events.listEvents({ type: 'subscription.paused', limit: 100 }),
        (p) => ofIt(p) !== undefined,
        20_000,
      );
      const listed = ofIt(page);
      expect(listed).toBeDefined();
      const event = await t.events.getEvent({ eventId: listed!.id });
      expect(event).toEqual(listed);
      const resent = await t.events.resendEventRaw({ eventId: event.id });
      expect(resent.raw.status).toBe(202);
      const { eventId, queued } = await resent.value();
      expect(Number.isInteger(queued)).toBe(true);
      // The mock's answer is generated from the schema: another id, and 0.
      if (t.stateful) expect([eventId, queued > 0]).toEqual([event.id, true]);
    });

    it('replays the last minute of events to an endpoint: 202, the deliveries queued', async () => {
      const t = target();
      const created = await t.webhooks.createWebhookEndpoint({
        webhookEndpointCreate: { url: t.webhookUrl, events: ['subscription.paused'] },
      });
      const paused = await t.api.pauseSubscription({ subscriptionId: await t.fulfilledId() });
      // Replay sends stored events: wait for the pause's (the mock lists its example at once).
      const ofIt = (page: EventList) =>
        !t.stateful || page.data.some((e) => 'subscription' in e.data && e.data.subscription.id === paused.id);
      await waitFor(() => t.events.listEvents({ type: 'subscription.paused', limit: 100 }), ofIt, 20_000);
      const range = { from: new Date(Date.now() - 60_000), to: new Date(Date.now() + 60_000) };
      const replayed = await t.webhooks.replayWebhookEventsRaw({ endpointId: created.id, webhookReplayRequest: range });
      expect(replayed.raw.status).toBe(202);
      const { queuedCount } = await replayed.value();
      expect(Number.isInteger(queuedCount)).toBe(true);
      // The mock's answer is its example; the service's counts at least the pause just made.
      if (t.stateful) expect(queuedCount).toBeGreaterThanOrEqual(1);
    });

    it('an unknown event answers 404 0024, to a read and to a resend', async () => {
      const t = target();
      // One after the other: a request made before the previous answer is awaited rejects unhandled meanwhile.
      for (const send of [
        () => t.events.getEvent({ eventId: randomUUID() }, t.prefer(404)),
        () => t.events.resendEvent({ eventId: randomUUID() }, t.prefer(404)),
      ]) {
        const { status, body } = await problemOf(send());
        expect([status, body.code]).toEqual([404, '0024']);
      }
    });

    it('rolls its API key with an overlap: a new key (201, shown once) that works, the old one expiring and still working; then revokes the old one (204)', async () => {
      const t = target();
      const { apiKey, apiKeys, api } = await t.keyHolder();
      const [old] = (await apiKeys(apiKey).listApiKeys({ limit: 100 })).data;
      expect(old!.prefix).toMatch(/^sk_/);
      const rolled = await apiKeys(apiKey).rollApiKeyRaw({ keyId: old!.id, apiKeyRoll: { expiresInHours: 1 } });
      expect(rolled.raw.status).toBe(201);
      const fresh = await rolled.value();
      expect([fresh.key.startsWith(fresh.prefix), fresh.expiresAt]).toEqual([true, null]);
      await api(fresh.key).listSubscriptions({ limit: 1 });
      await api(apiKey).listSubscriptions({ limit: 1 });
      const listed = await apiKeys(fresh.key).listApiKeys({ limit: 100 });
      expect(JSON.stringify(listed)).not.toContain(fresh.key);
      if (t.stateful) {
        expect(listed.data.map((k) => k.id)).toEqual([old!.id, fresh.id]);
        expect(Date.parse(listed.data[0]!.expiresAt!) - Date.now()).toBeGreaterThan(59 * 60_000);
      }
      const revoked = await apiKeys(fresh.key).revokeApiKeyRaw({ keyId: old!.id });
      expect(revoked.raw.status).toBe(204);
      if (t.stateful) {
        const { status, body } = await problemOf(api(apiKey).listSubscriptions({ limit: 1 }));
        expect([status, body.code]).toEqual([401, '0010']);
      }
      const { status, body } = await problemOf(apiKeys(fresh.key).revokeApiKey({ keyId: fresh.id }, t.prefer(409)));
      expect([status, body.code]).toEqual([409, '0031']);
    });

    it('names a plan (200 with it), reads it back and lists it; a plan never named answers 404 0028', async () => {
      const t = target();
      const planId = randomUUID();
      // The mock answers its example, whose name is this one; the service the plan as named.
      const named = await t.plans.putPlan({ planId, planName: { name: 'Coffee beans, monthly' } });
      expect(named).toMatchObject({ name: 'Coffee beans, monthly', livemode: true });
      expect((await t.plans.getPlan({ planId })).name).toBe('Coffee beans, monthly');
      const listed = await t.plans.listPlans({ limit: 100 });
      expect(listed.data.map((plan) => plan.name)).toContain('Coffee beans, monthly');
      if (t.stateful) expect(listed.data.find((plan) => plan.planId === planId)).toEqual(named);
      const { status, body } = await problemOf(t.plans.getPlan({ planId: randomUUID() }, t.prefer(404)));
      expect([status, body.code]).toEqual([404, '0028']);
    });

    it('sets a pause policy (200 with it), reads it back; a pause without resumeAt gets one at maxPauseDays, one past it is refused 422 0032', async () => {
      const t = target();
      const { policies, api, fulfilledId } = await t.policyHolder();
      const policy = { maxPauseDays: 90, maxPausesPerYear: 2, requireResumeAt: false };
      const set = await policies.putPausePolicyRaw({ pausePolicy: policy });
      expect(set.raw.status).toBe(200);
      // The mock answers its example, a live one; the service the live key's policy.
      // A body of the three rules of before: the two left out answer null.
      const shown = { ...policy, cooldownDays: null, allowedPauseDays: null, resumeNoticeHours: null, livemode: true };
      expect(await set.value()).toEqual(shown);
      expect(await policies.getPausePolicy()).toEqual(shown);
      const paused = await api.pauseSubscription({ subscriptionId: fulfilledId });
      expect(paused.status).toBe('paused');
      if (!t.stateful) return;
      expect(Date.parse(paused.schedule?.resumeAt ?? '')).toBeGreaterThan(Date.now() + 89 * 24 * 3600_000);
      const [other] = await service.seed((await api.getSubscription({ subscriptionId: fulfilledId })).merchantId, 1, 'fulfilled');
      const resumeAt = new Date(Date.now() + 120 * 24 * 3600_000);
      const { status, body } = await problemOf(api.pauseSubscription({ subscriptionId: other!, commandRequest: { resumeAt } }));
      expect([status, body.code]).toEqual([422, '0032']);
      expect(body.detail).toMatch(/^maxPauseDays is 90;/);

      // A cooldown: the subscription just resumed cannot be paused again for 30 days.
      expect((await policies.putPausePolicy({ pausePolicy: { ...policy, cooldownDays: 30 } })).cooldownDays).toBe(30);
      expect((await api.resumeSubscription({ subscriptionId: fulfilledId })).status).toBe('fulfilled');
      const cooling = await problemOf(api.pauseSubscription({ subscriptionId: fulfilledId }));
      expect([cooling.status, cooling.body.code]).toEqual([422, '0032']);
      expect(cooling.body.detail).toMatch(/^cooldownDays is 30;/);
    });

    it("another merchant's or an unknown API key id answers 404 0025", async () => {
      const t = target();
      const { apiKey, apiKeys } = await t.keyHolder();
      const { status, body } = await problemOf(apiKeys(apiKey).rollApiKey({ keyId: randomUUID() }, t.prefer(404)));
      expect([status, body.code]).toEqual([404, '0025']);
    });

    it('test mode: makes fixtures, pauses one until 30 days ahead, advances the clock 31 days and reads it resumed with its event; a live key on a test helper answers 403 0011', async () => {
      const t = target();
      const { api, events, helpers, helpersWithLiveKey } = t.testMode;
      const made = await helpers.createTestSubscriptionsRaw({ testSubscriptionsCreate: { count: 2 } });
      expect(made.raw.status).toBe(201);
      const [subscription] = (await made.value()).data;
      expect(subscription!.livemode).toBe(false);
      const { now } = await helpers.getTestClock();
      const resumeAt = new Date(Date.parse(now) + 30 * DAY);
      await api.pauseSubscription({ subscriptionId: subscription!.id, commandRequest: { resumeAt } }, t.preferExample('pausedUntil'));
      const advanced = await helpers.advanceTestClock({ testClockAdvance: { to: new Date(Date.parse(now) + 31 * DAY) } });
      expect(advanced.livemode).toBe(false);
      if (t.stateful) {
        expect(advanced.appliedCount).toBe(1);
        expect(await api.getSubscription({ subscriptionId: subscription!.id })).toMatchObject({ status: 'fulfilled', livemode: false });
        const [latest] = (await events.listEvents({ limit: 1 })).data;
        expect(latest).toMatchObject({ type: 'subscription.resumed', livemode: false });
      }
      const { status, body } = await problemOf(helpersWithLiveKey.getTestClock(t.prefer(403)));
      expect([status, body.code]).toEqual([403, '0011']);
      const wiped = await helpers.deleteTestSubscriptions();
      if (t.stateful) expect(wiped.deletedCount).toBe(2);
    });

    it('triggers: subscription.paused answers 201 with its subscription and event, listed as that type; a live key answers 403 0011', async () => {
      const t = target();
      const { events, helpers, helpersWithLiveKey } = t.testMode;
      const triggered = await helpers.createTestTriggerRaw({ testTriggerRequest: { type: 'subscription.paused' } });
      expect(triggered.raw.status).toBe(201);
      const { subscriptionId, eventIds, livemode } = await triggered.value();
      expect(livemode).toBe(false);
      expect(eventIds).toHaveLength(1);
      if (t.stateful) {
        const event = await events.getEvent({ eventId: eventIds[0]! });
        expect(event).toMatchObject({ type: 'subscription.paused', livemode: false, data: { subscription: { id: subscriptionId } } });
      }
      const { status, body } = await problemOf(
        helpersWithLiveKey.createTestTrigger({ testTriggerRequest: { type: 'subscription.paused' } }, t.prefer(403)),
      );
      expect([status, body.code]).toEqual([403, '0011']);
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
let merchant: { merchantId: string; apiKey: string; testApiKey: string };
beforeAll(async () => {
  [mock, service] = await Promise.all([startPrism(), startTestService({ workers: 2 })]);
  merchant = await service.merchant();
});
afterAll(async () => {
  await mock?.stop();
  await service?.close();
});

/** Puts the service's subscriptions on one plan (seeded ones each have a plan of their own), through the database as seeding does. */
const seedPlan = (ids: string[], planId: string) =>
  service.db.collection('subscriptions').updateMany({ _id: { $in: ids as never[] } }, { $set: { planId } });

/** Every answer either target gives is checked against the spec, as test/support/http.ts does for the other tests. */
const checkedAgainstSpec: Middleware = {
  async post({ url, init, response }) {
    const { pathname, search } = new URL(url);
    const contentType = response.headers.get('content-type') ?? '';
    const text = await response.clone().text();
    const body: unknown = contentType.includes('json') && text ? JSON.parse(text) : text;
    const violations = await contractViolations({
      method: init.method ?? 'GET',
      path: pathname + search,
      status: response.status,
      contentType,
      body,
    });
    if (violations.length > 0)
      throw new Error(`${init.method} ${pathname} → ${response.status} breaks the contract:\n  ${violations.join('\n  ')}\n${text}`);
  },
};

const configuration = (basePath: string, apiKey?: string) =>
  new Configuration({ basePath, middleware: [checkedAgainstSpec], ...(apiKey ? { apiKey } : {}) });
const client = (basePath: string, apiKey?: string) => new SubscriptionsApi(configuration(basePath, apiKey));

scenarios('the Prism mock', () => ({
  api: client(mock.baseUrl, 'sk_any-key-the-mock-accepts'),
  bulkRequests: new BulkRequestsApi(configuration(mock.baseUrl, 'sk_any-key-the-mock-accepts')),
  events: new EventsApi(configuration(mock.baseUrl, 'sk_any-key-the-mock-accepts')),
  webhooks: new WebhookEndpointsApi(configuration(mock.baseUrl, 'sk_any-key-the-mock-accepts')),
  plans: new PlansApi(configuration(mock.baseUrl, 'sk_any-key-the-mock-accepts')),
  webhookUrl: 'https://example.com/webhooks',
  anonymous: client(mock.baseUrl),
  fulfilledId: async () => randomUUID(),
  pausedId: async () => randomUUID(),
  cancelledId: async () => randomUUID(),
  stateful: false,
  prefer: preferring,
  preferExample: preferringExample,
  keyHolder: async () => ({
    apiKey: 'sk_any-key-the-mock-accepts',
    apiKeys: (key) => new APIKeysApi(configuration(mock.baseUrl, key)),
    api: (key) => client(mock.baseUrl, key),
  }),
  policyHolder: async () => ({
    policies: new PausePolicyApi(configuration(mock.baseUrl, 'sk_any-key-the-mock-accepts')),
    api: client(mock.baseUrl, 'sk_any-key-the-mock-accepts'),
    fulfilledId: randomUUID(),
  }),
  holdHolder: async () => ({
    holds: new HoldsApi(configuration(mock.baseUrl, 'sk_any-key-the-mock-accepts')),
    api: client(mock.baseUrl, 'sk_any-key-the-mock-accepts'),
    bulkRequests: new BulkRequestsApi(configuration(mock.baseUrl, 'sk_any-key-the-mock-accepts')),
    fulfilledId: randomUUID(),
  }),
  testMode: {
    api: client(mock.baseUrl, 'sk_test_any-key-the-mock-accepts'),
    events: new EventsApi(configuration(mock.baseUrl, 'sk_test_any-key-the-mock-accepts')),
    helpers: new TestHelpersApi(configuration(mock.baseUrl, 'sk_test_any-key-the-mock-accepts')),
    helpersWithLiveKey: new TestHelpersApi(configuration(mock.baseUrl, 'sk_any-key-the-mock-accepts')),
  },
}));

scenarios('the real service', () => ({
  api: client(service.baseUrl, merchant.apiKey),
  bulkRequests: new BulkRequestsApi(configuration(service.baseUrl, merchant.apiKey)),
  events: new EventsApi(configuration(service.baseUrl, merchant.apiKey)),
  webhooks: new WebhookEndpointsApi(configuration(service.baseUrl, merchant.apiKey)),
  plans: new PlansApi(configuration(service.baseUrl, merchant.apiKey)),
  webhookUrl: 'http://127.0.0.1:9/hooks',
  anonymous: client(service.baseUrl),
  fulfilledId: async () => (await service.seed(merchant.merchantId, 1, 'fulfilled'))[0]!,
  pausedId: async () => (await service.seed(merchant.merchantId, 1, 'paused'))[0]!,
  cancelledId: async () => (await service.seed(merchant.merchantId, 1, 'cancelled'))[0]!,
  stateful: true,
  prefer: () => undefined,
  preferExample: () => undefined,
  keyHolder: async () => ({
    apiKey: (await service.merchant()).apiKey,
    apiKeys: (key) => new APIKeysApi(configuration(service.baseUrl, key)),
    api: (key) => client(service.baseUrl, key),
  }),
  policyHolder: async () => {
    const own = await service.merchant();
    return {
      policies: new PausePolicyApi(configuration(service.baseUrl, own.apiKey)),
      api: client(service.baseUrl, own.apiKey),
      fulfilledId: (await service.seed(own.merchantId, 1, 'fulfilled'))[0]!,
    };
  },
  holdHolder: async () => {
    const own = await service.merchant();
    return {
      holds: new HoldsApi(configuration(service.baseUrl, own.apiKey)),
      api: client(service.baseUrl, own.apiKey),
      bulkRequests: new BulkRequestsApi(configuration(service.baseUrl, own.apiKey)),
      fulfilledId: (await service.seed(own.merchantId, 1, 'fulfilled'))[0]!,
    };
  },
  testMode: {
    api: client(service.baseUrl, merchant.testApiKey),
    events: new EventsApi(configuration(service.baseUrl, merchant.testApiKey)),
    helpers: new TestHelpersApi(configuration(service.baseUrl, merchant.testApiKey)),
    helpersWithLiveKey: new TestHelpersApi(configuration(service.baseUrl, merchant.apiKey)),
  },
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

  it('test mode: an endpoint on loopback, a pause until 30 days ahead, an advance of 31 days: the signed resumed webhook is there when the advance answers', async () => {
    const own = await service.merchant();
    const receiver = await startReceiver();
    try {
      const endpoint = await new WebhookEndpointsApi(configuration(service.baseUrl, own.testApiKey)).createWebhookEndpoint({
        webhookEndpointCreate: { url: receiver.url, events: ['subscription.resumed'] },
      });
      receiver.secret = endpoint.secret;
      const helpers = new TestHelpersApi(configuration(service.baseUrl, own.testApiKey));
      const [subscription] = (await helpers.createTestSubscriptions({ testSubscriptionsCreate: { count: 1 } })).data;
      const { now } = await helpers.getTestClock();
      await client(service.baseUrl, own.testApiKey).pauseSubscription({
        subscriptionId: subscription!.id,
        commandRequest: { resumeAt: new Date(Date.parse(now) + 30 * DAY) },
      });

      expect((await helpers.advanceTestClock({ testClockAdvance: { to: new Date(Date.parse(now) + 31 * DAY) } })).appliedCount).toBe(1);

      expect(receiver.received).toHaveLength(1);
      expect(receiver.received[0]).toMatchObject({
        verified: true,
        body: { type: 'subscription.resumed', livemode: false, data: { subscription: { id: subscription!.id, status: 'fulfilled' } } },
      });
    } finally {
      await receiver.close();
    }
  });
});
