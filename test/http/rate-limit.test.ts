import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

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

  it('after 3 failures the address gets 429 0060 with Retry-After instead of 401 for a wrong key, changing nothing', async () => {
    const { merchantId, apiKey } = await limited.merchant();
    const [id] = await limited.seed(merchantId, 1);
    const statuses = [];
    for (const key of ['sk_wrong-1', undefined, 'sk_wrong-1']) {
      statuses.push((await call(limited.baseUrl, `/v2/subscriptions/${id}/pause`, key ? { apiKey: key } : {})).status);
    }
    expect(statuses).toEqual([401, 401, 401]);
    const before = await limited.db.collection('subscriptions').findOne({ _id: id as never }, { projection: { outbox: 0 } });
    for (const key of ['sk_wrong-2', undefined]) {
      const res = await call(limited.baseUrl, `/v2/subscriptions/${id}/pause`, key ? { apiKey: key } : {});
      expect(res.status).toBe(429);
      expect(res.body).toMatchObject({ code: '0060', title: 'Too many requests' });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect(await limited.db.collection('subscriptions').findOne({ _id: id as never }, { projection: { outbox: 0 } })).toEqual(before);
    expect((await call(limited.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey })).status).toBe(200);
  });

  it('while one client behind the address guesses keys, a valid key of another merchant is answered every time, under its own rate limit only', async () => {
    const other = await limited.merchant();
    const [id] = await limited.seed(other.merchantId, 1);
    for (let i = 0; i < 80; i++) await call(limited.baseUrl, `/v2/subscriptions/${id}`, { method: 'GET', apiKey: `sk_guess-${i}` });
    const guesses: number[] = [];
    const valid: number[] = [];
    for (let probe = 0; probe < 20; probe++) {
      guesses.push((await call(limited.baseUrl, `/v2/subscriptions/${id}`, { method: 'GET', apiKey: `sk_guess-again-${probe}` })).status);
      const res = await call(limited.baseUrl, `/v2/subscriptions/${id}`, { method: 'GET', apiKey: other.apiKey });
      valid.push(res.status);
      expect(res.headers.get('ratelimit')).toMatch(/^"merchant";/);
    }
    expect(valid).toEqual(Array(20).fill(200));
    // The guessing is still slowed: every wrong key past the limit is refused with 429, not looked at as a 401.
    expect(guesses).toEqual(Array(20).fill(429));
  });

  it('without TRUSTED_PROXIES, X-Forwarded-For is not believed: a client cannot get a fresh allowance by naming another address', async () => {
    const { merchantId } = await limited.merchant();
    const [id] = await limited.seed(merchantId, 1);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await call(limited.baseUrl, `/v2/subscriptions/${id}`, {
        method: 'GET',
        apiKey: 'sk_wrong',
        headers: { 'x-forwarded-for': `203.0.113.${i + 1}` },
      });
      statuses.push(res.status);
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(3);
  });
});

describe('behind a trusted proxy (TRUSTED_PROXIES=127.0.0.0/8), failed authentications count per client address from X-Forwarded-For', () => {
  let proxied: TestService;
  beforeAll(async () => {
    proxied = await startTestService({ authFailuresPerMinute: 3, trustedProxies: ['127.0.0.0/8'] });
  });
  afterAll(() => proxied.close());

  const attempt = (forwardedFor: string) =>
    call(proxied.baseUrl, '/v2/subscriptions/00000000-0000-4000-8000-000000000000', {
      method: 'GET',
      apiKey: 'sk_wrong',
      headers: { 'x-forwarded-for': forwardedFor },
    });

  it('one client past its limit gets 429; another client behind the same proxy still gets 401; naming a spoofed address first changes nothing', async () => {
    const first = [];
    for (let i = 0; i < 4; i++) first.push((await attempt('203.0.113.7')).status);
    expect(first).toEqual([401, 401, 401, 429]);
    // The proxy appends the address it saw: what a client wrote before it is not believed.
    expect((await attempt('198.51.100.99, 203.0.113.7')).status).toBe(429);
    expect((await attempt('203.0.113.8')).status).toBe(401);
    // Proxies in the chain that are trusted are skipped: the client is the last address not trusted.
    expect((await attempt('203.0.113.7, 127.0.0.2')).status).toBe(429);
  });
});
