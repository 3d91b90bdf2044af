/**
 * No change without its event, and no event without its delivery, across a SIGKILL: a worker
 * process applies a bulk pause while the relay's insert into `events` is held (wire proxy), is
 * killed with SIGKILL with every change made and no event stored, while the receiver is down; a
 * fresh worker then finds every change's event in the outbox and delivers them all.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inject } from 'vitest';
import { call } from '../support/http.js';
import { startReceiver } from '../support/receiver.js';
import { databaseUri, startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { startWireProxy, type WireProxy } from '../support/wire-proxy.js';
import { FLEET_ON_ONE_DATABASE, startWorker } from '../support/worker-process.js';

let t: TestService;
let proxy: WireProxy;
beforeAll(async () => {
  t = await startTestService();
  proxy = await startWireProxy(inject('mongoUri'));
});
afterAll(async () => {
  await proxy.close();
  await t.close();
});

it('a worker killed between the changes and their events loses none: all are recorded and delivered after restart', async () => {
  const { merchantId, apiKey } = await t.merchant();
  const down = await startReceiver();
  const port = Number(new URL(down.url).port);
  const endpoint = await call(t.baseUrl, '/v2/webhook-endpoints', {
    method: 'POST',
    apiKey,
    json: { url: down.url, events: ['subscription.paused'] },
  });
  await down.close(); // the receiver is down while the worker dies
  const ids = await t.seed(merchantId, 50);
  const held = proxy.on({ command: 'insert', collection: 'events' }, { action: 'hold' });
  const doomed = await startWorker(proxy.uri(t.db.databaseName), {
    ...FLEET_ON_ONE_DATABASE,
    WEBHOOK_RETRY_DELAYS_MS: '200,200,200,200,200',
    WEBHOOKS_ALLOW_PRIVATE_URLS: 'true',
  });
  await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { apiKey, json: { subscriptions: ids } });
  await held.reached;
  const subscriptions = t.db.collection('subscriptions');
  expect(await subscriptions.countDocuments({ merchantId, status: 'paused' })).toBe(50);
  expect(await t.db.collection('events').countDocuments({ merchantId })).toBe(0);
  await doomed.stop('SIGKILL');
  held.remove();

  const receiver = await startReceiver(port);
  receiver.secret = endpoint.body.secret;
  const rescuer = await startWorker(databaseUri(t.db.databaseName), {
    ...FLEET_ON_ONE_DATABASE,
    WEBHOOK_RETRY_DELAYS_MS: '200,200,200,200,200',
    WEBHOOKS_ALLOW_PRIVATE_URLS: 'true',
  });
  try {
    await waitFor(
      async () => new Set(receiver.received.map((r) => r.id)).size,
      (n) => n >= 50,
      120_000,
      250,
    );
    const events = await t.db.collection('events').find({ merchantId, type: 'subscription.paused' }).toArray();
    expect(events).toHaveLength(50);
    expect(new Set(events.map((e) => e.data.subscription.id))).toEqual(new Set(ids));
    expect(new Set(receiver.received.map((r) => r.id))).toEqual(new Set(events.map((e) => String(e._id))));
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    expect(await subscriptions.countDocuments({ merchantId, 'outbox.key': { $exists: true } })).toBe(0);
  } finally {
    await rescuer.stop();
    await receiver.close();
  }
}, 240_000);
