/**
 * Deletes that grow with the data (docs/design.md §8): FerretDB's SQLite backend binds one SQL
 * variable per document a delete removes and refuses more than 32,766 ("too many SQL variables"),
 * so a test mode with 34,051 subscriptions could never be emptied and a retention sweep over
 * 33,000 expired events failed every ten minutes for ever. Here 40,000 of each are deleted, on the
 * engine the tests run on. The data is inserted directly, in parts: the API is not what is tested.
 */
import { randomUUID } from 'node:crypto';
import type { Collection, Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testModeIdOf } from '../../src/merchants/livemode.js';
import { call } from '../support/http.js';
import { serviceOnOwnServer } from '../support/own-server.js';
import type { TestService } from '../support/service.js';

/** Past SQLite's 32,766 bound variables per statement. */
const COUNT = 40_000;
const INSERTED_AT_ONCE = 5_000;
const SLOW = 180_000;

let t: TestService;
// Its own server: 120,000 documents are written and deleted here (test/support/own-server.ts).
beforeAll(async () => {
  t = await serviceOnOwnServer();
});
afterAll(() => t.close());

async function insertInParts(collection: Collection<Document>, make: (i: number) => Document): Promise<void> {
  for (let from = 0; from < COUNT; from += INSERTED_AT_ONCE) {
    const size = Math.min(INSERTED_AT_ONCE, COUNT - from);
    await collection.insertMany(
      Array.from({ length: size }, (_, i) => make(from + i)),
      { ordered: false },
    );
  }
}

/** The sweep's failures logged since line `from` (it logs them and carries on). */
const sweepFailures = (from: number) => t.logLines.slice(from).filter((l) => String(l.msg).includes('retention sweep failed'));

describe(`deleting ${COUNT} documents at once`, () => {
  it(
    `DELETE /v2/test-helpers/subscriptions empties a test mode of ${COUNT} subscriptions, and leaves the live ones`,
    { timeout: SLOW },
    async () => {
      const m = await t.merchant();
      const [live] = await t.seed(m.merchantId, 1);
      for (let from = 0; from < COUNT; from += INSERTED_AT_ONCE) {
        await t.service.seeder.seed({
          merchantId: testModeIdOf(m.merchantId),
          count: Math.min(INSERTED_AT_ONCE, COUNT - from),
          status: 'fulfilled',
        });
      }
      const res = await call(t.baseUrl, '/v2/test-helpers/subscriptions', { method: 'DELETE', apiKey: m.testApiKey });
      expect(res.status).toBe(200);
      expect(res.body.deletedCount).toBe(COUNT);
      const left = await call(t.baseUrl, '/v2/subscriptions?limit=1', { method: 'GET', apiKey: m.testApiKey });
      expect(left.body.data).toEqual([]);
      expect((await call(t.baseUrl, `/v2/subscriptions/${live}`, { method: 'GET', apiKey: m.apiKey })).status).toBe(200);
    },
  );

  describe('the retention sweep (where the server has no TTL index to do it)', () => {
    const expired = new Date(Date.now() - 60_000);
    const kept = new Date(Date.now() + 24 * 3600_000);

    it.each([
      [
        'events',
        'events',
        (merchantId: string) => ({ merchantId, type: 'subscription.paused', createdAt: '2026-01-01T00:00:00.000000Z', data: {} }),
      ],
      [
        'webhook deliveries',
        'webhookDeliveries',
        (merchantId: string) => ({
          merchantId,
          endpointId: randomUUID(),
          eventId: randomUUID(),
          status: 'failed',
          attempts: [],
          dueAt: null,
        }),
      ],
    ])(`deletes ${COUNT} expired %s, keeping those not expired`, { timeout: SLOW }, async (_what, name, shape) => {
      if (!t.service.retention) {
        console.log('skipped: this server deletes expired documents by TTL indexes, with no sweep of ours (docs/design.md §8)');
        return;
      }
      const merchantId = randomUUID();
      const collection = t.db.collection<Document>(name);
      await insertInParts(collection, () => ({ _id: randomUUID() as never, ...shape(merchantId), expiresAt: expired }));
      await collection.insertOne({ _id: randomUUID() as never, ...shape(merchantId), expiresAt: kept });
      const from = t.logLines.length;
      await t.service.retention.sweep();
      expect(sweepFailures(from)).toEqual([]);
      expect(await collection.countDocuments({ merchantId, expiresAt: { $lte: new Date() } })).toBe(0);
      expect(await collection.countDocuments({ merchantId })).toBe(1);
    });
  });
});
