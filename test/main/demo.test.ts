/**
 * The `npm start` banner (src/main/demo.ts): what it prints works as printed. Its docs URL answers, its
 * MONGODB_URI reaches the demo data, and each curl command answers what its comment says.
 */
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemo } from '../../src/main/demo.js';
import { call } from '../support/http.js';
import { databaseUri, startTestService, type TestService } from '../support/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.close());

const CURL = /^ {2}curl -s -X POST (\S+) -H 'x-api-key: (\S+)'(?: -H 'content-type: application\/json' -d '(.+?)')?(?:\s+#.*)?$/;

describe('the demo banner', () => {
  it('prints the docs URL, the embedded MONGODB_URI, a cancelled subscription, and curl commands that answer as shown', async () => {
    const uri = databaseUri(t.db.databaseName);
    const banner = await createDemo(t.service.auth, t.service.importSeeder, {
      baseUrl: t.baseUrl,
      databaseUri: uri,
      engine: 'FerretDB (embedded)',
    });
    const lines = banner.split('\n');

    expect(lines).toContain(`  API reference: ${t.baseUrl}/docs  (and a console to send requests from it)`);
    expect((await fetch(`${t.baseUrl}/docs`)).status).toBe(200);
    expect(lines).toContain(`  database:      MONGODB_URI=${uri}  (embedded: the demo data go when the service stops)`);
    const cancelledId = /^\s+(\S+) \(cancelled\)$/.exec(lines.find((l) => l.endsWith('(cancelled)'))!)![1];
    const client = await new MongoClient(uri).connect();
    try {
      expect(
        await client
          .db()
          .collection('subscriptions')
          .findOne({ _id: cancelledId as never }),
      ).toMatchObject({ status: 'cancelled' });
    } finally {
      await client.close();
    }

    const statuses = [];
    for (const match of lines.map((l) => CURL.exec(l)).filter((m) => m !== null)) {
      const [, url, apiKey, body] = match;
      const reply = await call(t.baseUrl, url!.slice(t.baseUrl.length), { apiKey, ...(body ? { json: JSON.parse(body) } : {}) });
      statuses.push(reply.status);
      if (reply.status === 202 && reply.body.operation === 'PAUSE') {
        expect(reply.body.rejected).toEqual([{ subscriptionId: cancelledId, reason: 'cancelled' }]);
      }
    }
    // The last: test subscriptions made with the test key the banner prints beside the live one.
    expect(statuses).toEqual([200, 200, 409, 202, 202, 201]);
    await expectTestModeIdBesideTestKey(lines);
  });
});

/** The test mode id printed beside the test key owns what that key makes (the README's webhooks listen needs it). */
async function expectTestModeIdBesideTestKey(lines: string[]): Promise<void> {
  const [, testKey, testModeId] = /^ {2}test API key: {2}(sk_test_\S+) {2}test mode id: (\S+) {2}\(docs\/partners\.md\)$/.exec(
    lines.find((l) => l.includes('test API key'))!,
  )!;
  const made = await call(t.baseUrl, '/v2/test-helpers/subscriptions', { apiKey: testKey, json: { count: 1 } });
  expect(made.status).toBe(201);
  expect(made.body.data[0].merchantId).toBe(testModeId);
}
