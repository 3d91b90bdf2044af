/**
 * Event destinations to a real Kafka broker (single node, KRaft, on loopback: test/support/kafka-broker.ts):
 * the operations through HTTP, and what a consumer of the topic sees.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, httpOf } from '../support/http.js';
import { kafkaCaPem, SCRAM_USER, startKafka, type KafkaBroker } from '../support/kafka-broker.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

const libs = inject('kafkaLibs');
let t: TestService;
let kafka: KafkaBroker;
beforeAll(async () => {
  if (!libs) return;
  [kafka, t] = await Promise.all([
    startKafka(libs),
    // The broker's certificate is self-signed: trusted as an operator trusts a private CA (KAFKA_CA_FILE).
    startTestService({
      workers: 2,
      webhooksAllowPrivateUrls: true,
      secretsKey: randomBytes(32).toString('base64'),
      kafkaTrustedCa: kafkaCaPem(),
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([kafka?.stop(), t?.close()]);
});

const { api } = httpOf(() => t);

async function destinationFor(apiKey: string, extra: Record<string, unknown> = {}): Promise<{ id: string; topic: string }> {
  const topic = `events-${randomUUID().slice(0, 8)}`;
  await kafka.createTopic(topic, 3);
  const res = await api(apiKey, 'POST', '/v2/event-destinations', {
    type: 'kafka',
    bootstrapServers: [kafka.address],
    topic,
    tls: false,
    ...extra,
  });
  expect(res.status).toBe(201);
  return { id: res.body.id, topic };
}

/** The destination as GET shows it, once `holds` is true of it. */
const destinationWhen = (apiKey: string, id: string, holds: (d: any) => boolean) =>
  waitFor(async () => (await api(apiKey, 'GET', `/v2/event-destinations/${id}`)).body, holds, 30_000);

const parsed = (messages: readonly { value: string }[]) => messages.map((m) => JSON.parse(m.value));

// Each test has three minutes: it runs in the waiting lane (test/support/alone.ts), where a broker's
// JVM restarting beside busy files took a minute once; its consumer waits two.
describe.skipIf(!libs)('event destinations (Kafka)', { timeout: 180_000 }, () => {
  it('a destination is made, read, listed and removed; its password is never answered back and is stored sealed', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const body = {
      type: 'kafka',
      bootstrapServers: [kafka.address],
      topic: 'billing.events',
      types: ['subscription.paused'],
      auth: { mechanism: 'scram-sha-512', username: 'subsvc', password: 'correct-horse-battery-staple' },
    };
    const created = await api(apiKey, 'POST', '/v2/event-destinations', body);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      type: 'kafka',
      bootstrapServers: [kafka.address],
      topic: 'billing.events',
      format: 'cloudevents',
      types: ['subscription.paused'],
      tls: true,
      auth: { mechanism: 'scram-sha-512', username: 'subsvc' },
      status: 'active',
      lastError: null,
      pendingCount: 0,
      livemode: true,
    });
    expect(JSON.stringify(created.body)).not.toContain('correct-horse');
    const stored = await t.db.collection('eventDestinations').findOne({ merchantId });
    expect(JSON.stringify(stored)).not.toContain('correct-horse');
    expect(stored?.auth.sealedPassword).toMatch(/^v1\./);

    const read = await api(apiKey, 'GET', `/v2/event-destinations/${created.body.id}`);
    expect(read.body).toEqual(created.body);
    const listed = await api(apiKey, 'GET', '/v2/event-destinations');
    expect(listed.body.data).toEqual([created.body]);
    const other = await t.merchant();
    expect((await api(other.apiKey, 'GET', `/v2/event-destinations/${created.body.id}`)).body.code).toBe('0121');
    expect((await api(apiKey, 'DELETE', `/v2/event-destinations/${created.body.id}`)).status).toBe(204);
    const gone = await api(apiKey, 'GET', `/v2/event-destinations/${created.body.id}`);
    expect([gone.status, gone.body.code]).toEqual([404, '0121']);
    expect((await api(apiKey, 'POST', `/v2/event-destinations/${created.body.id}/test`)).body.code).toBe('0121');
  });

  it('a service on MongoDB without SECRETS_KEY refuses a password with 503 0911, and takes a destination without one', async () => {
    const keyless = await startTestService({ secretsKey: undefined, webhooksAllowPrivateUrls: true });
    try {
      const { apiKey } = await keyless.merchant();
      const body = { type: 'kafka', bootstrapServers: [kafka.address], topic: 't' };
      const refused = await call(keyless.baseUrl, '/v2/event-destinations', {
        apiKey,
        json: { ...body, auth: { mechanism: 'plain', username: 'u', password: 'p' } },
      });
      expect([refused.status, refused.body.code]).toEqual([503, '0911']);
      expect((await call(keyless.baseUrl, '/v2/event-destinations', { apiKey, json: body })).status).toBe(201);
    } finally {
      await keyless.close();
    }
  });

  it('a private broker is refused with 400 0044 unless the operator lists it; a listed one whose metadata names an unlisted one holds its events', async () => {
    const forwarder = await kafka.forwarder();
    const strict = await startTestService({
      workers: 1,
      webhooksAllowPrivateUrls: false,
      kafkaAllowedBrokers: [forwarder.address],
      secretsKey: randomBytes(32).toString('base64'),
    });
    try {
      const { merchantId, apiKey } = await strict.merchant();
      const body = { type: 'kafka', bootstrapServers: [kafka.address], topic: `listed-${randomUUID().slice(0, 8)}`, tls: false };
      const refused = await call(strict.baseUrl, '/v2/event-destinations', { apiKey, json: body });
      expect([refused.status, refused.body.code]).toEqual([400, '0044']);
      expect(refused.body.detail).toContain('not a public address');

      await kafka.createTopic(body.topic, 1);
      const listed = await call(strict.baseUrl, '/v2/event-destinations', {
        apiKey,
        json: { ...body, bootstrapServers: [forwarder.address] },
      });
      expect(listed.status).toBe(201);
      const [a] = await strict.seed(merchantId, 1);
      expect((await call(strict.baseUrl, `/v2/subscriptions/${a}/pause`, { apiKey, method: 'POST' })).status).toBe(200);
      const failing = await waitFor(
        async () => (await call(strict.baseUrl, `/v2/event-destinations/${listed.body.id}`, { apiKey, method: 'GET' })).body,
        (d) => d.status === 'failing',
        30_000,
      );
      expect(failing.lastError).toContain(`the brokers' metadata names ${kafka.address}, which is not allowed`);
      expect(failing.pendingCount).toBe(1);
    } finally {
      await Promise.all([strict.close(), forwarder.close()]);
    }
  });

  it('credentials without TLS answer 400 0141, a topic or a broker list out of bounds 400 0040, and nothing is stored', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const res = await api(apiKey, 'POST', '/v2/event-destinations', {
      type: 'kafka',
      bootstrapServers: [kafka.address],
      topic: 't',
      tls: false,
      auth: { mechanism: 'plain', username: 'u', password: 'p' },
    });
    expect([res.status, res.body.code]).toEqual([400, '0141']);
    for (const wrong of [
      { topic: 'a/b' },
      { topic: 'x'.repeat(250) },
      { bootstrapServers: [] },
      { bootstrapServers: Array(11).fill(kafka.address) },
    ]) {
      const invalid = await api(apiKey, 'POST', '/v2/event-destinations', {
        type: 'kafka',
        bootstrapServers: [kafka.address],
        topic: 't',
        ...wrong,
      });
      expect([invalid.status, invalid.body.code]).toEqual([400, '0040']);
    }
    expect(await t.db.collection('eventDestinations').countDocuments({ merchantId })).toBe(0);
  });

  it('each event goes out once per destination as a CloudEvent keyed by its subscription, in order; a ping too', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const { id, topic } = await destinationFor(apiKey);
    const [a, b] = await t.seed(merchantId, 2);
    for (const [sub, op] of [
      [a, 'pause'],
      [b, 'pause'],
      [a, 'resume'],
      [a, 'pause'],
    ] as const)
      expect((await api(apiKey, 'POST', `/v2/subscriptions/${sub}/${op}`)).status).toBe(200);
    const ping = await api(apiKey, 'POST', `/v2/event-destinations/${id}/test`);
    expect(ping.status).toBe(202);

    const messages = await kafka.consume(topic, (m) => m.length >= 5);
    const cloud = parsed(messages);
    const events = (await api(apiKey, 'GET', '/v2/events?limit=100')).body.data;
    expect(cloud.filter((e) => e.type !== 'ping')).toHaveLength(4);
    for (const ce of cloud.filter((e) => e.type !== 'ping')) {
      const event = events.find((e: { id: string }) => e.id === ce.id);
      expect(ce).toEqual({
        specversion: '1.0',
        id: event.id,
        source: '/subsvc',
        type: event.type,
        subject: event.data.subscription.id,
        time: event.createdAt,
        datacontenttype: 'application/json',
        data: event,
      });
    }
    for (const message of messages) expect(message.headers.get('content-type')).toMatch(/^application\/cloudevents\+json/);
    const ofA = messages.filter((m) => m.key === a).map((m) => JSON.parse(m.value).type);
    expect(ofA).toEqual(['subscription.paused', 'subscription.resumed', 'subscription.paused']);
    expect(new Set(messages.filter((m) => m.key === a).map((m) => m.partition)).size).toBe(1);
    expect(cloud.find((e) => e.type === 'ping')).toMatchObject({ id: ping.body.id, data: { type: 'ping', data: { destinationId: id } } });
    expect(messages.find((m) => JSON.parse(m.value).type === 'ping')!.key).toBe(id);
    const after = await destinationWhen(apiKey, id, (d) => d.pendingCount === 0);
    expect(after).toMatchObject({ status: 'active', lastError: null });
  });

  it("a test key's destination gets the test mode's events only, a live key's the live ones only", async () => {
    const { merchantId, apiKey, testApiKey } = await t.merchant();
    const live = await destinationFor(apiKey);
    const test = await destinationFor(testApiKey);
    expect((await api(testApiKey, 'GET', `/v2/event-destinations/${test.id}`)).body.livemode).toBe(false);
    const liveSub = (await t.seed(merchantId, 1))[0]!;
    const made = await api(testApiKey, 'POST', '/v2/test-helpers/subscriptions', { count: 1 });
    const testSub = made.body.data[0].id;
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${liveSub}/pause`)).status).toBe(200);
    expect((await api(testApiKey, 'POST', `/v2/subscriptions/${testSub}/pause`)).status).toBe(200);
    const seen = async (topic: string, subject: string) =>
      parsed(await kafka.consume(topic, (m) => m.some((x) => JSON.parse(x.value).subject === subject))).map((e) => [
        e.subject,
        e.data.livemode,
      ]);
    expect(await seen(test.topic, testSub)).toEqual([[testSub, false]]);
    expect(await seen(live.topic, liveSub)).toEqual([[liveSub, true]]);
  });

  it('native format sends the event object itself; types filter what goes', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const { topic } = await destinationFor(apiKey, { format: 'native', types: ['subscription.resumed'] });
    const [a] = await t.seed(merchantId, 1);
    await api(apiKey, 'POST', `/v2/subscriptions/${a}/pause`);
    await api(apiKey, 'POST', `/v2/subscriptions/${a}/resume`);
    const messages = await kafka.consume(topic, (m) => m.length >= 1);
    const events = (await api(apiKey, 'GET', '/v2/events?type=subscription.resumed')).body.data;
    expect(parsed(messages)).toEqual(events);
    expect(messages[0]!.key).toBe(a);
  });

  it('while the broker refuses (unknown topic), events wait and the destination says why; the others go on', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const missing = await api(apiKey, 'POST', '/v2/event-destinations', {
      type: 'kafka',
      bootstrapServers: [kafka.address],
      topic: `missing-${randomUUID().slice(0, 8)}`,
      tls: false,
    });
    const working = await destinationFor(apiKey);
    const [a] = await t.seed(merchantId, 1);
    await api(apiKey, 'POST', `/v2/subscriptions/${a}/pause`);
    expect(await kafka.consume(working.topic, (m) => m.length >= 1)).toHaveLength(1);
    const failing = await destinationWhen(apiKey, missing.body.id, (d) => d.status === 'failing');
    expect(failing.pendingCount).toBe(1);
    expect(failing.lastError).toContain(`topic ${failing.topic} exists`);
  });

  it('an event older than the event retention that never went out is kept, counted on /metrics, and still waits', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const held = await api(apiKey, 'POST', '/v2/event-destinations', {
      type: 'kafka',
      bootstrapServers: [kafka.address],
      topic: `missing-${randomUUID().slice(0, 8)}`,
      tls: false,
    });
    // What a destination failing for 31 days leaves: one event, queued when it happened.
    const at = new Date(Date.now() - 31 * 86_400_000).toISOString().replace('Z', '000Z');
    const eventId = randomUUID();
    const event = { id: eventId, type: 'subscription.paused', createdAt: at, data: {}, livemode: true };
    await t.db.collection('destinationEvents').insertOne({
      _id: `${eventId}.${held.body.id}` as never,
      destinationId: held.body.id,
      merchantId,
      eventId,
      key: eventId,
      at,
      type: event.type,
      event,
    });
    await t.db.collection('eventDestinations').updateOne({ _id: held.body.id }, { $set: { hasWaiting: true } });
    const scrape = await waitFor(
      async () => (await fetch(`${t.baseUrl}/metrics`)).text(),
      (text) => /^subsvc_event_destinations_expired 1$/m.test(text),
      30_000,
    );
    expect(scrape).toMatch(/^subsvc_event_destinations_pending [1-9]/m);
    const destination = await destinationWhen(apiKey, held.body.id, (d) => d.status === 'failing');
    expect(destination.pendingCount).toBe(1);
  });

  it('while the broker is down, events wait with the reason shown; once it is back they all go out in order', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const { id, topic } = await destinationFor(apiKey);
    const ids = await t.seed(merchantId, 20);
    await kafka.kill();
    try {
      for (const sub of ids) await api(apiKey, 'POST', `/v2/subscriptions/${sub}/pause`);
      const failing = await destinationWhen(apiKey, id, (d) => d.status === 'failing');
      expect(failing.lastError).toMatch(/^brokers unreachable/);
      expect(failing.pendingCount).toBe(20);
    } finally {
      await kafka.restart();
    }
    for (const sub of ids) await api(apiKey, 'POST', `/v2/subscriptions/${sub}/resume`);
    const messages = await kafka.consume(topic, (m) => m.length >= 40);
    for (const sub of ids)
      expect(messages.filter((m) => m.key === sub).map((m) => JSON.parse(m.value).type)).toEqual([
        'subscription.paused',
        'subscription.resumed',
      ]);
    const back = await destinationWhen(apiKey, id, (d) => d.status === 'active' && d.pendingCount === 0);
    expect(back.lastError).toBeNull();
  });

  it('over TLS with SCRAM-SHA-256 and SCRAM-SHA-512, each destination publishes its events', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const topic = `scram-${randomUUID().slice(0, 8)}`;
    await kafka.createTopic(topic, 1);
    const ids: string[] = [];
    for (const mechanism of ['scram-sha-256', 'scram-sha-512']) {
      const res = await api(apiKey, 'POST', '/v2/event-destinations', {
        type: 'kafka',
        bootstrapServers: [kafka.saslSslAddress],
        topic,
        tls: true,
        auth: { mechanism, ...SCRAM_USER },
      });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const [a] = await t.seed(merchantId, 1);
    const paused = await api(apiKey, 'POST', `/v2/subscriptions/${a}/pause`);
    expect(paused.status).toBe(200);

    const messages = await kafka.consume(topic, (m) => m.length >= 2);
    expect(parsed(messages).map((e) => [e.type, e.subject])).toEqual([
      ['subscription.paused', a],
      ['subscription.paused', a],
    ]);
    // Acknowledged, then taken off the queue: the message may be read before.
    for (const id of ids) await destinationWhen(apiKey, id, (d) => d.status === 'active' && d.pendingCount === 0);
  });

  it('a wrong SCRAM password shows failing with the reason on GET and holds its events; the others go on', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const refused = await api(apiKey, 'POST', '/v2/event-destinations', {
      type: 'kafka',
      bootstrapServers: [kafka.saslSslAddress],
      topic: `refused-${randomUUID().slice(0, 8)}`,
      auth: { mechanism: 'scram-sha-512', username: SCRAM_USER.username, password: 'not-the-password-0123' },
    });
    expect(refused.status).toBe(201);
    const working = await destinationFor(apiKey);
    const [a] = await t.seed(merchantId, 1);
    await api(apiKey, 'POST', `/v2/subscriptions/${a}/pause`);
    expect(parsed(await kafka.consume(working.topic, (m) => m.length >= 1)).map((e) => e.subject)).toEqual([a]);
    const failing = await destinationWhen(apiKey, refused.body.id, (d) => d.status === 'failing');
    expect(failing.lastError).toMatch(/^Connection to 127\.0\.0\.1:\d+ failed\.: SASL authentication failed/);
    expect(failing.lastError).not.toContain('not-the-password');
    expect(failing.pendingCount).toBe(1);
  });
});
