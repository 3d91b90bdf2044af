/**
 * The workers' sweep of overdue webhook deliveries (every 30 s in each worker process) reads the
 * pending deliveries through an index, on whichever engine runs, so that its cost does not grow
 * with the deliveries kept (30 days of them). Until 2026-11-26 its index was `{dueAt: 1}`, a range
 * the embedded FerretDB cannot serve from an index: there every sweep read every delivery kept,
 * 1.7 s of the database's time at 30,000 deliveries (docs/engine.md).
 *
 * The query checked is the one the repository sends, taken from the driver's command monitoring.
 */
import { randomUUID } from 'node:crypto';
import { MongoClient, type Db, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DeliveriesRepository } from '../src/webhooks/deliveries.repository.js';

let client: MongoClient;
let db: Db;
const sent: { name: string; body: Document }[] = [];

beforeAll(async () => {
  client = await new MongoClient(inject('mongoUri'), { monitorCommands: true }).connect();
  client.on('commandStarted', (event) => sent.push({ name: event.commandName, body: event.command }));
  db = client.db(`delivery_sweep_${randomUUID().slice(0, 8)}`);
});
afterAll(async () => {
  await db?.dropDatabase();
  await client?.close();
});

describe('the overdue-delivery sweep', () => {
  it('reads the pending deliveries through an index, not every delivery kept', async () => {
    const deliveries = db.collection<{ _id: string } & Document>('webhookDeliveries');
    // A database an earlier version set up: its index for the sweep goes.
    await deliveries.createIndex({ dueAt: 1 }, { name: 'due_deliveries', sparse: true });
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
      createdAt: '2026-11-26T00:00:00.000000Z',
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

    sent.length = 0;
    const overdue = await repository.overdue(new Date(Date.now() - 60_000), 500);
    expect(overdue.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: 'evt_0300.ep_1', merchantId: 'm0' },
      { id: 'evt_0301.ep_1', merchantId: 'm1' },
    ]);

    const find = sent.find((c) => c.name === 'find' && c.body.find === 'webhookDeliveries');
    expect(find).toBeDefined();
    const plan = await deliveries.find(find!.body.filter as Document, { projection: find!.body.projection as Document }).limit(find!.body.limit as number).explain();
    const planner = JSON.stringify(plan.queryPlanner);
    console.log(`overdue-delivery sweep's plan: ${planner.slice(0, 400)}`);
    // MongoDB: an IXSCAN of pending_deliveries; FerretDB (SQLite): SEARCH ... USING INDEX <table>_pending_deliveries, where a full read shows as SCAN.
    expect(planner).toMatch(/pending_deliveries/);
    expect(planner).not.toMatch(/COLLSCAN|\bSCAN\b/);
  });
});
