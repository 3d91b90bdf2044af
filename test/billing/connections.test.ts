/**
 * The Stripe connection through HTTP on the real database (docs/billing.md "Connect"): PUT connects
 * or changes it, GET reads it, DELETE removes it; one per mode, each mode taking Stripe keys of its
 * own; the keys stored sealed, and never answered back nor logged.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 0, secretsKey: randomBytes(32).toString('base64'), publicUrl: 'https://billing.example.com' });
});
afterAll(async () => {
  await t?.close();
});

const http = httpOf(() => t);
/** The Stripe connection's one path. */
const connection = (apiKey: string, method: string, json?: unknown) => http.api(apiKey, method, '/v2/billing-connections/stripe', json);
const secrets = () => ({
  live: `sk_live_${randomBytes(12).toString('hex')}`,
  test: `sk_test_${randomBytes(12).toString('hex')}`,
  webhook: `whsec_${randomBytes(16).toString('hex')}`,
});

describe('PUT, GET and DELETE /v2/billing-connections/stripe', () => {
  it('connects with a live key, answers its last four characters only, and GET shows the same', async () => {
    const { apiKey } = await t.merchant();
    const s = secrets();
    const put = await connection(apiKey, 'PUT', { apiKey: s.live, webhookSecret: s.webhook });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({
      id: expect.any(String),
      system: 'stripe',
      status: 'active',
      apiKeyLast4: s.live.slice(-4),
      pauseBehavior: 'void',
      webhookUrl: `https://billing.example.com/connectors/stripe/${put.body.id}/webhooks`,
      createdAt: expect.any(String),
      lastSyncAt: null,
      livemode: true,
    });
    expect(await connection(apiKey, 'GET')).toMatchObject({ status: 200, body: put.body });
  });

  it('a second PUT keeps the id and createdAt and changes the key and pauseBehavior', async () => {
    const { apiKey } = await t.merchant();
    const first = await connection(apiKey, 'PUT', { apiKey: secrets().live, webhookSecret: secrets().webhook });
    const s = secrets();
    const second = await connection(apiKey, 'PUT', { apiKey: s.live, webhookSecret: s.webhook, pauseBehavior: 'mark_uncollectible' });
    expect(second.body).toMatchObject({
      id: first.body.id,
      createdAt: first.body.createdAt,
      apiKeyLast4: s.live.slice(-4),
      pauseBehavior: 'mark_uncollectible',
    });
  });

  it('DELETE answers 204, then GET and DELETE answer 404 0120', async () => {
    const { apiKey } = await t.merchant();
    expect((await connection(apiKey, 'GET')).body).toMatchObject({ status: 404, code: '0120' });
    await connection(apiKey, 'PUT', { apiKey: secrets().live, webhookSecret: secrets().webhook });
    expect((await connection(apiKey, 'DELETE')).status).toBe(204);
    expect(await connection(apiKey, 'GET')).toMatchObject({ status: 404, body: { code: '0120' } });
    expect(await connection(apiKey, 'DELETE')).toMatchObject({ status: 404, body: { code: '0120' } });
  });

  it('each mode has its own connection and takes Stripe keys of its own mode only, else 422 0053', async () => {
    const { apiKey, testApiKey } = await t.merchant();
    const s = secrets();
    expect(await connection(apiKey, 'PUT', { apiKey: s.test, webhookSecret: s.webhook })).toMatchObject({
      status: 422,
      body: { code: '0053' },
    });
    expect(await connection(testApiKey, 'PUT', { apiKey: s.live, webhookSecret: s.webhook })).toMatchObject({
      status: 422,
      body: { code: '0053' },
    });
    const test = await connection(testApiKey, 'PUT', { apiKey: `rk_test_${randomBytes(12).toString('hex')}`, webhookSecret: s.webhook });
    expect(test.body).toMatchObject({ livemode: false });
    expect(await connection(apiKey, 'GET')).toMatchObject({ status: 404, body: { code: '0120' } });
    expect((await connection(testApiKey, 'GET')).body.id).toBe(test.body.id);
  });

  it('a key that is not a Stripe secret or restricted key, or an unknown field, answers 400 0040', async () => {
    const { apiKey } = await t.merchant();
    expect(await connection(apiKey, 'PUT', { apiKey: 'pk_live_1234567890abcdef', webhookSecret: secrets().webhook })).toMatchObject({
      status: 400,
      body: { code: '0040' },
    });
    expect(await connection(apiKey, 'PUT', { apiKey: secrets().live, webhookSecret: secrets().webhook, status: 'active' })).toMatchObject({
      status: 400,
      body: { code: '0040' },
    });
  });

  it('the keys are stored sealed and never logged', async () => {
    const { apiKey, merchantId } = await t.merchant();
    const s = secrets();
    await connection(apiKey, 'PUT', { apiKey: s.live, webhookSecret: s.webhook });
    const stored = JSON.stringify(await t.db.collection('billingConnections').findOne({ merchantId }));
    expect(stored).toContain(s.live.slice(-4));
    expect(stored).not.toContain(s.live);
    expect(stored).not.toContain(s.webhook);
    const logs = JSON.stringify(t.logLines);
    expect(logs).not.toContain(s.live);
    expect(logs).not.toContain(s.webhook);
  });
});

describe('without SECRETS_KEY on a MongoDB URI', () => {
  let keyless: TestService;
  beforeAll(async () => {
    keyless = await startTestService({ workers: 0, secretsKey: undefined });
  });
  afterAll(async () => {
    await keyless?.close();
  });

  it('connecting answers 503 0911 saying SECRETS_KEY is unset, and stores nothing', async () => {
    const { apiKey } = await keyless.merchant();
    const s = secrets();
    const put = await call(keyless.baseUrl, '/v2/billing-connections/stripe', {
      method: 'PUT',
      apiKey,
      json: { apiKey: s.live, webhookSecret: s.webhook },
    });
    expect(put).toMatchObject({ status: 503, body: { code: '0911', detail: expect.stringContaining('SECRETS_KEY') } });
    expect(await call(keyless.baseUrl, '/v2/billing-connections/stripe', { method: 'GET', apiKey })).toMatchObject({ status: 404 });
  });
});
