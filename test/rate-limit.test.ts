import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './support/http.js';
import { startTestService, type TestService } from './support/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ rateLimitBurst: 3, rateLimitPerSecond: 1 });
});
afterAll(() => t.close());

describe('the per-merchant rate limit (token bucket: 3 at once, 1 per second)', () => {
  it('counts down in RateLimit, then answers 429 0060 with Retry-After, changing nothing; another merchant is unaffected', async () => {
    const a = await t.merchant();
    const b = await t.merchant();
    const [id] = await t.seed(a.merchantId, 1);
    const [other] = await t.seed(b.merchantId, 1);
    const remaining: (string | null)[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey: a.apiKey });
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toBe('"merchant";q=3;w=3');
      remaining.push(res.headers.get('ratelimit')?.match(/r=(\d+)/)?.[1] ?? null);
    }
    expect(remaining).toEqual(['2', '1', '0']);

    const before = await t.db.collection('subscriptions').findOne({ _id: id as never }, { projection: { outbox: 0 } });
    const limited = await call(t.baseUrl, `/v2/subscriptions/${id}/resume`, { apiKey: a.apiKey });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ code: '0060', title: 'Too many requests' });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('ratelimit')).toMatch(/^"merchant";r=0;t=\d+$/);
    expect(await t.db.collection('subscriptions').findOne({ _id: id as never }, { projection: { outbox: 0 } })).toEqual(before);

    expect((await call(t.baseUrl, `/v2/subscriptions/${other}/pause`, { apiKey: b.apiKey })).status).toBe(200);

    await new Promise((r) => setTimeout(r, retryAfter * 1000));
    expect((await call(t.baseUrl, `/v2/subscriptions/${id}/resume`, { apiKey: a.apiKey })).status).toBe(200);
  });

  it('requests without a valid key are answered 401 and do not spend anyone’s tokens', async () => {
    const a = await t.merchant();
    const [id] = await t.seed(a.merchantId, 1);
    for (let i = 0; i < 5; i++) expect((await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey: 'sk_wrong' })).status).toBe(401);
    const res = await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey: a.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit')).toMatch(/^"merchant";r=2;/);
  });
});

describe('the limit on failed authentication per client address (AUTH_FAILURE_LIMIT=3 a minute)', () => {
  let limited: TestService;
  beforeAll(async () => {
    limited = await startTestService({ authFailuresPerMinute: 3 });
  });
  afterAll(() => limited.close());

  it('after 3 failures the address gets 429 0060 with Retry-After instead of 401, before any key is looked up', async () => {
    const { merchantId, apiKey } = await limited.merchant();
    const [id] = await limited.seed(merchantId, 1);
    const statuses = [];
    for (const key of ['sk_wrong-1', undefined, 'sk_wrong-1']) {
      statuses.push((await call(limited.baseUrl, `/v2/subscriptions/${id}/pause`, key ? { apiKey: key } : {})).status);
    }
    expect(statuses).toEqual([401, 401, 401]);
    const before = await limited.db.collection('subscriptions').findOne({ _id: id as never }, { projection: { outbox: 0 } });
    for (const key of ['sk_wrong-2', apiKey]) {
      const res = await call(limited.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey: key });
      expect(res.status).toBe(429);
      expect(res.body).toMatchObject({ code: '0060', title: 'Too many requests' });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect(await limited.db.collection('subscriptions').findOne({ _id: id as never }, { projection: { outbox: 0 } })).toEqual(before);
  });
});
