/** Replaying a range of events to one endpoint after an outage: real receivers on loopback, a real database. */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTimestamp, nowMicros } from '../../src/lib/clock.js';
import { REPLAY_LIMIT } from '../../src/webhooks/replay.js';
import { httpOf } from '../support/http.js';
import { registeredReceiver, type Receiver } from '../support/receiver.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let t: TestService;
const receivers: Receiver[] = [];
beforeAll(async () => {
  t = await startTestService({ workers: 1, bulkPollIntervalMs: 100 });
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await t.close();
});

const { api } = httpOf(() => t);
const DAY_MS = 86_400_000;
const at = (ms: number) => new Date(ms).toISOString();

/** A merchant whose endpoint received `pairs` pauses and resumes (2 × pairs events), all delivered. */
async function merchantWithHistory(pairs: number, events: string[] = ['*']) {
  const { merchantId, apiKey } = await t.merchant();
  const { receiver, id: endpointId } = await registeredReceiver(t.baseUrl, apiKey, events, receivers);
  const from = at(Date.now() - 1000);
  for (const id of await t.seed(merchantId, pairs)) {
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${id}/pause`)).status).toBe(200);
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${id}/resume`)).status).toBe(200);
  }
  // Events are stored by the relay after the change's answer: wait for all of them.
  const listed = await waitFor(
    async () => (await api(apiKey, 'GET', '/v2/events?limit=100')).body.data as { id: string; type: string; createdAt: string }[],
    (events) => events.length >= 2 * pairs,
    30_000,
    100,
    'the events',
  );
  const sent = listed.filter((e) => events.includes('*') || events.includes(e.type));
  await waitFor(
    async () => receiver.received.length,
    (n) => n >= sent.length,
    30_000,
    100,
    'the first deliveries',
  );
  return { merchantId, apiKey, receiver, endpointId, from, oldestFirst: [...listed].reverse() };
}

describe('replaying events to an endpoint', () => {
  it('sends every event of the range to that endpoint once more, oldest first, signed, each listed with replay: true', async () => {
    const { apiKey, receiver, endpointId, from, oldestFirst } = await merchantWithHistory(4);
    const other = await registeredReceiver(t.baseUrl, apiKey, ['*'], receivers);
    const before = receiver.received.length;
    // Slow answers: deliveries sent side by side would overlap at the receiver.
    receiver.delayMs = 50;
    receiver.maxInFlight = 0;
    const replayed = await api(apiKey, 'POST', `/v2/webhook-endpoints/${endpointId}/replay`, { from, to: at(Date.now() + 1000) });
    expect(replayed.status).toBe(202);
    expect(replayed.body).toEqual({ queuedCount: 8, livemode: true });
    await waitFor(
      async () => receiver.received.length,
      (n) => n >= before + 8,
      30_000,
      100,
      'the replayed deliveries',
    );
    const again = receiver.received.slice(before);
    expect(again.map((r) => r.id)).toEqual(oldestFirst.map((e) => e.id));
    expect(receiver.maxInFlight).toBe(1);
    expect(again.every((r) => r.verified)).toBe(true);
    expect(other.receiver.received).toHaveLength(0);
    const deliveries = (await api(apiKey, 'GET', `/v2/webhook-endpoints/${endpointId}/deliveries?limit=100`)).body.data as {
      eventId: string;
      replay: boolean;
    }[];
    expect(
      deliveries
        .filter((d) => d.replay)
        .map((d) => d.eventId)
        .sort(),
    ).toEqual(oldestFirst.map((e) => e.id).sort());
    expect(deliveries.filter((d) => !d.replay)).toHaveLength(8);
  });

  it('sends only the types asked for, of those the endpoint subscribes to', async () => {
    const { apiKey, receiver, endpointId, from, oldestFirst } = await merchantWithHistory(3, [
      'subscription.paused',
      'bulk_request.completed',
    ]);
    const before = receiver.received.length;
    const to = at(Date.now() + 1000);
    const all = await api(apiKey, 'POST', `/v2/webhook-endpoints/${endpointId}/replay`, { from, to });
    expect(all.body.queuedCount).toBe(3);
    const resumedOnly = await api(apiKey, 'POST', `/v2/webhook-endpoints/${endpointId}/replay`, {
      from,
      to,
      types: ['subscription.resumed'],
    });
    expect(resumedOnly.body.queuedCount).toBe(0);
    await waitFor(
      async () => receiver.received.length,
      (n) => n >= before + 3,
      30_000,
      100,
      'the replayed pauses',
    );
    expect(receiver.received.slice(before).map((r) => r.id)).toEqual(
      oldestFirst.filter((e) => e.type === 'subscription.paused').map((e) => e.id),
    );
  });

  it('counts only the range: events outside it are not sent', async () => {
    const { apiKey, endpointId, oldestFirst } = await merchantWithHistory(2);
    const [first, second] = oldestFirst;
    const replayed = await api(apiKey, 'POST', `/v2/webhook-endpoints/${endpointId}/replay`, {
      from: first!.createdAt,
      to: second!.createdAt,
    });
    expect(replayed.body.queuedCount).toBe(2);
  });

  it.each([
    ['`from` after `to`', (now: number) => ({ from: at(now), to: at(now - 1000) })],
    ['`from` before the 30 days kept', (now: number) => ({ from: at(now - 31 * DAY_MS), to: at(now) })],
    ['an unknown event type', (now: number) => ({ from: at(now - 1000), to: at(now), types: ['subscription.deleted'] })],
    ['no `to`', (now: number) => ({ from: at(now - 1000) })],
  ])('%s answers 400 0040 and queues nothing', async (_name, body) => {
    const { apiKey, receiver, endpointId } = await merchantWithHistory(1);
    const before = receiver.received.length;
    const res = await api(apiKey, 'POST', `/v2/webhook-endpoints/${endpointId}/replay`, body(Date.now()));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('0040');
    const deliveries = (await api(apiKey, 'GET', `/v2/webhook-endpoints/${endpointId}/deliveries`)).body.data as { replay: boolean }[];
    expect(deliveries.some((d) => d.replay)).toBe(false);
    expect(receiver.received).toHaveLength(before);
  });

  it("another merchant's endpoint answers 404 0023", async () => {
    const { endpointId } = await merchantWithHistory(1);
    const { apiKey: stranger } = await t.merchant();
    const res = await api(stranger, 'POST', `/v2/webhook-endpoints/${endpointId}/replay`, {
      from: at(Date.now() - 1000),
      to: at(Date.now()),
    });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('0023');
  });

  it(`a range of more than ${REPLAY_LIMIT} events answers 400 with the count and queues nothing`, async () => {
    const { merchantId, apiKey, endpointId } = await merchantWithHistory(1);
    // Stored directly, in parts: the API would take minutes to make them.
    const expiresAt = new Date(Date.now() + 30 * DAY_MS);
    const base = nowMicros();
    const stored = Array.from({ length: REPLAY_LIMIT + 1 }, (_, i) => ({
      _id: randomUUID(),
      merchantId,
      type: 'bulk_request.completed',
      createdAt: formatTimestamp(base + BigInt(i)),
      data: {},
      expiresAt,
    }));
    for (let i = 0; i < stored.length; i += 1000) await t.db.collection('events').insertMany(stored.slice(i, i + 1000) as never[]);
    const res = await api(apiKey, 'POST', `/v2/webhook-endpoints/${endpointId}/replay`, {
      from: at(Date.now() - 60_000),
      to: at(Date.now() + 60_000),
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('0040');
    expect(res.body.detail).toContain(String(REPLAY_LIMIT + 3));
    const deliveries = (await api(apiKey, 'GET', `/v2/webhook-endpoints/${endpointId}/deliveries`)).body.data as { replay: boolean }[];
    expect(deliveries.some((d) => d.replay)).toBe(false);
  });
});
