/** Webhook endpoints with `format: "cloudevents"`: each delivery a CloudEvent (HTTP binding, structured mode), still signed by Standard Webhooks. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let t: TestService;
let receiver: Receiver;
beforeAll(async () => {
  [t, receiver] = await Promise.all([startTestService({ workers: 1 }), startReceiver()]);
});
afterAll(async () => {
  await Promise.all([receiver.close(), t.close()]);
});

it('an endpoint asking for CloudEvents receives each event as one, signed, with the event whole as its data', async () => {
  const { merchantId, apiKey } = await t.merchant();
  const made = await call(t.baseUrl, '/v2/webhook-endpoints', {
    apiKey,
    json: { url: receiver.url, events: ['subscription.paused'], format: 'cloudevents' },
  });
  expect([made.status, made.body.format]).toEqual([201, 'cloudevents']);
  receiver.secret = made.body.secret;
  const read = await call(t.baseUrl, `/v2/webhook-endpoints/${made.body.id}`, { method: 'GET', apiKey });
  expect(read.body.format).toBe('cloudevents');
  const [id] = await t.seed(merchantId, 1);
  await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey });
  const [delivery] = await waitFor(
    async () => receiver.received,
    (r) => r.length >= 1,
  );
  const [event] = (await call(t.baseUrl, '/v2/events?type=subscription.paused', { method: 'GET', apiKey })).body.data;
  expect(delivery!.verified).toBe(true);
  expect(delivery!.id).toBe(event.id);
  expect(delivery!.contentType).toMatch(/^application\/cloudevents\+json/);
  expect(delivery!.body).toEqual({
    specversion: '1.0',
    id: event.id,
    source: '/subsvc',
    type: 'subscription.paused',
    subject: id,
    time: event.createdAt,
    datacontenttype: 'application/json',
    data: event,
  });
  const back = await call(t.baseUrl, `/v2/webhook-endpoints/${made.body.id}`, { method: 'PATCH', apiKey, json: { format: 'standard' } });
  expect(back.body.format).toBe('standard');
});
