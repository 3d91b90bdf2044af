/**
 * Reads that must not grow with what the database holds are served by an index, on whichever
 * engine runs. Each case sends its query through the repository, takes the command the driver
 * really sent (its command monitoring) and asks the engine for that command's plan: on MongoDB an
 * IXSCAN, on the embedded FerretDB (SQLite) `SEARCH … USING INDEX`, where reading everything
 * shows as `COLLSCAN` or `SCAN <table>`. Both defects below were on FerretDB only (docs/engine.md).
 */
import { randomUUID } from 'node:crypto';
import { MongoClient, type Db, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EventsRepository } from '../../src/events/events.repository.js';
import { OutboxStore } from '../../src/subscriptions/outbox.store.js';
import { SubscriptionsStore } from '../../src/subscriptions/subscriptions.store.js';
import { DeliveriesRepository } from '../../src/webhooks/deliveries.repository.js';
import { READS_EVERYTHING } from '../support/plans.js';

let client: MongoClient;
let db: Db;
const sent: { name: string; body: Document }[] = [];

beforeAll(async () => {
  client = await new MongoClient(inject('mongoUri'), { monitorCommands: true }).connect();
  client.on('commandStarted', (event) => sent.push({ name: event.commandName, body: event.command }));
  db = client.db(`index_reads_${randomUUID().slice(0, 8)}`);
});
afterAll(async () => {
  await db?.dropDatabase();
  await client?.close();
});

/** The finds on `collection` that `read` sends, each with its plan as the engine reports it. */
async function plansOf(collection: string, read: () => Promise<unknown>): Promise<string[]> {
  sent.length = 0;
  await read();
  const finds = sent.filter((c) => c.name === 'find' && c.body.find === collection);
  expect(finds.length).toBeGreaterThan(0);
  return Promise.all(
    finds.map(async ({ body }) => {
      const cursor = db.collection(collection).find(body.filter as Document, { projection: body.projection as Document | undefined });
      const plan = await (body.limit ? cursor.limit(body.limit as number) : cursor).explain();
      return JSON.stringify(plan.queryPlanner);
    }),
  );
}

/** Served by an index: no full read, and the index named when one is. */
function expectIndexed(plans: readonly string[], index?: RegExp): void {
  for (const plan of plans) {
    console.log(`plan: ${plan.slice(0, 300)}`);
    expect(plan).not.toMatch(READS_EVERYTHING);
    if (index) expect(plan).toMatch(index);
  }
}

describe('the overdue-delivery sweep (every 30 s in each worker process)', () => {
  it('reads the pending deliveries through pending_deliveries, not every delivery kept', async () => {
    const deliveries = db.collection<{ _id: string } & Document>('webhookDeliveries');
    const repository = new DeliveriesRepository(db);
    await repository.ensureIndexes(false);
    expect((await deliveries.indexes()).map((i) => i.name).sort()).toEqual(['_id_', 'endpoint_deliveries', 'pending_deliveries']);

    const longAgo = new Date(Date.now() - 3_600_000);
    const delivery = (n: number, status: string, dueAt: Date | null) => ({
      _id: `evt_${String(n).padStart(4, '0')}.ep_1`,
      merchantId: `m${n % 3}`,
      endpointId: 'ep_1',
      eventId: `evt_${n}`,
      eventType: 'subscription.paused',
      status,
      attempts: [],
      nextAttemptAt: null,
      createdAt: '2026-11-25T00:00:00.000000Z',
      dueAt,
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    await deliveries.insertMany([
      ...Array.from({ length: 300 }, (_, n) => delivery(n, n % 2 === 0 ? 'succeeded' : 'failed', null)),
      delivery(300, 'pending', longAgo),
      delivery(301, 'pending', longAgo),
      // Pending, but held by a worker (its lease) or retried later: not overdue.
      delivery(302, 'pending', new Date(Date.now() + 60_000)),
    ]);

    let overdue: { id: string; merchantId: string }[] = [];
    const plans = await plansOf('webhookDeliveries', async () => (overdue = await repository.overdue(new Date(Date.now() - 60_000), 500)));
    expect(overdue.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: 'evt_0300.ep_1', merchantId: 'm0' },
      { id: 'evt_0301.ep_1', merchantId: 'm1' },
    ]);
    expectIndexed(plans, /pending_deliveries/);
  });
});

describe("the events relay's read of several merchants' outboxes (after every batch of changes)", () => {
  // Until 2026-11-25 it was one query, an $or of each merchant's {merchantId, _id: {$in}}, which
  // FerretDB serves from no index: under npm run load (eight merchants) every relay read every subscription.
  it('reads those subscriptions through the _id index, one merchant at a time', async () => {
    await new SubscriptionsStore(db).ensureIndexes();
    const repository = new OutboxStore(db);
    const entry = {
      key: 'req_1',
      status: 'paused',
      previousStatus: 'fulfilled',
      at: '2026-11-25T00:00:00.000000Z',
      cause: { kind: 'request' },
    };
    const subscription = (merchant: number, n: number, waiting: boolean) => ({
      _id: `sub_m${merchant}_${String(n).padStart(3, '0')}`,
      merchantId: `m${merchant}`,
      planId: 'plan_basic',
      status: waiting ? 'paused' : 'fulfilled',
      cycle: 'monthly',
      createdAt: '2026-11-25T00:00:00.000000Z',
      modifiedAt: '2026-11-25T00:00:00.000000Z',
      ...(waiting ? { outbox: [entry] } : {}),
    });
    await db
      .collection<{ _id: string } & Document>('subscriptions')
      .insertMany(Array.from({ length: 300 }, (_, n) => subscription(n % 3, n, n % 10 === 0)));

    // Three merchants' changed subscriptions: two with events waiting each, one already relayed.
    const changed = new Map([
      ['sub_m0_000', 'm0'],
      ['sub_m0_030', 'm0'],
      ['sub_m1_010', 'm1'],
      ['sub_m1_040', 'm1'],
      ['sub_m2_020', 'm2'],
      ['sub_m2_050', 'm2'],
      ['sub_m2_005', 'm2'],
    ]);
    let pending: { subscription: { id: string; merchantId: string } }[] = [];
    const plans = await plansOf('subscriptions', async () => (pending = await repository.outboxes(changed, changed.size)));
    expect(pending.map(({ subscription: s }) => `${s.merchantId}/${s.id}`).sort()).toEqual([
      'm0/sub_m0_000',
      'm0/sub_m0_030',
      'm1/sub_m1_010',
      'm1/sub_m1_040',
      'm2/sub_m2_020',
      'm2/sub_m2_050',
    ]);
    expectIndexed(plans);
  });
});

describe("a subscription's history and a bulk request's events (GET /v2/events?subscriptionId=…, ?requestId=…)", () => {
  it('reads them through an index, never the whole collection', async () => {
    const repository = new EventsRepository(db);
    await repository.ensureIndexes(false);
    const at = (n: number) => `2026-11-25T00:00:${String(n % 60).padStart(2, '0')}.000000Z`;
    const subscriptionEvent = (n: number) => ({
      _id: `0193a1b2-0000-7000-8000-${String(n).padStart(12, '0')}`,
      merchantId: `m${n % 3}`,
      type: 'subscription.paused',
      createdAt: at(n),
      data: {
        subscription: { id: `sub_${n % 30}` },
        previousStatus: 'fulfilled',
        cause: n % 2 === 0 ? { kind: 'bulk', requestId: `req_${n % 4}` } : { kind: 'api', apiKeyId: 'key_1' },
      },
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    const completion = {
      ...subscriptionEvent(999),
      type: 'bulk_request.completed',
      merchantId: 'm0',
      data: { requestId: 'req_0', operation: 'PAUSE' },
    };
    await db
      .collection<{ _id: string } & Document>('events')
      .insertMany([...Array.from({ length: 300 }, (_, n) => subscriptionEvent(n)), completion]);

    let history: Awaited<ReturnType<EventsRepository['page']>> | undefined;
    const bySubscription = await plansOf(
      'events',
      async () => (history = await repository.page('m0', { subscriptionId: 'sub_3' }, { limit: 100, startingAfter: undefined })),
    );
    // sub_3 is changed by events 3, 33, 63, … 273, all of m0.
    expect(history!.data.map((e) => e.id)).toEqual(Array.from({ length: 10 }, (_, i) => subscriptionEvent(273 - 30 * i)._id));
    expectIndexed(bySubscription);

    const byRequest = await plansOf(
      'events',
      async () => (history = await repository.page('m0', { requestId: 'req_0' }, { limit: 100, startingAfter: undefined })),
    );
    // Events 0, 12, 24, … (m0, even, n % 4 = 0) and the request's completion, newest first.
    expect(history!.data.map((e) => e.id)).toEqual([
      completion._id,
      ...Array.from({ length: 25 }, (_, i) => subscriptionEvent(288 - 12 * i)._id),
    ]);
    expectIndexed(byRequest);
  });
});
