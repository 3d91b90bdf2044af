/**
 * Test mode and test clocks (docs/partners.md): a test key sees only test data and a live key
 * only live data, on every operation; fixtures through the API; a clock whose advance applies the
 * test mode's due schedules, with their events and signed webhooks, before it answers.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testModeIdOf } from '../../src/merchants/livemode.js';
import { httpOf } from '../support/http.js';
import { registeredReceiver, type Receiver } from '../support/receiver.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let t: TestService;
const receivers: Receiver[] = [];
beforeAll(async () => {
  t = await startTestService({ workers: 1, bulkPollIntervalMs: 50, schedulePollMs: 50, webhookRetryDelaysMs: [300] });
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await t.close();
});

const DAY = 24 * 60 * 60 * 1000;
const { api } = httpOf(() => t);
const iso = (ms: number) => new Date(ms).toISOString();

async function fixtures(testKey: string, count: number, status = 'fulfilled'): Promise<string[]> {
  const res = await api(testKey, 'POST', '/v2/test-helpers/subscriptions', { count, status });
  expect(res.status).toBe(201);
  return res.body.data.map((s: { id: string }) => s.id);
}

const endpointFor = (apiKey: string, events = ['*']) => registeredReceiver(t.baseUrl, apiKey, events, receivers);

async function clockOf(testKey: string): Promise<string> {
  const res = await api(testKey, 'GET', '/v2/test-helpers/clock');
  expect(res.status).toBe(200);
  return res.body.now;
}

describe('test-mode keys', () => {
  it('a new merchant has a live key sk_live_… and a test key sk_test_…; each key makes keys of its own mode', async () => {
    const m = await t.merchant();
    expect(m.apiKey).toMatch(/^sk_live_/);
    expect(m.testApiKey).toMatch(/^sk_test_/);
    const live = await api(m.apiKey, 'POST', '/v2/api-keys');
    const test = await api(m.testApiKey, 'POST', '/v2/api-keys');
    expect([live.status, test.status]).toEqual([201, 201]);
    expect(live.body).toMatchObject({
      livemode: true,
      key: expect.stringMatching(/^sk_live_/),
      prefix: expect.stringMatching(/^sk_live_/),
    });
    expect(test.body).toMatchObject({
      livemode: false,
      key: expect.stringMatching(/^sk_test_/),
      prefix: expect.stringMatching(/^sk_test_/),
    });
  });

  it('a live key on every test helper answers 403 0011 and does nothing', async () => {
    const m = await t.merchant();
    const calls: [string, string, unknown?][] = [
      ['POST', '/v2/test-helpers/subscriptions', { count: 2 }],
      ['DELETE', '/v2/test-helpers/subscriptions'],
      ['GET', '/v2/test-helpers/clock'],
      ['POST', '/v2/test-helpers/clock/advance', { to: iso(Date.now() + DAY) }],
    ];
    const [live] = await t.seed(m.merchantId, 1);
    for (const [method, path, body] of calls) {
      const res = await api(m.apiKey, method, path, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body).toMatchObject({ code: '0011', title: 'Test mode only' });
    }
    expect(await t.db.collection('subscriptions').countDocuments({ merchantId: { $in: [m.merchantId, testModeIdOf(m.merchantId)] } })).toBe(
      1,
    );
    expect((await api(m.apiKey, 'GET', `/v2/subscriptions/${live}`)).status).toBe(200);
    expect(await t.db.collection('testClocks').countDocuments({ _id: testModeIdOf(m.merchantId) as never })).toBe(0);
  });
});

describe('fixtures', () => {
  it('are made in the test mode with livemode false, listed with the test key only, and wiped by DELETE', async () => {
    const m = await t.merchant();
    const planId = randomUUID();
    const made = await api(m.testApiKey, 'POST', '/v2/test-helpers/subscriptions', {
      count: 3,
      status: 'paused',
      planId,
      createdAt: '2026-01-02T03:04:05Z',
    });
    expect(made.status).toBe(201);
    expect(made.body.data).toHaveLength(3);
    for (const s of made.body.data) {
      expect(s).toMatchObject({
        merchantId: testModeIdOf(m.merchantId),
        planId,
        status: 'paused',
        createdAt: '2026-01-02T03:04:05.000000Z',
        livemode: false,
      });
    }
    const listed = await api(m.testApiKey, 'GET', '/v2/subscriptions?limit=100');
    expect(listed.body.data.map((s: { id: string }) => s.id).sort()).toEqual(made.body.data.map((s: { id: string }) => s.id).sort());
    expect((await api(m.apiKey, 'GET', '/v2/subscriptions?limit=100')).body.data).toEqual([]);

    const wiped = await api(m.testApiKey, 'DELETE', '/v2/test-helpers/subscriptions');
    expect(wiped.status).toBe(200);
    expect(wiped.body).toEqual({ deletedCount: 3, livemode: false });
    expect((await api(m.testApiKey, 'GET', '/v2/subscriptions')).body.data).toEqual([]);
  });

  it("DELETE removes the test mode's subscriptions only: the live ones stay", async () => {
    const m = await t.merchant();
    const [live] = await t.seed(m.merchantId, 1);
    await fixtures(m.testApiKey, 2);
    expect((await api(m.testApiKey, 'DELETE', '/v2/test-helpers/subscriptions')).body.deletedCount).toBe(2);
    expect((await api(m.apiKey, 'GET', `/v2/subscriptions/${live}`)).body).toMatchObject({ id: live, livemode: true });
  });
});

describe('test clocks', () => {
  it('a pause with resumeAt 30 days ahead, then an advance of 31 days: resumed, with its events recorded and a signed test-mode webhook', async () => {
    const m = await t.merchant();
    const test = await endpointFor(m.testApiKey);
    const live = await endpointFor(m.apiKey);
    const [id] = await fixtures(m.testApiKey, 1);
    const start = Date.parse(await clockOf(m.testApiKey));
    const resumeAt = iso(start + 30 * DAY);
    const paused = await api(m.testApiKey, 'POST', `/v2/subscriptions/${id}/pause`, { resumeAt });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ status: 'paused', livemode: false });

    const advanced = await api(m.testApiKey, 'POST', '/v2/test-helpers/clock/advance', { to: iso(start + 31 * DAY) });

    expect(advanced.status).toBe(200);
    expect(advanced.body).toEqual({ now: iso(start + 31 * DAY).replace('Z', '000Z'), appliedCount: 1, livemode: false });
    expect((await api(m.testApiKey, 'GET', `/v2/subscriptions/${id}`)).body).toMatchObject({
      status: 'fulfilled',
      modifiedAt: resumeAt.replace('Z', '000Z'),
      livemode: false,
    });
    // Recorded before the advance answered: read at once, no waiting.
    const events = (await api(m.testApiKey, 'GET', '/v2/events')).body.data;
    expect(events.map((e: { type: string }) => e.type)).toEqual([
      'subscription.resumed',
      'subscription.resume_scheduled',
      'subscription.paused',
    ]);
    expect(events[0]).toMatchObject({
      livemode: false,
      createdAt: resumeAt.replace('Z', '000Z'),
      data: { subscription: { id, status: 'fulfilled', livemode: false }, cause: { kind: 'schedule' } },
    });
    // Delivered before the advance answered too: the receiver has it already, no waiting.
    const resumed = test.receiver.received.filter((r) => r.body.type === 'subscription.resumed');
    expect(resumed).toHaveLength(1);
    expect(resumed[0]).toMatchObject({
      id: events[0].id,
      verified: true,
      body: { livemode: false, data: { subscription: { id, livemode: false } } },
    });
    // One first attempt, recorded as the worker records its own: the workers send no second copy.
    const deliveries = (await api(m.testApiKey, 'GET', `/v2/webhook-endpoints/${test.id}/deliveries`)).body.data;
    expect(deliveries.find((d: { eventId: string }) => d.eventId === events[0].id)).toMatchObject({
      status: 'succeeded',
      attempts: [{ statusCode: 200 }],
      livemode: false,
    });
    // A later change's webhook, sent by the workers, has arrived: still one copy of the resumed one.
    const [later] = await fixtures(m.testApiKey, 1);
    expect((await api(m.testApiKey, 'POST', `/v2/subscriptions/${later}/pause`)).status).toBe(200);
    await waitFor(
      async () => test.receiver.received.filter((r) => r.body.data.subscription?.id === later),
      (r) => r.length > 0,
      30_000,
      100,
      "the later pause's webhook",
    );
    expect(test.receiver.received.filter((r) => r.id === events[0].id)).toHaveLength(1);
    // Test-mode events go to test-mode endpoints only: the live endpoint has no delivery.
    expect((await api(m.apiKey, 'GET', `/v2/webhook-endpoints/${live.id}/deliveries`)).body.data).toEqual([]);
    expect(live.receiver.received).toEqual([]);
    expect((await api(m.apiKey, 'GET', '/v2/events')).body.data).toEqual([]);
  });

  it('an endpoint that answers 500 to the first attempt does not fail the advance: its delivery is retried later as usual, once', async () => {
    const m = await t.merchant();
    const test = await endpointFor(m.testApiKey, ['subscription.resumed']);
    test.receiver.answers = [500];
    const [id] = await fixtures(m.testApiKey, 1);
    const start = Date.parse(await clockOf(m.testApiKey));
    expect((await api(m.testApiKey, 'POST', `/v2/subscriptions/${id}/pause`, { resumeAt: iso(start + DAY) })).status).toBe(200);

    const advanced = await api(m.testApiKey, 'POST', '/v2/test-helpers/clock/advance', { to: iso(start + 2 * DAY) });

    expect(advanced.status).toBe(200);
    expect(advanced.body).toMatchObject({ appliedCount: 1, livemode: false });
    const firstAttempts = test.receiver.received.filter((r) => r.body.type === 'subscription.resumed');
    expect(firstAttempts).toHaveLength(1);
    const eventId = firstAttempts[0]!.id;
    const deliveryOf = async () =>
      (await api(m.testApiKey, 'GET', `/v2/webhook-endpoints/${test.id}/deliveries`)).body.data.find(
        (d: { eventId: string }) => d.eventId === eventId,
      );
    // Its first attempt is recorded already (the retry, 300 ms later here, may have come too).
    expect((await deliveryOf()).attempts[0]).toMatchObject({ statusCode: 500 });
    // The retry schedule sends it again with the same webhook-id, recorded as its second attempt.
    const delivered = await waitFor(deliveryOf, (d) => d.status === 'succeeded', 30_000, 100, 'the retried delivery');
    expect(delivered.attempts.map((a: { statusCode: number }) => a.statusCode)).toEqual([500, 200]);
    expect(test.receiver.received.filter((r) => r.id === eventId).map((r) => r.verified)).toEqual([true, true]);
  });

  it('an endpoint that never answers: the advance answers 200, its attempts recorded as timed out, and leaves those it did not start within the timeout to the workers', async () => {
    const m = await t.merchant();
    // Takes every request and never answers it (until closed).
    const held: string[] = [];
    const server = createServer((req) => held.push(String(req.headers['webhook-id'])));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receivers.push({
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    } as Receiver);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    const endpoint = await api(m.testApiKey, 'POST', '/v2/webhook-endpoints', { url, events: ['subscription.resumed'] });
    // More resumes than the attempts one batch sends at once (16), so that some cannot start within the timeout.
    const ids = await fixtures(m.testApiKey, 20);
    const start = Date.parse(await clockOf(m.testApiKey));
    for (const id of ids)
      expect((await api(m.testApiKey, 'POST', `/v2/subscriptions/${id}/pause`, { resumeAt: iso(start + DAY) })).status).toBe(200);

    const advanced = await api(m.testApiKey, 'POST', '/v2/test-helpers/clock/advance', { to: iso(start + 2 * DAY) });

    expect(advanced).toMatchObject({ status: 200, body: { appliedCount: 20 } });
    const deliveries = (await api(m.testApiKey, 'GET', `/v2/webhook-endpoints/${endpoint.body.id}/deliveries?limit=100`)).body.data;
    expect(deliveries).toHaveLength(20);
    const tried = deliveries.filter((d: { attempts: unknown[] }) => d.attempts.length > 0);
    expect(tried.length).toBeGreaterThan(0);
    expect(tried.length).toBeLessThan(20);
    for (const d of tried) expect(d.attempts[0]).toMatchObject({ statusCode: null, error: 'no answer within 10 s' });
    expect(deliveries.every((d: { status: string }) => d.status === 'pending')).toBe(true);
    // The ones not attempted are the workers' now: their first attempts reach the endpoint after the answer.
    const untried = new Set(
      deliveries.filter((d: { attempts: unknown[] }) => d.attempts.length === 0).map((d: { eventId: string }) => d.eventId),
    );
    await waitFor(
      async () => held.filter((id) => untried.has(id)).length,
      (n) => n >= untried.size,
      40_000,
      100,
      "the workers' first attempts of the rest",
    );
  });

  it('an advance that crosses a scheduled pause and the resume after it applies both, in order, each at its own time', async () => {
    const m = await t.merchant();
    const [id] = await fixtures(m.testApiKey, 1);
    const start = Date.parse(await clockOf(m.testApiKey));
    const pauseAt = iso(start + 5 * DAY);
    const resumeAt = iso(start + 19 * DAY);
    expect((await api(m.testApiKey, 'POST', `/v2/subscriptions/${id}/pause`, { pauseAt, resumeAt })).body).toMatchObject({
      status: 'fulfilled',
      schedule: { pauseAt: pauseAt.replace('Z', '000Z') },
    });

    const advanced = await api(m.testApiKey, 'POST', '/v2/test-helpers/clock/advance', { to: iso(start + 30 * DAY) });

    expect(advanced.body.appliedCount).toBe(2);
    const events = (await api(m.testApiKey, 'GET', '/v2/events')).body.data.reverse();
    expect(events.map((e: { type: string; createdAt: string }) => [e.type, e.createdAt])).toEqual([
      ['subscription.pause_scheduled', expect.any(String)],
      ['subscription.resume_scheduled', expect.any(String)],
      ['subscription.paused', pauseAt.replace('Z', '000Z')],
      ['subscription.resumed', resumeAt.replace('Z', '000Z')],
    ]);
    expect((await api(m.testApiKey, 'GET', `/v2/subscriptions/${id}`)).body).toMatchObject({
      status: 'fulfilled',
      modifiedAt: resumeAt.replace('Z', '000Z'),
    });
    expect((await api(m.testApiKey, 'GET', `/v2/subscriptions/${id}`)).body.schedule).toBeUndefined();
  });

  it('reads the real time until advanced, then stands at the time advanced to; forward only, at most 2 years a call', async () => {
    const m = await t.merchant();
    const before = Date.now();
    const first = Date.parse(await clockOf(m.testApiKey));
    expect(first).toBeGreaterThanOrEqual(before - 1000);
    expect(first).toBeLessThanOrEqual(Date.now() + 1000);
    const to = iso(before + 10 * DAY);
    expect((await api(m.testApiKey, 'POST', '/v2/test-helpers/clock/advance', { to })).status).toBe(200);
    expect(await clockOf(m.testApiKey)).toBe(to.replace('Z', '000Z'));
    for (const back of [to, iso(before + 9 * DAY), iso(before + 10 * DAY + 2 * 366 * DAY)]) {
      const res = await api(m.testApiKey, 'POST', '/v2/test-helpers/clock/advance', { to: back });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: '0040', errors: [{ path: '/to' }] });
    }
    expect(await clockOf(m.testApiKey)).toBe(to.replace('Z', '000Z'));
  });

  it('two test modes have clocks of their own', async () => {
    const a = await t.merchant();
    const b = await t.merchant();
    const to = iso(Date.now() + 100 * DAY);
    await api(a.testApiKey, 'POST', '/v2/test-helpers/clock/advance', { to });
    expect(await clockOf(a.testApiKey)).toBe(to.replace('Z', '000Z'));
    expect(Date.parse(await clockOf(b.testApiKey))).toBeLessThan(Date.now() + DAY);
  });

  it('a test mode checks pauseAt and resumeAt against its clock; the live mode against the real time', async () => {
    const m = await t.merchant();
    const [testId] = await fixtures(m.testApiKey, 1);
    const [liveId] = await t.seed(m.merchantId, 1);
    await api(m.testApiKey, 'POST', '/v2/test-helpers/clock/advance', { to: iso(Date.now() + 60 * DAY) });
    const resumeAt = iso(Date.now() + 30 * DAY);
    const test = await api(m.testApiKey, 'POST', `/v2/subscriptions/${testId}/pause`, { resumeAt });
    expect(test.status).toBe(400);
    expect(test.body).toMatchObject({ code: '0043', errors: [{ path: '/resumeAt' }] });
    expect((await api(m.apiKey, 'POST', `/v2/subscriptions/${liveId}/pause`, { resumeAt })).status).toBe(200);
  });

  it("a time before the test clock answers 400 0043 saying the test clock's time, for a pause, a bulk pause and a hold", async () => {
    const m = await t.merchant();
    const [testId] = await fixtures(m.testApiKey, 1);
    const to = iso(Date.now() + 60 * DAY);
    await api(m.testApiKey, 'POST', '/v2/test-helpers/clock/advance', { to });
    const now = to.replace('Z', '000Z');
    const resumeAt = iso(Date.now() + 30 * DAY);

    const answers = [
      await api(m.testApiKey, 'POST', `/v2/subscriptions/${testId}/pause`, { resumeAt }),
      await api(m.testApiKey, 'POST', '/v2/subscriptions/bulk/pause', { subscriptions: [testId], resumeAt }),
      await api(m.testApiKey, 'POST', '/v2/holds', { resumeAt }),
    ];

    for (const res of answers) {
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        code: '0043',
        detail: `resumeAt must be after the test clock, now ${now}.`,
        errors: [{ path: '/resumeAt', message: `must be after the test clock, now ${now}` }],
      });
    }
    const live = await api(m.apiKey, 'POST', '/v2/subscriptions/bulk/pause', {
      subscriptions: [randomUUID()],
      resumeAt: iso(Date.now() - DAY),
    });
    expect(live.body).toMatchObject({ code: '0043', detail: 'resumeAt must be in the future.' });
  });

  it('the live due poll does not apply test-mode schedules: a live pause due at the same time is applied, the test one waits for its clock', async () => {
    const m = await t.merchant();
    const [testId] = await fixtures(m.testApiKey, 1);
    const [liveId] = await t.seed(m.merchantId, 1);
    const pauseAt = iso(Date.now() + 1500);
    expect((await api(m.testApiKey, 'POST', `/v2/subscriptions/${testId}/pause`, { pauseAt })).status).toBe(200);
    expect((await api(m.apiKey, 'POST', `/v2/subscriptions/${liveId}/pause`, { pauseAt })).status).toBe(200);
    await waitFor(
      async () => (await api(m.apiKey, 'GET', `/v2/subscriptions/${liveId}`)).body.status,
      (s) => s === 'paused',
      30_000,
    );
    expect((await api(m.testApiKey, 'GET', `/v2/subscriptions/${testId}`)).body).toMatchObject({
      status: 'fulfilled',
      schedule: { pauseAt: pauseAt.replace('Z', '000Z') },
    });
    expect((await api(m.testApiKey, 'POST', '/v2/test-helpers/clock/advance', { to: iso(Date.now() + DAY) })).body.appliedCount).toBe(1);
    expect((await api(m.testApiKey, 'GET', `/v2/subscriptions/${testId}`)).body.status).toBe('paused');
  });
});
