/**
 * Spec, mock and service agree: the service behind `prism proxy --errors` shows no contract
 * violation; Prism and the service give the same status to the same invalid requests; and the
 * generated files follow the spec.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SPEC_PATH } from '../../src/lib/spec.js';
import { exampleList } from '../../scripts/mock-spec.js';
import { call } from '../support/http.js';
import { startPrism, type RunningPrism } from '../support/prism.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);
let service: TestService;
let mock: RunningPrism;
let referee: RunningPrism;
let merchant: { merchantId: string; apiKey: string };
beforeAll(async () => {
  service = await startTestService();
  [mock, referee] = await Promise.all([startPrism(), startPrism(service.baseUrl)]);
  merchant = await service.merchant();
});
afterAll(async () => {
  await Promise.all([mock?.stop(), referee?.stop()]);
  await service?.close();
});

describe('the service behind prism proxy --errors', () => {
  it('answers the integration scenarios with no contract violation', async () => {
    const [fulfilled, paused, cancelled, bulkA, bulkB] = await Promise.all([
      service.seed(merchant.merchantId, 1, 'fulfilled'),
      service.seed(merchant.merchantId, 1, 'paused'),
      service.seed(merchant.merchantId, 1, 'cancelled'),
      service.seed(merchant.merchantId, 1, 'fulfilled'),
      service.seed(merchant.merchantId, 1, 'paused'),
    ]);
    const cases: [string, RequestInit, number][] = [
      [`/v2/subscriptions/${fulfilled[0]}/pause`, {}, 200],
      [`/v2/subscriptions/${fulfilled[0]}/pause`, {}, 200],
      [`/v2/subscriptions/${paused[0]}/resume`, {}, 200],
      [`/v2/subscriptions/${cancelled[0]}/pause`, {}, 409],
      [`/v2/subscriptions/${randomUUID()}/resume`, {}, 404],
      ['/v2/subscriptions/bulk/pause', { body: JSON.stringify({ subscriptions: [bulkA[0], randomUUID(), cancelled[0]] }) }, 202],
      [`/v2/subscriptions/${randomUUID()}/pause`, { body: JSON.stringify({ subscriptions: [bulkA[0]] }) }, 202],
      ['/v2/subscriptions/bulk/resume', { body: JSON.stringify({ subscriptions: [bulkB[0]] }) }, 202],
      ['/v2/subscriptions/bulk/pause', { body: JSON.stringify({ filter: { status: ['fulfilled'] }, dryRun: true }) }, 200],
      [
        '/v2/subscriptions/bulk/resume',
        { body: JSON.stringify({ filter: { status: ['paused', 'cancelled'], createdAfter: '2020-01-01T00:00:00Z' } }) },
        202,
      ],
    ];
    for (const [path, init, expected] of cases) {
      const headers: Record<string, string> = { 'x-api-key': merchant.apiKey };
      if (init.body) headers['content-type'] = 'application/json';
      const res = await fetch(`${referee.baseUrl}${path}`, { method: 'POST', headers, ...init });
      const violations = res.headers.get('sl-violations');
      expect({ path, status: res.status, violations }).toEqual({ path, status: expected, violations: null });
    }
  });
});

describe('Idempotency-Key through prism proxy --errors', () => {
  it('a replay and a reused key are answered as the spec says, with no violation', async () => {
    const [a, b] = await service.seed(merchant.merchantId, 2, 'fulfilled');
    const send = (id: string) =>
      fetch(`${referee.baseUrl}/v2/subscriptions/${id}/pause`, {
        method: 'POST',
        headers: { 'x-api-key': merchant.apiKey, 'idempotency-key': `referee-${a}` },
      });
    const seen = [];
    for (const res of [await send(a!), await send(a!), await send(b!)]) {
      seen.push({ status: res.status, replayed: res.headers.get('idempotent-replayed'), violations: res.headers.get('sl-violations') });
    }
    expect(seen).toEqual([
      { status: 200, replayed: null, violations: null },
      { status: 200, replayed: 'true', violations: null },
      { status: 422, replayed: null, violations: null },
    ]);
  });
});

describe('Prism and the service give the same verdict on invalid requests', () => {
  const json = { 'content-type': 'application/json' };
  const table: [string, (key: string) => { path: string; headers: Record<string, string>; body?: string; method?: string }, number][] = [
    [
      'an invalid UUID in the list',
      (key) => ({
        path: '/v2/subscriptions/bulk/pause',
        headers: { ...json, 'x-api-key': key },
        body: JSON.stringify({ subscriptions: [randomUUID(), 'nope'] }),
      }),
      400,
    ],
    [
      '3001 ids',
      (key) => ({
        path: '/v2/subscriptions/bulk/pause',
        headers: { ...json, 'x-api-key': key },
        body: JSON.stringify({ subscriptions: Array.from({ length: 3001 }, () => randomUUID()) }),
      }),
      400,
    ],
    ['no body on the bulk operation', (key) => ({ path: '/v2/subscriptions/bulk/pause', headers: { 'x-api-key': key } }), 400],
    [
      'both subscriptions and a filter',
      (key) => ({
        path: '/v2/subscriptions/bulk/pause',
        headers: { ...json, 'x-api-key': key },
        body: JSON.stringify({ subscriptions: [randomUUID()], filter: {} }),
      }),
      400,
    ],
    [
      'neither subscriptions nor a filter, only dryRun',
      (key) => ({ path: '/v2/subscriptions/bulk/resume', headers: { ...json, 'x-api-key': key }, body: JSON.stringify({ dryRun: true }) }),
      400,
    ],
    [
      'a filter with an unknown field',
      (key) => ({
        path: '/v2/subscriptions/bulk/pause',
        headers: { ...json, 'x-api-key': key },
        body: JSON.stringify({ filter: { plan: [randomUUID()] } }),
      }),
      400,
    ],
    [
      'a filter on the templated path',
      (key) => ({
        path: `/v2/subscriptions/${randomUUID()}/pause`,
        headers: { ...json, 'x-api-key': key },
        body: JSON.stringify({ filter: {} }),
      }),
      400,
    ],
    [
      'an empty list',
      (key) => ({
        path: '/v2/subscriptions/bulk/resume',
        headers: { ...json, 'x-api-key': key },
        body: JSON.stringify({ subscriptions: [] }),
      }),
      400,
    ],
    [
      'an unknown body property',
      (key) => ({
        path: `/v2/subscriptions/${randomUUID()}/pause`,
        headers: { ...json, 'x-api-key': key },
        body: JSON.stringify({ status: 'paused' }),
      }),
      400,
    ],
    ['a missing API key', () => ({ path: `/v2/subscriptions/${randomUUID()}/pause`, headers: {} }), 401],
    [
      'a text/plain body',
      (key) => ({
        path: `/v2/subscriptions/${randomUUID()}/pause`,
        headers: { 'content-type': 'text/plain', 'x-api-key': key },
        body: 'pause',
      }),
      415,
    ],
    [
      'a GET on an operation path',
      (key) => ({ path: `/v2/subscriptions/${randomUUID()}/resume`, headers: { 'x-api-key': key }, method: 'GET' }),
      405,
    ],
  ];

  it.each(table)('%s', async (_name, request, expected) => {
    const { mock: fromMock, service: fromService } = await verdicts(request('sk_any-key-the-mock-accepts'), request(merchant.apiKey));
    expect({ mock: fromMock.status, service: fromService.status }).toEqual({ mock: expected, service: expected });
  });
});

interface TableRequest {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
  readonly method?: string;
  /** Sent to the mock only: a stateless mock knows no ids, so it is asked for the answer (docs/partners.md: where the mock differs). */
  readonly mockPrefers?: string;
}

/** The status and problem `code` the mock and the service give to one request each (the service's answer checked against the spec). */
async function verdicts(forMock: TableRequest, forService: TableRequest) {
  const method = forMock.method ?? 'POST';
  const mockHeaders = { ...forMock.headers, ...(forMock.mockPrefers ? { prefer: forMock.mockPrefers } : {}) };
  const fromMock = await fetch(`${mock.baseUrl}${forMock.path}`, { method, headers: mockHeaders, body: forMock.body });
  const mockBody = (fromMock.headers.get('content-type') ?? '').includes('json')
    ? ((await fromMock.json()) as { code?: string })
    : undefined;
  const fromService = await call(service.baseUrl, forService.path, {
    method,
    headers: forService.headers,
    ...(forService.body ? { rawBody: forService.body } : {}),
  });
  return {
    mock: { status: fromMock.status, code: mockBody?.code },
    service: { status: fromService.status, code: (fromService.body as { code?: string }).code },
  };
}

/** Ids of the service's merchant that the success rows act on (the mock takes any id). */
interface Ids {
  /** Paused with a scheduled resume. */
  readonly scheduled: string;
  readonly cancelled: string;
  /** The `subscription.paused` event of `scheduled`. */
  readonly event: string;
  readonly endpoint: string;
  /** An endpoint for the one row that deletes it. */
  readonly doomedEndpoint: string;
  /** API keys of the merchant, besides the one the rows send: one to roll, one to revoke. */
  readonly rolledKey: string;
  readonly doomedKey: string;
  /** Another merchant, holding one key only: its key and the key's id. */
  readonly lone: { readonly apiKey: string; readonly keyId: string };
  /** A portal link of `scheduled`, for the one row that revokes it. */
  readonly doomedPortalLink: string;
}

async function serviceIds(): Promise<Ids> {
  const [[scheduled], [cancelled]] = await Promise.all([
    service.seed(merchant.merchantId, 1, 'fulfilled'),
    service.seed(merchant.merchantId, 1, 'cancelled'),
  ]);
  const send = (path: string, options: Parameters<typeof call>[2]) => call(service.baseUrl, path, { apiKey: merchant.apiKey, ...options });
  const paused = await send(`/v2/subscriptions/${scheduled}/pause`, { json: { resumeAt: new Date(Date.now() + 600_000).toISOString() } });
  const endpoints = [];
  for (const description of ['kept', 'doomed'])
    endpoints.push(await send('/v2/webhook-endpoints', { json: { url: 'http://127.0.0.1:9/hooks', events: ['*'], description } }));
  const ofScheduled = (e: { data: { subscription: { id: string } } }) => e.data.subscription.id === scheduled;
  // The service records the event right after its answer: look until it is there.
  const events = await waitFor(
    () => send('/v2/events?type=subscription.paused&limit=100', { method: 'GET' }),
    (r) => r.body.data.some(ofScheduled),
    20_000,
  );
  expect([paused.status, ...endpoints.map((e) => e.status)]).toEqual([200, 201, 201]);
  const event = events.body.data.find(ofScheduled);
  const keys = [await send('/v2/api-keys', {}), await send('/v2/api-keys', {})];
  expect(keys.map((k) => k.status)).toEqual([201, 201]);
  const lone = await service.merchant();
  const loneKeys = await call(service.baseUrl, '/v2/api-keys', { method: 'GET', apiKey: lone.apiKey });
  const portalLink = await send(`/v2/subscriptions/${scheduled}/portal-links`, {});
  expect(portalLink.status).toBe(201);
  return {
    scheduled: scheduled!,
    cancelled: cancelled!,
    event: event.id,
    endpoint: endpoints[0]!.body.id,
    doomedEndpoint: endpoints[1]!.body.id,
    rolledKey: keys[0]!.body.id,
    doomedKey: keys[1]!.body.id,
    lone: { apiKey: lone.apiKey, keyId: loneKeys.body.data[0].id },
    doomedPortalLink: portalLink.body.id,
  };
}

const anyIds = (): Ids => ({
  scheduled: randomUUID(),
  cancelled: randomUUID(),
  event: randomUUID(),
  endpoint: randomUUID(),
  doomedEndpoint: randomUUID(),
  rolledKey: randomUUID(),
  doomedKey: randomUUID(),
  lone: { apiKey: `sk_${randomUUID()}`, keyId: randomUUID() },
  doomedPortalLink: randomUUID(),
});

describe('Prism and the service give the same verdict on the schedule, events, webhook endpoint, pause policy, plan and API key operations', () => {
  /** A plan id the rows name, then read. */
  const plan = randomUUID();
  const json = { 'content-type': 'application/json' };
  type Row = [string, (key: string, ids: Ids) => TableRequest, number, string | undefined];
  /** An empty key: no `x-api-key` header at all. */
  const auth = (key: string): Record<string, string> => (key ? { 'x-api-key': key } : {});
  const send = (method: string, path: string, key: string, extra: Partial<TableRequest> = {}): TableRequest => ({
    path,
    method,
    ...extra,
    headers: { ...auth(key), ...extra.headers },
  });
  const get = (path: string, key: string, mockPrefers?: string) => send('GET', path, key, mockPrefers ? { mockPrefers } : {});
  const patch = (path: string, key: string, body: unknown, mockPrefers?: string) =>
    send('PATCH', path, key, { headers: json, body: JSON.stringify(body), ...(mockPrefers ? { mockPrefers } : {}) });
  const table: Row[] = [
    [
      'deleteSubscriptionSchedule: a scheduled resume dropped',
      (key, ids) => send('DELETE', `/v2/subscriptions/${ids.scheduled}/schedule`, key),
      200,
      undefined,
    ],
    [
      'deleteSubscriptionSchedule: an unknown subscription',
      (key) => send('DELETE', `/v2/subscriptions/${randomUUID()}/schedule`, key, { mockPrefers: 'code=404' }),
      404,
      '0020',
    ],
    [
      'deleteSubscriptionSchedule: a cancelled subscription',
      (key, ids) => send('DELETE', `/v2/subscriptions/${ids.cancelled}/schedule`, key, { mockPrefers: 'code=409' }),
      409,
      '0030',
    ],
    [
      'deleteSubscriptionSchedule: a missing API key',
      (_key, ids) => send('DELETE', `/v2/subscriptions/${ids.scheduled}/schedule`, ''),
      401,
      '0010',
    ],
    ['getEvent: an event', (key, ids) => get(`/v2/events/${ids.event}`, key), 200, undefined],
    ['getEvent: an unknown event', (key) => get(`/v2/events/${randomUUID()}`, key, 'code=404'), 404, '0024'],
    ['getEvent: a missing API key', (_key, ids) => get(`/v2/events/${ids.event}`, ''), 401, '0010'],
    ['resendEvent: an event', (key, ids) => send('POST', `/v2/events/${ids.event}/resend`, key), 202, undefined],
    [
      'resendEvent: an unknown event',
      (key) => send('POST', `/v2/events/${randomUUID()}/resend`, key, { mockPrefers: 'code=404' }),
      404,
      '0024',
    ],
    ['resendEvent: a missing API key', (_key, ids) => send('POST', `/v2/events/${ids.event}/resend`, ''), 401, '0010'],
    ['listWebhookEndpoints: a page', (key) => get('/v2/webhook-endpoints?limit=10', key), 200, undefined],
    ['listWebhookEndpoints: limit=0', (key) => get('/v2/webhook-endpoints?limit=0', key), 400, '0040'],
    ['listWebhookEndpoints: a missing API key', () => get('/v2/webhook-endpoints', ''), 401, '0010'],
    ['getWebhookEndpoint: an endpoint', (key, ids) => get(`/v2/webhook-endpoints/${ids.endpoint}`, key), 200, undefined],
    ['getWebhookEndpoint: an unknown endpoint', (key) => get(`/v2/webhook-endpoints/${randomUUID()}`, key, 'code=404'), 404, '0023'],
    ['getWebhookEndpoint: a missing API key', (_key, ids) => get(`/v2/webhook-endpoints/${ids.endpoint}`, ''), 401, '0010'],
    [
      'updateWebhookEndpoint: disabled, other events',
      (key, ids) => patch(`/v2/webhook-endpoints/${ids.endpoint}`, key, { status: 'disabled', events: ['subscription.resumed'] }),
      200,
      undefined,
    ],
    ['updateWebhookEndpoint: an empty body', (key, ids) => patch(`/v2/webhook-endpoints/${ids.endpoint}`, key, {}), 400, '0040'],
    [
      'updateWebhookEndpoint: a status outside the enum',
      (key, ids) => patch(`/v2/webhook-endpoints/${ids.endpoint}`, key, { status: 'off' }),
      400,
      '0040',
    ],
    [
      'updateWebhookEndpoint: an unknown endpoint',
      (key) => patch(`/v2/webhook-endpoints/${randomUUID()}`, key, { description: 'x' }, 'code=404'),
      404,
      '0023',
    ],
    [
      'updateWebhookEndpoint: a missing API key',
      (_key, ids) => patch(`/v2/webhook-endpoints/${ids.endpoint}`, '', { description: 'x' }),
      401,
      '0010',
    ],
    [
      'createWebhookEndpoint: an unknown body property',
      (key) =>
        send('POST', '/v2/webhook-endpoints', key, {
          headers: json,
          body: JSON.stringify({ url: 'https://example.com/hooks', events: ['*'], secret: 'mine' }),
        }),
      400,
      '0040',
    ],
    [
      'createWebhookEndpoint: an event type that does not exist',
      (key) =>
        send('POST', '/v2/webhook-endpoints', key, {
          headers: json,
          body: JSON.stringify({ url: 'https://example.com/hooks', events: ['subscription.deleted'] }),
        }),
      400,
      '0040',
    ],
    ['listWebhookDeliveries: a page', (key, ids) => get(`/v2/webhook-endpoints/${ids.endpoint}/deliveries?limit=10`, key), 200, undefined],
    ['listWebhookDeliveries: limit=101', (key, ids) => get(`/v2/webhook-endpoints/${ids.endpoint}/deliveries?limit=101`, key), 400, '0040'],
    [
      'listWebhookDeliveries: an unknown endpoint',
      (key) => get(`/v2/webhook-endpoints/${randomUUID()}/deliveries`, key, 'code=404'),
      404,
      '0023',
    ],
    ['listWebhookDeliveries: a missing API key', (_key, ids) => get(`/v2/webhook-endpoints/${ids.endpoint}/deliveries`, ''), 401, '0010'],
    [
      'deleteWebhookEndpoint: an endpoint',
      (key, ids) => send('DELETE', `/v2/webhook-endpoints/${ids.doomedEndpoint}`, key),
      204,
      undefined,
    ],
    [
      'deleteWebhookEndpoint: the same endpoint again',
      (key, ids) => send('DELETE', `/v2/webhook-endpoints/${ids.doomedEndpoint}`, key, { mockPrefers: 'code=404' }),
      404,
      '0023',
    ],
    ['deleteWebhookEndpoint: a missing API key', (_key, ids) => send('DELETE', `/v2/webhook-endpoints/${ids.endpoint}`, ''), 401, '0010'],
    ['getPausePolicy: the policy', (key) => get('/v2/pause-policy', key), 200, undefined],
    ['getPausePolicy: a missing API key', () => get('/v2/pause-policy', ''), 401, '0010'],
    // Every rule off: the rows above and below that pause are not refused by it.
    [
      'putPausePolicy: every rule off',
      (key) =>
        send('PUT', '/v2/pause-policy', key, {
          headers: json,
          body: JSON.stringify({ maxPauseDays: null, maxPausesPerYear: null, requireResumeAt: false }),
        }),
      200,
      undefined,
    ],
    [
      'putPausePolicy: maxPauseDays 0',
      (key) =>
        send('PUT', '/v2/pause-policy', key, {
          headers: json,
          body: JSON.stringify({ maxPauseDays: 0, maxPausesPerYear: null, requireResumeAt: false }),
        }),
      400,
      '0040',
    ],
    [
      'putPausePolicy: an unknown property',
      (key) =>
        send('PUT', '/v2/pause-policy', key, {
          headers: json,
          body: JSON.stringify({ maxPauseDays: null, maxPausesPerYear: null, requireResumeAt: false, maxResumes: 1 }),
        }),
      400,
      '0040',
    ],
    ['putPausePolicy: no body', (key) => send('PUT', '/v2/pause-policy', key), 400, '0040'],
    [
      'putPausePolicy: a missing API key',
      () =>
        send('PUT', '/v2/pause-policy', '', {
          headers: json,
          body: JSON.stringify({ maxPauseDays: null, maxPausesPerYear: null, requireResumeAt: false }),
        }),
      401,
      '0010',
    ],
    ['putPlan: a name', (key) => send('PUT', `/v2/plans/${plan}`, key, { headers: json, body: '{"name":"Gold"}' }), 200, undefined],
    ['putPlan: an empty name', (key) => send('PUT', `/v2/plans/${plan}`, key, { headers: json, body: '{"name":""}' }), 400, '0040'],
    [
      'putPlan: a plan id that is not a UUID',
      (key) => send('PUT', '/v2/plans/gold', key, { headers: json, body: '{"name":"Gold"}' }),
      400,
      '0040',
    ],
    ['putPlan: a missing API key', () => send('PUT', `/v2/plans/${plan}`, '', { headers: json, body: '{"name":"Gold"}' }), 401, '0010'],
    ['getPlan: a named plan', (key) => get(`/v2/plans/${plan}`, key), 200, undefined],
    ['getPlan: a plan never named', (key) => get(`/v2/plans/${randomUUID()}`, key, 'code=404'), 404, '0028'],
    ['getPlan: a missing API key', () => get(`/v2/plans/${plan}`, ''), 401, '0010'],
    ['listPlans: a page', (key) => get('/v2/plans?limit=10', key), 200, undefined],
    ['listPlans: limit=0', (key) => get('/v2/plans?limit=0', key), 400, '0040'],
    ['listApiKeys: a page', (key) => get('/v2/api-keys?limit=10', key), 200, undefined],
    ['listApiKeys: limit=0', (key) => get('/v2/api-keys?limit=0', key), 400, '0040'],
    ['listApiKeys: a missing API key', () => get('/v2/api-keys', ''), 401, '0010'],
    ['createApiKey: a key', (key) => send('POST', '/v2/api-keys', key), 201, undefined],
    ['createApiKey: a missing API key', () => send('POST', '/v2/api-keys', ''), 401, '0010'],
    [
      'rollApiKey: with a 1-hour overlap',
      (key, ids) => send('POST', `/v2/api-keys/${ids.rolledKey}/roll`, key, { headers: json, body: JSON.stringify({ expiresInHours: 1 }) }),
      201,
      undefined,
    ],
    [
      'rollApiKey: expiresInHours over a week',
      (key, ids) =>
        send('POST', `/v2/api-keys/${ids.rolledKey}/roll`, key, { headers: json, body: JSON.stringify({ expiresInHours: 169 }) }),
      400,
      '0040',
    ],
    [
      'rollApiKey: an unknown key',
      (key) => send('POST', `/v2/api-keys/${randomUUID()}/roll`, key, { mockPrefers: 'code=404' }),
      404,
      '0025',
    ],
    ['rollApiKey: a missing API key', (_key, ids) => send('POST', `/v2/api-keys/${ids.rolledKey}/roll`, ''), 401, '0010'],
    ['revokeApiKey: a key', (key, ids) => send('DELETE', `/v2/api-keys/${ids.doomedKey}`, key), 204, undefined],
    [
      'revokeApiKey: the same key again',
      (key, ids) => send('DELETE', `/v2/api-keys/${ids.doomedKey}`, key, { mockPrefers: 'code=404' }),
      404,
      '0025',
    ],
    [
      'revokeApiKey: the last key',
      (_key, ids) => send('DELETE', `/v2/api-keys/${ids.lone.keyId}`, ids.lone.apiKey, { mockPrefers: 'code=409' }),
      409,
      '0031',
    ],
    ['revokeApiKey: a missing API key', (_key, ids) => send('DELETE', `/v2/api-keys/${ids.rolledKey}`, ''), 401, '0010'],
    [
      'createPortalLink: a link',
      (key, ids) => send('POST', `/v2/subscriptions/${ids.scheduled}/portal-links`, key, { headers: json, body: '{"actions":["pause"]}' }),
      201,
      undefined,
    ],
    [
      'createPortalLink: expiresInMinutes over a week',
      (key, ids) =>
        send('POST', `/v2/subscriptions/${ids.scheduled}/portal-links`, key, { headers: json, body: '{"expiresInMinutes":10081}' }),
      400,
      '0040',
    ],
    [
      'createPortalLink: a cancelled subscription',
      (key, ids) => send('POST', `/v2/subscriptions/${ids.cancelled}/portal-links`, key, { mockPrefers: 'code=409' }),
      409,
      '0030',
    ],
    [
      'createPortalLink: a missing API key',
      (_key, ids) => send('POST', `/v2/subscriptions/${ids.scheduled}/portal-links`, ''),
      401,
      '0010',
    ],
    ['listPortalLinks: a page', (key, ids) => get(`/v2/portal-links?subscriptionId=${ids.scheduled}`, key), 200, undefined],
    ['listPortalLinks: subscriptionId not a UUID', (key) => get('/v2/portal-links?subscriptionId=nope', key), 400, '0040'],
    ['revokePortalLink: a link', (key, ids) => send('DELETE', `/v2/portal-links/${ids.doomedPortalLink}`, key), 204, undefined],
    [
      'revokePortalLink: an unknown link',
      (key) => send('DELETE', `/v2/portal-links/${randomUUID()}`, key, { mockPrefers: 'code=404' }),
      404,
      '0027',
    ],
    ['revokePortalLink: a missing API key', (_key, ids) => send('DELETE', `/v2/portal-links/${ids.doomedPortalLink}`, ''), 401, '0010'],
  ];

  let ids: Ids;
  beforeAll(async () => {
    ids = await serviceIds();
  });

  it.each(table)('%s', async (_name, request, status, code) => {
    const { mock: fromMock, service: fromService } = await verdicts(
      request('sk_any-key-the-mock-accepts', anyIds()),
      request(merchant.apiKey, ids),
    );
    expect({ mock: fromMock, service: fromService }).toEqual({ mock: { status, code }, service: { status, code } });
  });

  it('each success above, sent to the service through prism proxy --errors, shows no contract violation', async () => {
    const fresh = await serviceIds();
    for (const [name, request, status] of table.filter(([, , status]) => status < 300)) {
      const { path, method, headers, body } = request(merchant.apiKey, fresh);
      const res = await fetch(`${referee.baseUrl}${path}`, { method, headers, body });
      expect({ name, status: res.status, violations: res.headers.get('sl-violations') }).toEqual({ name, status, violations: null });
    }
  });
});

describe('the mock answers only what it can know (docs/partners.md: where the mock differs)', () => {
  const mockCall = (path: string, headers: Record<string, string> = {}, body?: unknown) =>
    fetch(`${mock.baseUrl}${path}`, {
      method: body === undefined && !path.endsWith('pause') ? 'GET' : 'POST',
      headers: { 'x-api-key': 'sk_any', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it('sends no Idempotent-Replayed or X-Request-Id header, whose values only the service knows', async () => {
    const answers = [
      await mockCall(`/v2/subscriptions/${randomUUID()}/pause`),
      await mockCall('/v2/subscriptions/bulk/pause', { prefer: 'code=202' }, { subscriptions: [randomUUID()] }),
    ];
    expect(answers.map((r) => [r.status, r.headers.get('idempotent-replayed'), r.headers.get('x-request-id')])).toEqual([
      [200, null, null],
      [202, null, null],
    ]);
  });

  it('Prefer: dynamic=true gives lower-case uuids and timestamps that are real instants', async () => {
    for (let i = 0; i < 10; i++) {
      const body = (await (await mockCall(`/v2/subscriptions/${randomUUID()}`, { prefer: 'dynamic=true' })).json()) as Record<
        string,
        string
      >;
      for (const field of ['id', 'merchantId', 'planId']) expect(body[field]).toBe(body[field]!.toLowerCase());
      for (const field of ['createdAt', 'modifiedAt']) {
        expect(body[field]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
        expect(new Date(body[field]!).toISOString().slice(0, 19)).toBe(body[field]!.slice(0, 19));
      }
    }
  });

  it('Prefer: example=NAME picks a listed example, and docs/partners.md lists every name the spec has', async () => {
    const res = await mockCall(`/v2/subscriptions/${randomUUID()}/pause`, { prefer: 'code=409, example=cancelled' });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ code: '0030' });
    const readme = readFileSync('docs/partners.md', 'utf8');
    expect(readme).toContain(['```text', ...exampleList(), '```'].join('\n'));
  });
});

describe('the generated request collection (generated/requests.http)', () => {
  it('every request, sent as written with the mock environment, gets the operation’s success from the mock', async () => {
    // The mock environment as written, on the port this test's mock listens on (4010 with npm run mock).
    const env: Record<string, string> = {
      ...JSON.parse(readFileSync('generated/http-client.env.json', 'utf8')).mock,
      baseUrl: mock.baseUrl,
    };
    const fill = (text: string) => text.replace(/\{\{(\w+)\}\}/g, (_, name: string) => env[name]!);
    const blocks = readFileSync('generated/requests.http', 'utf8')
      .split(/^### .*$/m)
      .slice(1);
    const seen = [];
    for (const block of blocks) {
      const [head, ...rest] = block.trim().split('\n\n');
      const [requestLine, ...headerLines] = fill(head!).split('\n');
      const [method, url] = requestLine!.split(' ');
      const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]));
      const res = await fetch(url!, { method, headers, ...(rest.length > 0 ? { body: rest.join('\n\n') } : {}) });
      seen.push(`${method} ${new URL(url!).pathname} ${res.status}`);
      // A request for another media type (a CSV export) gets that type from the mock.
      if (headers.accept) expect(`${requestLine} ${res.headers.get('content-type')}`).toContain(headers.accept);
    }
    // Every operation, some more than once (with a filter, or another media type).
    const operations = new Set(seen.map((line) => line.split(' ').slice(0, 2).join(' ')));
    expect(operations.size).toBe(
      Object.values(parse(readFileSync(SPEC_PATH, 'utf8')).paths as Record<string, object>).flatMap(Object.keys).length,
    );
    for (const line of seen) expect(line).toMatch(/ 20[0-4]$/);
  });
});

describe('regeneration', () => {
  const listFiles = (dir: string) => readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();

  // That the committed generated/ and clients/ match the committed spec is `npm run check:generated`,
  // a step of the check that `npm test` runs first: the same command, run once.

  it('a broken $ref in a copy of the spec: generate prints one line per problem, no stack trace, and generates nothing', async () => {
    const work = mkdtempSync(join(tmpdir(), 'subsvc-regen-'));
    try {
      const spec = readFileSync(SPEC_PATH, 'utf8').replace(
        "$ref: '#/components/schemas/BulkCommandRequest'",
        "$ref: '#/components/schemas/NoSuchSchema'",
      );
      writeFileSync(join(work, 'openapi.yaml'), spec);
      const failure = await run(process.execPath, [
        '--import',
        'tsx',
        'scripts/generate.ts',
        '--spec',
        join(work, 'openapi.yaml'),
        '--out',
        join(work, 'out'),
      ]).then(
        () => undefined,
        (e: { code: number; stderr: string }) => e,
      );
      expect(failure?.code).toBe(1);
      const lines = failure!.stderr.trim().split('\n');
      expect(lines.filter((l) => l.includes(' error '))).toEqual([
        expect.stringMatching(/openapi\.yaml:\d+:\d+ error Can't resolve \$ref \(no-unresolved-refs\)$/),
      ]);
      expect(lines.at(-1)).toMatch(/does not lint: nothing generated$/);
      expect(failure!.stderr).not.toMatch(/^\s+at /m);
      expect(existsSync(join(work, 'out'))).toBe(false);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('a string without a bound in a copy of the spec: generate prints the OWASP rule broken, on one line, and generates nothing', async () => {
    const work = mkdtempSync(join(tmpdir(), 'subsvc-regen-'));
    try {
      const spec = readFileSync(SPEC_PATH, 'utf8').replace(
        /( {2}PauseReason:\n {6}type: string\n {6}minLength: 1\n) {6}maxLength: 500\n/,
        '$1',
      );
      expect(spec).not.toBe(readFileSync(SPEC_PATH, 'utf8'));
      writeFileSync(join(work, 'openapi.yaml'), spec);
      const failure = await run(process.execPath, [
        '--import',
        'tsx',
        'scripts/generate.ts',
        '--spec',
        join(work, 'openapi.yaml'),
        '--out',
        join(work, 'out'),
      ]).then(
        () => undefined,
        (e: { code: number; stderr: string }) => e,
      );
      expect(failure?.code).toBe(1);
      const errors = failure!.stderr.split('\n').filter((l) => l.includes(' error '));
      expect(errors).toEqual([
        expect.stringMatching(
          /openapi\.yaml:\d+:\d+ error Schema of type string must specify maxLength, enum, or const\. \(owasp:api4:2023-string-limit\)$/,
        ),
      ]);
      expect(existsSync(join(work, 'out'))).toBe(false);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('a changed description in a copy of the spec changes the generated types and client', { timeout: 120_000 }, async () => {
    const work = mkdtempSync(join(tmpdir(), 'subsvc-regen-'));
    try {
      const spec = readFileSync(SPEC_PATH, 'utf8').replace(
        'summary: Pause a subscription, or many at once',
        'summary: Pause it, changed by a test',
      );
      writeFileSync(join(work, 'openapi.yaml'), spec);
      await run(process.execPath, [
        '--import',
        'tsx',
        'scripts/generate.ts',
        '--spec',
        join(work, 'openapi.yaml'),
        '--out',
        join(work, 'out'),
      ]);
      const changedTypes = readFileSync(join(work, 'out', 'generated', 'openapi.d.ts'), 'utf8');
      const client = join('clients', 'typescript', 'src', 'apis', 'SubscriptionsApi.ts');
      const changedClient = readFileSync(join(work, 'out', client), 'utf8');
      expect(changedTypes).toContain('Pause it, changed by a test');
      expect(changedClient).toContain('Pause it, changed by a test');
      expect(readFileSync(client, 'utf8')).not.toContain('Pause it, changed by a test');
      expect(listFiles(join(work, 'out', 'generated'))).toEqual(listFiles('generated'));
      expect(listFiles(join(work, 'out', 'clients', 'typescript'))).toEqual(listFiles(join('clients', 'typescript')));
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
