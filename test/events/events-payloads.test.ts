/**
 * An event's subscription is the subscription as the answer to its change showed it, every
 * field, whatever changed it again before the relay took the event (issue 24: the relay used to
 * build it from the document as stored at relay time).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nowTimestamp } from '../../src/lib/clock.js';
import { subscriptionEventId } from '../../src/events/event.payload.js';
import { outboxEntries } from '../../src/subscriptions/outbox.js';
import { httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 1, bulkPollIntervalMs: 50, schedulePollMs: 50 });
});
afterAll(async () => {
  await t.close();
});

const { api } = httpOf(() => t);
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();
/** A time already at the service's precision, so that the answer shows it unchanged. */
const RESUME_AT = '2027-01-01T00:00:00.000000Z';

/** The merchant's events of status changes once every change has been relayed (none left in an outbox); test/events/events-schedules.test.ts checks the schedule events. */
async function relayedEvents(merchantId: string, apiKey: string, count: number): Promise<any[]> {
  const waiting = () => t.db.collection('subscriptions').countDocuments({ merchantId, 'outbox.key': { $exists: true } });
  await waitFor(waiting, (n) => n === 0, 30_000);
  const statusEvents = ['subscription.paused', 'subscription.resumed'];
  const read = async () =>
    ((await api(apiKey, 'GET', '/v2/events?limit=100')).body.data as any[]).filter((e) => statusEvents.includes(e.type));
  const events = await waitFor(read, (e) => e.length >= count, 30_000);
  expect(events).toHaveLength(count);
  return events;
}

/** Reads the subscription until the background change shows, then changes it again at once, racing the relay. */
async function dropScheduleOnceChanged(apiKey: string, id: string, status: string): Promise<any> {
  const read = await waitFor(
    async () => (await api(apiKey, 'GET', `/v2/subscriptions/${id}`)).body,
    (s) => s.status === status,
    30_000,
    5,
  );
  expect(read.status).toBe(status);
  const dropped = await api(apiKey, 'DELETE', `/v2/subscriptions/${id}/schedule`);
  expect(dropped.status).toBe(200);
  return read;
}

describe('event payloads', () => {
  it("each single change's event carries exactly what its answer showed, though later changes came before the relay", async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const first = await api(apiKey, 'POST', `/v2/subscriptions/${id}/pause`, { resumeAt: RESUME_AT, reason: 'first' });
    expect((await api(apiKey, 'DELETE', `/v2/subscriptions/${id}/schedule`)).status).toBe(200);
    const resumed = await api(apiKey, 'POST', `/v2/subscriptions/${id}/resume`);
    const second = await api(apiKey, 'POST', `/v2/subscriptions/${id}/pause`, {
      pauseAt: inMs(3_600_000),
      resumeAt: inMs(7_200_000),
      reason: 'second',
    });
    const third = await api(apiKey, 'POST', `/v2/subscriptions/${id}/pause`, { resumeAt: inMs(3_600_000), reason: 'third' });
    expect((await api(apiKey, 'DELETE', `/v2/subscriptions/${id}/schedule`)).status).toBe(200);
    expect([first.status, resumed.status, second.status, third.status]).toEqual([200, 200, 200, 200]);
    expect(second.body.status).toBe('fulfilled'); // only scheduled: no status event

    const events = await relayedEvents(merchantId, apiKey, 3);
    const byTime = new Map(events.map((e) => [e.createdAt, e.data.subscription]));
    expect(byTime.get(first.body.modifiedAt)).toEqual(first.body);
    expect(byTime.get(resumed.body.modifiedAt)).toEqual({ ...resumed.body, merchantId }); // resume answers without merchantId
    expect(byTime.get(third.body.modifiedAt)).toEqual(third.body);
  });

  it('a change relays the events it pushed without reading its outbox back; an older event left there is kept for the relay that reads it, never lost', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    // What a process killed between its change and that change's relay leaves: the change and its entry, not relayed.
    const at = nowTimestamp();
    const [left] = outboxEntries('fulfilled', { status: 'paused', modifiedAt: at }, { kind: 'api' }, randomUUID(), [{ kind: 'status' }]);
    await t.db
      .collection('subscriptions')
      .updateOne({ _id: id as never }, { $set: { status: 'paused', modifiedAt: at }, $push: { outbox: left } as never });
    const outbox = async () => ((await t.db.collection('subscriptions').findOne({ _id: id as never }))?.outbox ?? []) as { key: string }[];

    const resumed = await api(apiKey, 'POST', `/v2/subscriptions/${id}/resume`);
    expect(resumed.status).toBe(200);
    const events = async () => (await api(apiKey, 'GET', '/v2/events?limit=100')).body.data as any[];
    const relayed = await waitFor(events, (e) => e.some((event) => event.type === 'subscription.resumed'), 30_000);
    expect(relayed.map((e) => e.data.subscription.modifiedAt)).toEqual([resumed.body.modifiedAt]);
    // The resume's relay took its own entry out, and only it.
    expect((await waitFor(outbox, (o) => o.length === 1, 30_000)).map((e) => e.key)).toEqual([left!.key]);

    // A change told without its entries (a bulk command's) has its outbox read: the older event goes too.
    expect((await api(apiKey, 'POST', '/v2/subscriptions/bulk/pause', { subscriptions: [id] })).status).toBe(202);
    const all = await relayedEvents(merchantId, apiKey, 3);
    expect(all.map((e) => e.id)).toContain(subscriptionEventId(left!, id!));
    expect(all.map((e) => [e.type, e.data.cause.kind]).sort()).toEqual([
      ['subscription.paused', 'api'],
      ['subscription.paused', 'bulk'],
      ['subscription.resumed', 'api'],
    ]);
  });

  it("a bulk change's and a due schedule's events carry the subscription as the change left it, though its schedule was dropped before the relay", async () => {
    const { merchantId, apiKey } = await t.merchant();
    const ids = await t.seed(merchantId, 4);
    const [scheduled, ...bulk] = ids as [string, ...string[]];
    const accepted = await api(apiKey, 'POST', '/v2/subscriptions/bulk/pause', {
      subscriptions: bulk,
      resumeAt: RESUME_AT,
      reason: 'bulk',
    });
    expect(accepted.status).toBe(202);
    const pending = await api(apiKey, 'POST', `/v2/subscriptions/${scheduled}/pause`, {
      pauseAt: inMs(1_000),
      resumeAt: RESUME_AT,
      reason: 'scheduled',
    });
    expect(pending.body.status).toBe('fulfilled');
    const reads = new Map<string, any>();
    for (const id of ids) reads.set(id, await dropScheduleOnceChanged(apiKey, id, 'paused'));

    const events = await relayedEvents(merchantId, apiKey, ids.length);
    for (const event of events) {
      const id = event.data.subscription.id;
      const reason = id === scheduled ? 'scheduled' : 'bulk';
      expect(event.data.cause.kind).toBe(id === scheduled ? 'schedule' : 'bulk');
      expect(event.data.subscription).toEqual({
        ...reads.get(id),
        status: 'paused',
        modifiedAt: event.createdAt,
        schedule: { pauseAt: null, resumeAt: RESUME_AT },
        pauseReason: reason,
      });
    }
  });

  it('a bulk pause of subscriptions with a pending scheduled pause shows the resumeAt and reason it kept, per subscription, though the schedule was dropped before the relay', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const ids = await t.seed(merchantId, 3);
    const reasons = ['kept a', 'kept a', 'kept b'];
    for (const [i, id] of ids.entries()) {
      const scheduled = await api(apiKey, 'POST', `/v2/subscriptions/${id}/pause`, {
        pauseAt: inMs(3_600_000),
        resumeAt: RESUME_AT,
        reason: reasons[i],
      });
      expect(scheduled.body).toMatchObject({ status: 'fulfilled', schedule: { resumeAt: RESUME_AT } });
    }
    expect((await api(apiKey, 'POST', '/v2/subscriptions/bulk/pause', { subscriptions: ids })).status).toBe(202);
    const reads = new Map<string, any>();
    for (const id of ids) reads.set(id, await dropScheduleOnceChanged(apiKey, id, 'paused'));

    const events = await relayedEvents(merchantId, apiKey, ids.length);
    for (const event of events) {
      const id = event.data.subscription.id;
      expect(event.data.subscription).toEqual({
        ...reads.get(id),
        modifiedAt: event.createdAt,
        schedule: { pauseAt: null, resumeAt: RESUME_AT },
        pauseReason: reasons[ids.indexOf(id)],
      });
    }
  });
});
