/**
 * Schedule events (issue 27 item 3): a request that sets, replaces or drops a scheduled pause or
 * resume records `subscription.pause_scheduled`, `subscription.resume_scheduled` or
 * `subscription.schedule_removed` in the same update as the change, once per change, in order
 * with the status events of the same subscription; every event's cause names the API key id that
 * made the request (never the key or its hash); deliveries are signed, and an endpoint can take
 * only these types.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/credentials.js';
import { httpOf } from '../support/http.js';
import { registeredReceiver, type Receiver } from '../support/receiver.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

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
/** A time at the service's precision, so that answers show it unchanged. */
const at = (hours: number) => `${new Date(Date.parse('2027-01-01T00:00:00Z') + hours * 3_600_000).toISOString().slice(0, 19)}.000000Z`;
const SCHEDULE_TYPES = ['subscription.pause_scheduled', 'subscription.resume_scheduled', 'subscription.schedule_removed'];

const endpointFor = (apiKey: string, events: string[]) => registeredReceiver(t.baseUrl, apiKey, events, receivers);

async function apiKeyIdOf(apiKey: string): Promise<string> {
  const keys = await api(apiKey, 'GET', '/v2/api-keys');
  expect(keys.status).toBe(200);
  expect(keys.body.data).toHaveLength(1);
  return keys.body.data[0].id;
}

/** Every subscription event of the merchant once the outboxes are empty, oldest first (ids sort by time, then by order within a change). */
async function relayed(merchantId: string, apiKey: string, count: number): Promise<any[]> {
  await waitFor(
    () => t.db.collection('subscriptions').countDocuments({ merchantId, 'outbox.key': { $exists: true } }),
    (n) => n === 0,
    30_000,
    50,
    'the outboxes to empty',
  );
  const read = async () =>
    ((await api(apiKey, 'GET', '/v2/events?limit=100')).body.data as any[]).filter((e) => e.type.startsWith('subscription.')).reverse();
  const events = await waitFor(read, (e) => e.length >= count, 30_000);
  expect(events).toHaveLength(count);
  expect(events.map((e) => e.id)).toEqual(events.map((e) => e.id).sort());
  return events;
}

const typesOf = (events: any[], id: string) =>
  events.filter((e) => e.data.subscription.id === id).map((e) => [e.type, e.data.removed ?? null]);

describe('schedule events', () => {
  it('single requests: each set, replaced or dropped schedule gives its event once, in order with the status events, with the answer it showed; signed deliveries; a schedule-only endpoint gets only those', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const apiKeyId = await apiKeyIdOf(apiKey);
    const all = await endpointFor(apiKey, ['*']);
    const schedules = await endpointFor(apiKey, SCHEDULE_TYPES);
    const [id] = await t.seed(merchantId, 1);
    const path = `/v2/subscriptions/${id}`;
    const answers = [
      await api(apiKey, 'POST', `${path}/pause`, { pauseAt: at(1), resumeAt: at(2), reason: 'set' }),
      await api(apiKey, 'POST', `${path}/pause`, { pauseAt: at(3), resumeAt: at(4), reason: 'replaced' }),
      await api(apiKey, 'POST', `${path}/pause`), // now: its pending pauseAt goes
      await api(apiKey, 'POST', `${path}/resume`), // its pending resumeAt goes
      await api(apiKey, 'POST', `${path}/pause`, { resumeAt: at(5) }),
      await api(apiKey, 'DELETE', `${path}/schedule`),
      await api(apiKey, 'DELETE', `${path}/schedule`), // nothing pending: no event
      await api(apiKey, 'POST', `${path}/resume`),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200]);

    const events = await relayed(merchantId, apiKey, 12);
    expect(typesOf(events, id!)).toEqual([
      ['subscription.pause_scheduled', null],
      ['subscription.resume_scheduled', null],
      ['subscription.pause_scheduled', null],
      ['subscription.resume_scheduled', null],
      ['subscription.paused', null],
      ['subscription.schedule_removed', ['pauseAt']],
      ['subscription.resumed', null],
      ['subscription.schedule_removed', ['resumeAt']],
      ['subscription.paused', null],
      ['subscription.resume_scheduled', null],
      ['subscription.schedule_removed', ['resumeAt']],
      ['subscription.resumed', null],
    ]);
    // Each event shows its change's answer (resume answers without merchantId), its schedule, and who made it.
    const answerOf = new Map(answers.map((a) => [a.body.modifiedAt, { merchantId, ...a.body }]));
    for (const event of events) {
      expect(event.data.subscription).toEqual(answerOf.get(event.createdAt));
      expect(event.data.cause).toEqual({ kind: 'api', apiKeyId });
      if (SCHEDULE_TYPES.includes(event.type))
        expect(event.data.schedule).toEqual(event.data.subscription.schedule ?? { pauseAt: null, resumeAt: null });
      else expect(event.data.schedule).toBeUndefined();
    }
    expect(events[1].data.schedule).toEqual({ pauseAt: at(1), resumeAt: at(2) });
    expect(events[5].data).toMatchObject({
      previousStatus: 'fulfilled',
      schedule: { pauseAt: null, resumeAt: at(4) },
      subscription: { status: 'paused', pauseReason: 'replaced' },
    });

    // Deliveries: every event to '*', only the schedule events to the other, each once and signed.
    await waitFor(
      async () => all.receiver.received.length,
      (n) => n >= 12,
      30_000,
    );
    await waitFor(
      async () => schedules.receiver.received.length,
      (n) => n >= 7,
      30_000,
    );
    expect(all.receiver.received.map((r) => r.id).sort()).toEqual(events.map((e) => e.id).sort());
    expect(schedules.receiver.received.map((r) => r.id).sort()).toEqual(
      events
        .filter((e) => SCHEDULE_TYPES.includes(e.type))
        .map((e) => e.id)
        .sort(),
    );
    expect([...all.receiver.received, ...schedules.receiver.received].every((r) => r.verified)).toBe(true);
    const removed = events[5];
    expect(schedules.receiver.received.find((r) => r.id === removed.id)!.body).toEqual({
      type: removed.type,
      timestamp: removed.createdAt,
      data: removed.data,
      livemode: true,
    });
    // Never the key or its hash, in events, deliveries or logs.
    const seen = JSON.stringify([events, all.receiver.received, schedules.receiver.received, t.logLines]);
    expect(seen).not.toContain(apiKey);
    expect(seen).not.toContain(hashApiKey(apiKey));
  });

  it('bulk requests: each subscription gets its status and schedule events once, in order, with the bulk request and API key ids as cause; a replaced schedule of one already paused too', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const apiKeyId = await apiKeyIdOf(apiKey);
    const fulfilled = await t.seed(merchantId, 3);
    const [already] = await t.seed(merchantId, 1);
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${already}/pause`, { resumeAt: at(1) })).status).toBe(200);
    const ids = [...fulfilled, already!];
    const pause = await api(apiKey, 'POST', '/v2/subscriptions/bulk/pause', { subscriptions: ids, resumeAt: at(2), reason: 'bulk' });
    expect(pause.status).toBe(202);
    await waitFor(
      async () => (await api(apiKey, 'GET', `/v2/bulk-requests/${pause.body.requestId}`)).body.state,
      (s) => s === 'completed',
      30_000,
    );
    const resume = await api(apiKey, 'POST', '/v2/subscriptions/bulk/resume', { subscriptions: ids });
    expect(resume.status).toBe(202);
    await waitFor(
      async () => (await api(apiKey, 'GET', `/v2/bulk-requests/${resume.body.requestId}`)).body.state,
      (s) => s === 'completed',
      30_000,
    );

    // 3 × (paused, resume_scheduled, resumed, schedule_removed); the one already paused: its own two, then resume_scheduled, resumed, schedule_removed.
    const events = await relayed(merchantId, apiKey, 3 * 4 + 2 + 3);
    for (const id of fulfilled) {
      expect(typesOf(events, id)).toEqual([
        ['subscription.paused', null],
        ['subscription.resume_scheduled', null],
        ['subscription.resumed', null],
        ['subscription.schedule_removed', ['resumeAt']],
      ]);
    }
    expect(typesOf(events, already!)).toEqual([
      ['subscription.paused', null],
      ['subscription.resume_scheduled', null],
      ['subscription.resume_scheduled', null],
      ['subscription.resumed', null],
      ['subscription.schedule_removed', ['resumeAt']],
    ]);
    for (const event of events) {
      const requestId = ['subscription.resumed', 'subscription.schedule_removed'].includes(event.type)
        ? resume.body.requestId
        : pause.body.requestId;
      const byRequest = event.data.cause.kind === 'bulk';
      expect(event.data.cause).toEqual(byRequest ? { kind: 'bulk', requestId, apiKeyId } : { kind: 'api', apiKeyId });
      if (event.type === 'subscription.resume_scheduled')
        expect(event.data.schedule).toEqual({ pauseAt: null, resumeAt: byRequest ? at(2) : at(1) });
    }
    const seen = JSON.stringify([events, t.logLines]);
    expect(seen).not.toContain(apiKey);
    expect(seen).not.toContain(hashApiKey(apiKey));
  });

  it('a scheduled pause shows pause_scheduled (cause api, with the key id), then its due pause (cause schedule, no key id)', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const apiKeyId = await apiKeyIdOf(apiKey);
    const [id] = await t.seed(merchantId, 1);
    const pauseAt = new Date(Date.now() + 1_500).toISOString();
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${id}/pause`, { pauseAt })).body.status).toBe('fulfilled');
    await waitFor(
      async () => (await api(apiKey, 'GET', `/v2/subscriptions/${id}`)).body.status,
      (s) => s === 'paused',
      30_000,
    );
    const events = await relayed(merchantId, apiKey, 2);
    expect(events.map((e) => [e.type, e.data.cause])).toEqual([
      ['subscription.pause_scheduled', { kind: 'api', apiKeyId }],
      ['subscription.paused', { kind: 'schedule' }],
    ]);
  });
});
