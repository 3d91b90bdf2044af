/**
 * A merchant's scenarios with @subsvc/client installed from its tarball, run by Node's own test
 * runner in a scratch project (scripts/clients/test.ts) against the target SUBSVC_TARGET names:
 * the Prism mock or the service, each behind a proxy that checks every answer against the spec.
 * The same scenarios, in Python with the wheel: clients/scenarios/python/test_scenarios.py.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import {
  BulkRequestsApi,
  Configuration,
  CustomerPortalApi,
  EventsApi,
  HoldsApi,
  PausePolicyApi,
  PlansApi,
  ResponseError,
  SubscriptionsApi,
  TestHelpersApi,
  WebhookEndpointsApi,
  type InitOverrideFunction,
} from '@subsvc/client';
import { Webhook } from 'standardwebhooks';

interface Target {
  readonly name: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  /** The same merchant's test-mode key (sk_test_…). */
  readonly testApiKey: string;
  /** The service keeps what a request changed; the mock answers each request from the spec alone. */
  readonly stateful: boolean;
  /** The spec's info.version, which the package carries. */
  readonly specVersion: string;
  /** Subscription ids the merchant owns, by status (the mock's are any UUIDs). */
  readonly ids: Record<'fulfilled' | 'paused' | 'cancelled', string[]>;
}

const target = JSON.parse(readFileSync(process.env.SUBSVC_TARGET!, 'utf8')) as Target;
const configuration = new Configuration({ basePath: target.baseUrl, apiKey: target.apiKey });
const subscriptions = new SubscriptionsApi(configuration);
const bulkRequests = new BulkRequestsApi(configuration);
const events = new EventsApi(configuration);
const webhooks = new WebhookEndpointsApi(configuration);
const pausePolicy = new PausePolicyApi(configuration);
const portal = new CustomerPortalApi(configuration);
const plans = new PlansApi(configuration);
const REASON = 'Travelling until the 1st';

function take(status: keyof Target['ids']): string {
  const id = target.ids[status].shift();
  if (!id) throw new Error(`the target has no ${status} subscription left`);
  return id;
}

/** The mock answers what it is asked for (`Prefer`); the service decides by itself, so it is sent nothing. */
function prefer(value: string): InitOverrideFunction | undefined {
  if (target.stateful) return undefined;
  return async ({ init }) => ({ headers: { ...(init.headers as Record<string, string>), Prefer: value } });
}

async function problemOf(call: Promise<unknown>): Promise<{ status: number; code: unknown }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(error instanceof ResponseError, `expected an error answer, got ${String(error)}`);
  assert.match(error.response.headers.get('content-type') ?? '', /^application\/problem\+json/);
  const body = (await error.response.json()) as { code: unknown };
  return { status: error.response.status, code: body.code };
}

async function poll<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`waited 20 s for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const DAY = 24 * 60 * 60 * 1000;

/** The bulk request once completed (the service only: the mock's never move). */
function completed(requests: BulkRequestsApi, requestId: string) {
  return poll(
    () => requests.getBulkRequest({ requestId }),
    (s) => s.state === 'completed',
    `bulk request ${requestId} to complete`,
  );
}

describe(`@subsvc/client against ${target.name}`, () => {
  it('test mode: fixtures, a pause until 30 days ahead, an advance of 31 days: resumed; a live key on a test helper: 403 0011', async () => {
    const test = new Configuration({ basePath: target.baseUrl, apiKey: target.testApiKey });
    const helpers = new TestHelpersApi(test);
    const testSubscriptions = new SubscriptionsApi(test);
    const [made] = (await helpers.createTestSubscriptions({ testSubscriptionsCreate: { count: 1 } })).data;
    assert.equal(made!.livemode, false);
    const { now } = await helpers.getTestClock();
    await testSubscriptions.pauseSubscription(
      { subscriptionId: made!.id, commandRequest: { resumeAt: new Date(Date.parse(now) + 30 * DAY) } },
      prefer('example=pausedUntil'),
    );
    const advanced = await helpers.advanceTestClock({ testClockAdvance: { to: new Date(Date.parse(now) + 31 * DAY) } });
    if (target.stateful) {
      assert.equal(advanced.appliedCount, 1);
      assert.equal((await testSubscriptions.getSubscription({ subscriptionId: made!.id })).status, 'fulfilled');
    }
    const refused = await problemOf(new TestHelpersApi(configuration).getTestClock(prefer('code=403')));
    assert.deepEqual([refused.status, refused.code], [403, '0011']);
  });

  it("is installed as the contract's version, an ES module with its types, depending on nothing", () => {
    const installed = JSON.parse(readFileSync(new URL('./node_modules/@subsvc/client/package.json', import.meta.url), 'utf8')) as Record<
      string,
      unknown
    >;
    assert.deepEqual(
      [installed.version, installed.type, installed.types, installed.dependencies],
      [target.specVersion, 'module', './dist/index.d.ts', undefined],
    );
  });

  it('pauses a subscription: 200 with it paused, merchantId included', async () => {
    const paused = await subscriptions.pauseSubscription({ subscriptionId: take('fulfilled') });
    assert.equal(paused.status, 'paused');
    assert.match(paused.merchantId, /^[0-9a-f-]{36}$/i);
    assert.match(paused.modifiedAt, /\.\d{6}Z$/);
  });

  it('creates a subscription from its billing record, finds it by externalId and cancels it: 201, then cancelled', async () => {
    const externalId = `sub_${randomUUID()}`;
    const created = await subscriptions.createSubscription({
      subscriptionCreate: { externalId, planId: randomUUID(), metadata: { crm: 'A-1' } },
    });
    assert.equal(created.status, 'fulfilled');
    if (target.stateful) {
      assert.equal(created.externalId, externalId);
      const found = await subscriptions.listSubscriptions({ externalId });
      assert.deepEqual(
        found.data.map((s) => s.id),
        [created.id],
      );
    }
    const cancelled = await subscriptions.cancelSubscription({ subscriptionId: created.id, subscriptionCancel: { reason: 'closed' } });
    assert.equal(cancelled.status, 'cancelled');
  });

  it('resumes a subscription: 200 with it fulfilled', async () => {
    const resumed = await subscriptions.resumeSubscription({ subscriptionId: take('paused') });
    assert.equal(resumed.status, 'fulfilled');
    assert.ok(Number.isInteger(resumed.cycle));
  });

  it('retries a pause with the same Idempotency-Key: the same answer, replayed by the service', async () => {
    const request = { subscriptionId: take('fulfilled'), idempotencyKey: randomUUID() };
    const first = await subscriptions.pauseSubscriptionRaw(request);
    const again = await subscriptions.pauseSubscriptionRaw(request);
    assert.deepEqual([first.raw.status, again.raw.status], [200, 200]);
    // The mock remembers nothing, so never replays (the spec says so).
    if (!target.stateful) return;
    assert.equal(again.raw.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(await again.value(), await first.value());
  });

  it('bulk-pauses subscriptions and follows the request from its 202 to each outcome', async () => {
    const ids = [take('fulfilled'), take('fulfilled')];
    const accepted = await subscriptions.bulkPauseSubscriptionsRaw({ bulkCommandRequest: { subscriptions: ids } });
    const { requestId, operation } = await accepted.value();
    assert.deepEqual([accepted.raw.status, operation], [202, 'PAUSE']);
    assert.equal(accepted.raw.headers.get('location'), `/v2/bulk-requests/${requestId}`);
    const status = await poll(
      () => bulkRequests.getBulkRequest({ requestId }),
      (s) => s.state === 'completed',
      'the bulk request to complete',
    );
    const { pending, applied, noop, skipped, failed } = status.counts;
    assert.equal(pending + applied + noop + skipped + failed, status.acceptedCount);
    const items = await bulkRequests.listBulkRequestItems({ requestId });
    const appliedItems = items.data.filter((item) => item.outcome === 'applied');
    assert.ok(appliedItems.length > 0);
    for (const item of appliedItems) {
      assert.equal(
        (await subscriptions.getSubscription({ subscriptionId: item.subscriptionId }, prefer('example=paused'))).status,
        'paused',
      );
    }
  });

  it('previews a bulk pause and a bulk resume: 200 with what each would match, and nothing changed', async () => {
    const [active, cancelled] = [take('fulfilled'), take('cancelled')];
    const pause = await subscriptions.previewBulkPause({ bulkPausePreviewRequest: { subscriptions: [active, cancelled, randomUUID()] } });
    const resume = await subscriptions.previewBulkResume({ bulkPreviewRequest: { filter: { status: ['paused'] } } });
    for (const preview of [pause, resume]) assert.ok(preview.sample.length <= Math.min(20, preview.matchedCount));
    // The mock answers the spec's one example.
    if (!target.stateful) return;
    assert.deepEqual([pause.matchedCount, pause.cancelledCount, pause.policyRejectedCount, pause.sample], [2, 1, 0, [active]]);
    assert.equal((await subscriptions.getSubscription({ subscriptionId: active })).status, 'fulfilled');
    assert.deepEqual([resume.matchedCount, resume.cancelledCount], [resume.sample.length, 0]);
  });

  it('bulk-resumes with an id it does not know: accepted, and every rejected id has a documented reason', async () => {
    const accepted = await subscriptions.bulkResumeSubscriptions({ bulkCommandRequest: { subscriptions: [take('paused'), randomUUID()] } });
    for (const { reason } of accepted.rejected ?? []) assert.ok(['not_found', 'cancelled'].includes(reason));
    // The mock answers with the spec's one 202 example, a pause's.
    if (target.stateful) assert.deepEqual([accepted.operation, accepted.acceptedCount, accepted.rejected?.length], ['RESUME', 1, 1]);
  });

  it('pauses until a time ahead with a reason, reads the schedule back, then drops it', async () => {
    const resumeAt = new Date(Date.now() + 600_000);
    const paused = await subscriptions.pauseSubscription(
      { subscriptionId: take('fulfilled'), commandRequest: { resumeAt, reason: REASON } },
      prefer('example=pausedUntil'),
    );
    assert.deepEqual([paused.status, paused.pauseReason], ['paused', REASON]);
    assert.match(String(paused.schedule?.resumeAt), /\.\d{6}Z$/);
    const read = await subscriptions.getSubscription({ subscriptionId: paused.id }, prefer('example=pausedUntil'));
    assert.deepEqual(read.schedule, paused.schedule);
    const dropped = await subscriptions.deleteSubscriptionSchedule({ subscriptionId: paused.id });
    assert.deepEqual([dropped.status, dropped.schedule], ['paused', undefined]);
  });

  it('reads its pause policy and sets it, every rule off: 200 with the policy as set', async () => {
    // Every rule off, the merchant's default: the other scenarios' pauses stay as they are.
    const off = { maxPauseDays: null, maxPausesPerYear: null, requireResumeAt: false };
    // The answer is the policy and whose data it governs (a live key's here).
    // Rules a request leaves out are off, and every answer shows all of them.
    const shown = { ...off, cooldownDays: null, allowedPauseDays: null, resumeNoticeHours: null, livemode: true };
    assert.deepEqual(await pausePolicy.getPausePolicy(prefer('example=off')), shown);
    assert.deepEqual(await pausePolicy.putPausePolicy({ pausePolicy: off }, prefer('example=off')), shown);
  });

  it('names a plan, reads it and lists it: 200 with the name; a plan never named answers 404 0028', async () => {
    const planId = randomUUID();
    // The mock answers its example, which carries this name; the service the plan as named.
    const named = await plans.putPlan({ planId, planName: { name: 'Coffee beans, monthly' } });
    assert.deepEqual([named.name, named.livemode], ['Coffee beans, monthly', true]);
    assert.equal((await plans.getPlan({ planId })).name, 'Coffee beans, monthly');
    const listed = await plans.listPlans({ limit: 100 });
    if (target.stateful)
      assert.deepEqual(
        listed.data.find((plan) => plan.planId === planId),
        named,
      );
    assert.deepEqual(await problemOf(plans.getPlan({ planId: randomUUID() }, prefer('code=404'))), { status: 404, code: '0028' });
  });

  it('lists subscriptions a page at a time', async () => {
    const page = await subscriptions.listSubscriptions({ limit: 1 });
    assert.ok(page.data.length <= 1);
    assert.equal(page.hasMore, page.nextCursor !== null);
  });

  it('finds the event of a pause in the events list, newest first, and reads it by its id', async () => {
    const paused = await subscriptions.pauseSubscription({ subscriptionId: take('fulfilled') });
    const ofIt = (page: Awaited<ReturnType<EventsApi['listEvents']>>) =>
      target.stateful ? page.data.find((e) => 'subscription' in e.data && e.data.subscription.id === paused.id) : page.data[0];
    const page = await poll(
      () => events.listEvents({ type: 'subscription.paused', limit: 100 }),
      (p) => ofIt(p) !== undefined,
      'the pause event',
    );
    const listed = ofIt(page)!;
    assert.equal(listed.type, 'subscription.paused');
    if (target.stateful) assert.deepEqual(await events.getEvent({ eventId: listed.id }), listed);
  });

  it('answers errors as problems with their codes: 404 0020, 401 0010, 400 0040, 409 0030', async () => {
    const anonymous = new SubscriptionsApi(new Configuration({ basePath: target.baseUrl }));
    assert.deepEqual(await problemOf(subscriptions.pauseSubscription({ subscriptionId: randomUUID() }, prefer('code=404'))), {
      status: 404,
      code: '0020',
    });
    assert.deepEqual(await problemOf(anonymous.resumeSubscription({ subscriptionId: randomUUID() })), { status: 401, code: '0010' });
    assert.deepEqual(await problemOf(subscriptions.bulkPauseSubscriptions({ bulkCommandRequest: { subscriptions: ['not-a-uuid'] } })), {
      status: 400,
      code: '0040',
    });
    assert.deepEqual(await problemOf(subscriptions.pauseSubscription({ subscriptionId: take('cancelled') }, prefer('code=409'))), {
      status: 409,
      code: '0030',
    });
  });

  // The mock sends no webhook: this one needs the service.
  it(
    'receives the webhook of a pause and verifies its signature with standardwebhooks',
    { skip: target.stateful ? false : 'the mock sends no webhooks' },
    async () => {
      const received: { body: string; headers: Record<string, string> }[] = [];
      const receiver = createServer((request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => {
          received.push({ body, headers: request.headers as Record<string, string> });
          response.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
        const endpoint = await webhooks.createWebhookEndpoint({ webhookEndpointCreate: { url, events: ['subscription.paused'] } });
        const paused = await subscriptions.pauseSubscription({ subscriptionId: take('fulfilled') });
        const wh = new Webhook(endpoint.secret);
        const ofIt = () =>
          received.find(
            (r) => (wh.verify(r.body, r.headers) as { data: { subscription: { id: string } } }).data.subscription.id === paused.id,
          );
        const delivery = await poll(
          async () => ofIt(),
          (d) => d !== undefined,
          'the webhook delivery',
        );
        assert.equal(delivery!.headers['webhook-id']?.length, 36);
        assert.throws(() => wh.verify(delivery!.body.replace('paused', 'resumed'), delivery!.headers), /signature/i);
        await webhooks.deleteWebhookEndpoint({ endpointId: endpoint.id });
      } finally {
        receiver.closeAllConnections();
        await new Promise((resolve) => receiver.close(resolve));
      }
    },
  );

  it('makes a portal link for a customer, lists it and revokes it: 201, 204, then 404 0027', async () => {
    const subscriptionId = take('fulfilled');
    const made = await portal.createPortalLinkRaw({
      subscriptionId,
      portalLinkCreate: { actions: new Set(['pause'] as const), expiresInMinutes: 60 },
    });
    const link = await made.value();
    assert.equal(made.raw.status, 201);
    assert.match(link.url, /\/portal\/[A-Za-z0-9_-]{43}$/);
    const listed = await portal.listPortalLinks({ subscriptionId });
    // The mock answers the spec's examples, another subscription's link.
    if (target.stateful) {
      assert.deepEqual([link.subscriptionId, [...link.actions]], [subscriptionId, ['pause']]);
      assert.deepEqual(
        listed.data.map((item) => item.id),
        [link.id],
      );
    }
    const revoked = await portal.revokePortalLinkRaw({ portalLinkId: link.id });
    assert.equal(revoked.raw.status, 204);
    assert.deepEqual(await problemOf(portal.revokePortalLink({ portalLinkId: link.id }, prefer('code=404'))), {
      status: 404,
      code: '0027',
    });
    if (target.stateful) assert.deepEqual((await portal.listPortalLinks({ subscriptionId })).data, []);
  });

  // Last, and in test mode: a hold covers every subscription of its mode, so the live ones the other
  // scenarios use are left alone, and the test ones are resumed before it ends.
  it('holds the test store and releases it: 202 with the hold, listed and read, its subscription paused then resumed, then 409 0035', async () => {
    const test = new Configuration({ basePath: target.baseUrl, apiKey: target.testApiKey });
    const [holds, testSubscriptions, testRequests] = [new HoldsApi(test), new SubscriptionsApi(test), new BulkRequestsApi(test)];
    const [made] = (await new TestHelpersApi(test).createTestSubscriptions({ testSubscriptionsCreate: { count: 1 } })).data;
    const placed = await holds.createHoldRaw({ idempotencyKey: randomUUID(), holdRequest: { reason: 'Stock-out' } });
    const hold = await placed.value();
    assert.deepEqual([placed.raw.status, placed.raw.headers.get('location'), hold.status], [202, `/v2/holds/${hold.id}`, 'active']);
    assert.equal((await holds.getHold({ holdId: hold.id })).id, hold.id);
    const listed = await holds.listHolds({ limit: 100 });
    if (target.stateful) {
      assert.deepEqual([hold.reason, hold.livemode, listed.data.map((h) => h.id)], ['Stock-out', false, [hold.id]]);
      assert.equal((await completed(testRequests, hold.requestId)).operation, 'PAUSE');
      const held = await testSubscriptions.getSubscription({ subscriptionId: made!.id });
      assert.deepEqual([held.status, held.holdIds], ['paused', [hold.id]]);
    }
    const released = await holds.releaseHold({ holdId: hold.id });
    assert.equal(released.status, 'released');
    assert.ok(released.releaseRequestId && released.releasedAt);
    if (target.stateful) {
      assert.equal((await completed(testRequests, released.releaseRequestId)).operation, 'RESUME');
      assert.equal((await testSubscriptions.getSubscription({ subscriptionId: made!.id })).status, 'fulfilled');
    }
    const again = await problemOf(holds.releaseHold({ holdId: hold.id }, prefer('code=409, example=released')));
    assert.deepEqual([again.status, again.code], [409, '0035']);
  });
});
