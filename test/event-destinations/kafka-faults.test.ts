/**
 * Nothing lost when the broker or a worker dies, with a real Kafka broker: the broker SIGKILLed and
 * restarted during a bulk pause of 3,000 (every event arrives, in order per subscription), and a
 * worker process SIGKILLed mid-publish (every event arrives at least once; a duplicate carries the
 * same CloudEvent `id`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call } from '../support/http.js';
import { startKafka, type KafkaBroker } from '../support/kafka-broker.js';
import { databaseUri, startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { FLEET_ON_ONE_DATABASE, startWorker } from '../support/worker-process.js';

const libs = inject('kafkaLibs');
const BULK = 3000;
const key = randomBytes(32).toString('base64');
let kafka: KafkaBroker;
beforeAll(async () => {
  if (libs) kafka = await startKafka(libs);
});
afterAll(async () => {
  await kafka?.stop();
});

async function destination(t: TestService, apiKey: string): Promise<{ id: string; topic: string }> {
  const topic = `faults-${randomUUID().slice(0, 8)}`;
  await kafka.createTopic(topic, 4);
  const res = await call(t.baseUrl, '/v2/event-destinations', {
    apiKey,
    json: { type: 'kafka', bootstrapServers: [kafka.address], topic, tls: false },
  });
  expect(res.status).toBe(201);
  return { id: res.body.id, topic };
}

/** Every event of the merchant, oldest first, as the API lists them. */
async function allEvents(t: TestService, apiKey: string): Promise<{ id: string; type: string; data: any }[]> {
  const events: { id: string; type: string; data: any }[] = [];
  let cursor: string | null = null;
  do {
    const res: any = await call(t.baseUrl, `/v2/events?limit=100${cursor ? `&startingAfter=${cursor}` : ''}`, { method: 'GET', apiKey });
    events.push(...res.body.data);
    cursor = res.body.nextCursor;
  } while (cursor);
  return events.reverse();
}

/** Each key's event ids as the topic holds them, a repeated id kept at its first place. */
function firstSeenByKey(messages: readonly { key: string; value: string }[]): Map<string, string[]> {
  const byKey = new Map<string, string[]>();
  for (const m of messages) {
    const ids = byKey.get(m.key) ?? [];
    const { id } = JSON.parse(m.value) as { id: string };
    if (!ids.includes(id)) ids.push(id);
    byKey.set(m.key, ids);
  }
  return byKey;
}

const waiting = (t: TestService) => t.db.collection('destinationEvents').countDocuments({});

describe.skipIf(!libs)('Kafka faults', () => {
  it('the broker SIGKILLed and restarted during a bulk pause of 3,000: every event arrives, in order per subscription', async () => {
    const t = await startTestService({ workers: 2, webhooksAllowPrivateUrls: true, secretsKey: key });
    try {
      const { merchantId, apiKey } = await t.merchant();
      const { id, topic } = await destination(t, apiKey);
      const ids = await t.seed(merchantId, BULK);
      const few = ids.slice(0, 100);
      expect((await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { apiKey, json: { subscriptions: ids } })).status).toBe(202);
      // Some have gone out when the broker dies.
      await waitFor(
        () => t.db.collection('events').countDocuments({ merchantId }),
        (n) => n >= 300,
        120_000,
        100,
      );
      await kafka.kill();
      const failing = await waitFor(
        async () => (await call(t.baseUrl, `/v2/event-destinations/${id}`, { method: 'GET', apiKey })).body,
        (d) => d.status === 'failing',
        60_000,
        250,
      );
      expect(failing.lastError).toMatch(/^brokers unreachable/);
      // The same subscriptions change again while their first events wait.
      expect((await call(t.baseUrl, '/v2/subscriptions/bulk/resume', { apiKey, json: { subscriptions: few } })).status).toBe(202);
      await kafka.restart();
      const events = await waitFor(
        () => allEvents(t, apiKey),
        (e) => e.filter((x) => x.type !== 'bulk_request.completed').length >= BULK + few.length,
        180_000,
        1_000,
      );
      const messages = await kafka.consume(topic, (m) => new Set(m.map((x) => JSON.parse(x.value).id)).size >= events.length, 120_000);
      expect(new Set(messages.map((m) => JSON.parse(m.value).id))).toEqual(new Set(events.map((e) => e.id)));
      const expected = new Map<string, string[]>();
      for (const e of events) {
        const k = e.data.subscription?.id ?? e.data.requestId;
        expected.set(k, [...(expected.get(k) ?? []), e.id]);
      }
      expect(firstSeenByKey(messages)).toEqual(expected);
      for (const sub of few) expect(expected.get(sub)!.length).toBe(2);
      await waitFor(
        () => waiting(t),
        (n) => n === 0,
        30_000,
      );
    } finally {
      await t.close();
    }
  }, 480_000);

  it('a worker SIGKILLed mid-publish: every event arrives at least once, and a duplicate has the same CloudEvent id', async () => {
    const t = await startTestService({ workers: 0, webhooksAllowPrivateUrls: true, secretsKey: key });
    const env = { ...FLEET_ON_ONE_DATABASE, WEBHOOKS_ALLOW_PRIVATE_URLS: 'true', SECRETS_KEY: key };
    const uri = databaseUri(t.db.databaseName);
    let worker = await startWorker(uri, env);
    try {
      const { merchantId, apiKey } = await t.merchant();
      const { topic } = await destination(t, apiKey);
      const ids = await t.seed(merchantId, 1000);
      expect((await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { apiKey, json: { subscriptions: ids } })).status).toBe(202);
      // Killed once it has published some and not all.
      const total = () => t.db.collection('events').countDocuments({ merchantId, type: 'subscription.paused' });
      await waitFor(
        async () => ({ recorded: await total(), waiting: await waiting(t) }),
        ({ recorded, waiting: w }) => recorded > 0 && recorded - w >= 100,
        120_000,
        50,
      );
      await worker.stop('SIGKILL');
      worker = await startWorker(uri, env);
      // The pauses' events and the request's completion.
      const messages = await kafka.consume(topic, (m) => new Set(m.map((x) => JSON.parse(x.value).id)).size >= ids.length + 1, 180_000);
      const events = await allEvents(t, apiKey);
      expect(events.filter((e) => e.type === 'subscription.paused')).toHaveLength(ids.length);
      const seen = messages.map((m) => JSON.parse(m.value) as { id: string; subject: string; type: string });
      expect(new Set(seen.map((m) => m.id))).toEqual(new Set(events.map((e) => e.id)));
      // A message sent twice is the same CloudEvent: same id, same subject, same key.
      const subjectOf = new Map(events.map((e) => [e.id, e.data.subscription?.id ?? e.data.requestId]));
      for (const [i, m] of seen.entries()) {
        expect(m.subject).toBe(subjectOf.get(m.id));
        expect(messages[i]!.key).toBe(m.subject);
      }
      console.log(`worker killed mid-publish: ${seen.length} messages for ${events.length} events`);
    } finally {
      await worker.stop('SIGKILL');
      await t.close();
    }
  }, 480_000);
});
