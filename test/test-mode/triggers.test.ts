/**
 * Triggers (docs/partners.md, "Triggers"): POST /v2/test-helpers/triggers causes a real event of
 * each type in the test mode, listed by GET /v2/events and delivered to the test mode's webhook
 * endpoints; a live key is refused with 403 0011 and an unknown type with 400 0040. `subsvc
 * trigger` calls it.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testModeIdOf } from '../../src/merchants/livemode.js';
import { loadSpec } from '../../src/lib/spec.js';
import { call, httpOf } from '../support/http.js';
import { registeredReceiver, type Receiver } from '../support/receiver.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);
const EVENT_TYPES = (loadSpec() as unknown as { components: { schemas: { EventType: { enum: string[] } } } }).components.schemas.EventType
  .enum;

let t: TestService;
const receivers: Receiver[] = [];
beforeAll(async () => {
  t = await startTestService({ workers: 1, bulkPollIntervalMs: 50, schedulePollMs: 50 });
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await t.close();
});

const { api } = httpOf(() => t);
const NOTICES = { maxPauseDays: null, maxPausesPerYear: null, requireResumeAt: false, resumeNoticeHours: 24 };

async function eventsOf(testKey: string, query: string): Promise<{ id: string; type: string; data: any }[]> {
  const res = await api(testKey, 'GET', `/v2/events?${query}&limit=100`);
  expect(res.status).toBe(200);
  return res.body.data;
}

describe('POST /v2/test-helpers/triggers', () => {
  it.each(EVENT_TYPES)(
    'with a test key, %s answers 201; the event is listed with its subscription and a webhook endpoint receives it',
    async (type) => {
      const { testApiKey } = await t.merchant();
      const { receiver } = await registeredReceiver(t.baseUrl, testApiKey, ['*'], receivers);
      // The policy's resumeNoticeHours sets the notice's time when on (the test below: a notice without it too).
      if (type === 'subscription.resume_upcoming') expect((await api(testApiKey, 'PUT', '/v2/pause-policy', NOTICES)).status).toBe(200);

      const res = await api(testApiKey, 'POST', '/v2/test-helpers/triggers', { type });

      expect(res.status).toBe(201);
      expect(res.body).toEqual({ subscriptionId: expect.any(String), eventIds: [expect.any(String)], livemode: false });
      const [eventId] = res.body.eventIds as string[];
      const [listed] = await eventsOf(testApiKey, `type=${type}`);
      expect(listed).toMatchObject({ id: eventId, type, livemode: false });
      if (type === 'bulk_request.completed') {
        // The bulk request is the one that resumed the trigger's subscription: a resume no pause policy refuses.
        // (Its own events are relayed after the answer, as any bulk request's.)
        const [resumed] = await waitFor(
          () => eventsOf(testApiKey, `subscriptionId=${res.body.subscriptionId}&type=subscription.resumed`),
          (events) => events.length > 0,
          30_000,
        );
        expect(resumed!.data.cause).toMatchObject({ kind: 'bulk', requestId: listed!.data.requestId });
        expect(listed!.data).toMatchObject({ state: 'completed', acceptedCount: 1 });
      } else if (type === 'subscription_import.completed') {
        // The import of one new subscription: the trigger's.
        expect(listed!.data).toMatchObject({ state: 'completed', rowCount: 1, createdCount: 1 });
        expect((await api(testApiKey, 'GET', `/v2/subscriptions/${res.body.subscriptionId}`)).status).toBe(200);
      } else {
        expect(listed!.data.subscription.id).toBe(res.body.subscriptionId);
        // A notice is the schedule's, sent as the test clock reaches it; a refused push the billing system's; the others are the call's own changes.
        const kind = { 'subscription.resume_upcoming': 'schedule', 'subscription.billing_sync_failed': 'billing' }[type] ?? 'api';
        expect(listed!.data.cause).toMatchObject({ kind });
      }
      const delivered = await waitFor(
        async () => receiver.received.find((r) => r.id === eventId),
        (r) => r !== undefined,
        30_000,
        100,
        `the webhook of ${eventId}`,
      );
      expect(delivered).toMatchObject({ verified: true, body: { type } });
    },
  );

  it("when the worker's poll takes the trigger's import first, subscription_import.completed still answers 201 with its new event", async () => {
    // A service whose import worker polls every millisecond: it takes most imports before the trigger does.
    const racer = await startTestService({ workers: 1, bulkPollIntervalMs: 1 });
    try {
      const { testApiKey } = await racer.merchant();
      const seen = new Set<string>();
      for (let i = 0; i < 5; i++) {
        const res = await call(racer.baseUrl, '/v2/test-helpers/triggers', {
          apiKey: testApiKey,
          json: { type: 'subscription_import.completed' },
        });
        expect(res.status).toBe(201);
        const [eventId] = res.body.eventIds as string[];
        expect(seen.has(eventId!)).toBe(false);
        seen.add(eventId!);
        expect(
          (await call(racer.baseUrl, `/v2/subscriptions/${res.body.subscriptionId}`, { method: 'GET', apiKey: testApiKey })).status,
        ).toBe(200);
      }
      // One event per import: none completed twice by the worker and the trigger at once.
      const listed = await call(racer.baseUrl, '/v2/events?type=subscription_import.completed&limit=100', {
        method: 'GET',
        apiKey: testApiKey,
      });
      expect(new Set(listed.body.data.map((e: { id: string }) => e.id))).toEqual(seen);
    } finally {
      await racer.close();
    }
  });

  it('a live key answers 403 0011 and makes nothing', async () => {
    const m = await t.merchant();
    const res = await api(m.apiKey, 'POST', '/v2/test-helpers/triggers', { type: 'subscription.paused' });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: '0011', title: 'Test mode only' });
    const made = await t.db.collection('subscriptions').countDocuments({ merchantId: { $in: [m.merchantId, testModeIdOf(m.merchantId)] } });
    expect(made).toBe(0);
  });

  it.each(EVENT_TYPES)(
    'under a pause policy that refuses every pause and sends no notices, %s answers 201 with its event',
    async (type) => {
      const { testApiKey } = await t.merchant();
      const strict = { maxPauseDays: null, maxPausesPerYear: 0, requireResumeAt: true, cooldownDays: 365, resumeNoticeHours: null };
      expect((await api(testApiKey, 'PUT', '/v2/pause-policy', strict)).status).toBe(200);

      const res = await api(testApiKey, 'POST', '/v2/test-helpers/triggers', { type });

      expect(res.status).toBe(201);
      expect(res.body.eventIds).toHaveLength(1);
      const [listed] = await eventsOf(testApiKey, `type=${type}`);
      expect(listed).toMatchObject({ id: res.body.eventIds[0], type });
      // The policy itself is left as it was.
      expect((await api(testApiKey, 'GET', '/v2/pause-policy')).body).toMatchObject({ maxPausesPerYear: 0, resumeNoticeHours: null });
    },
  );

  it('a type that is not an event type answers 400 0040 naming /type', async () => {
    const { testApiKey } = await t.merchant();
    const res = await api(testApiKey, 'POST', '/v2/test-helpers/triggers', { type: 'subscription.exploded' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: '0040', errors: [expect.objectContaining({ path: '/type' })] });
  });
});

describe('subsvc trigger', () => {
  it('calls the API with SUBSVC_API_KEY at SUBSVC_URL and prints its answer', async () => {
    const { testApiKey } = await t.merchant();
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/main/cli.ts', 'trigger', 'subscription.paused'], {
      env: { ...process.env, SUBSVC_API_KEY: testApiKey, SUBSVC_URL: t.baseUrl },
    });
    const printed = JSON.parse(stdout);
    expect(printed).toEqual({ subscriptionId: expect.any(String), eventIds: [expect.any(String)], livemode: false });
    const [listed] = await eventsOf(testApiKey, `subscriptionId=${printed.subscriptionId}`);
    expect(listed).toMatchObject({ id: printed.eventIds[0], type: 'subscription.paused' });
  });

  it('without SUBSVC_API_KEY it says so and exits 2', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, SUBSVC_URL: t.baseUrl };
    delete env.SUBSVC_API_KEY;
    const failed = await run(process.execPath, ['--import', 'tsx', 'src/main/cli.ts', 'trigger', 'subscription.paused'], { env }).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed).toMatchObject({ code: 2, stderr: expect.stringContaining('SUBSVC_API_KEY') });
  });
});
