/**
 * API keys that rotate (docs/api.md "API keys"), through HTTP against the real service and
 * database: several keys, a roll with an overlap then expiry, revocation, the last key kept,
 * another merchant's key id, and no key or hash in any answer, log line or
 * event.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/auth.service.js';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let t: TestService;
/** Two processes' worth of services on one database: `other` remembers keys for 60 s. */
let other: TestService;
beforeAll(async () => {
  t = await startTestService({ authCacheTtlMs: 0 });
  other = await startTestService({ databaseName: t.db.databaseName, authCacheTtlMs: 60_000 });
});
afterAll(async () => {
  await other?.close();
  await t?.close();
});

const get = (base: string, path: string, apiKey: string) => call(base, path, { method: 'GET', apiKey });
const ping = async (apiKey: string, base = t.baseUrl) => (await get(base, '/v2/subscriptions?limit=1', apiKey)).status;

describe('several keys, each shown once', () => {
  it('a new key works beside the first; the list shows both by id and prefix, never a key or hash', async () => {
    const m = await t.merchant();
    const created = await call(t.baseUrl, '/v2/api-keys', { apiKey: m.apiKey });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      key: expect.stringMatching(/^sk_live_/),
      prefix: created.body.key.slice(0, 16),
      createdAt: expect.any(String),
      expiresAt: null,
      livemode: true,
    });
    expect(await ping(created.body.key)).toBe(200);
    const listed = await get(t.baseUrl, '/v2/api-keys', created.body.key);
    expect(listed.body.data.map((k: { prefix: string }) => k.prefix)).toEqual([m.apiKey.slice(0, 16), created.body.prefix]);
    const text = JSON.stringify(listed.body);
    for (const secret of [m.apiKey, created.body.key, hashApiKey(m.apiKey), hashApiKey(created.body.key)])
      expect(text).not.toContain(secret);
  });

  it('last-used is recorded after the answer, at most once a minute per key', async () => {
    const m = await t.merchant();
    for (let i = 0; i < 5; i++) expect(await ping(m.apiKey)).toBe(200);
    const listed = await waitFor(
      () => get(t.baseUrl, '/v2/api-keys', m.apiKey),
      (r) => r.body.data[0].lastUsedAt !== null,
      10_000,
    );
    const first = listed.body.data[0].lastUsedAt;
    for (let i = 0; i < 5; i++) expect(await ping(m.apiKey)).toBe(200);
    await t.service.auth.flush();
    expect((await get(t.baseUrl, '/v2/api-keys', m.apiKey)).body.data[0].lastUsedAt).toBe(first);
  });
});

describe('roll', () => {
  it('with 1 hour both keys work and the old one shows when it expires; once that time has passed, the old key answers 401', async () => {
    const m = await t.merchant();
    const [old] = (await get(t.baseUrl, '/v2/api-keys', m.apiKey)).body.data;
    const rolled = await call(t.baseUrl, `/v2/api-keys/${old.id}/roll`, { apiKey: m.apiKey, json: { expiresInHours: 1 } });
    expect(rolled.status).toBe(201);
    expect([await ping(m.apiKey), await ping(rolled.body.key)]).toEqual([200, 200]);
    const listed = (await get(t.baseUrl, '/v2/api-keys', rolled.body.key)).body.data;
    const expiresAt = Date.parse(listed.find((k: { id: string }) => k.id === old.id).expiresAt);
    expect(expiresAt - Date.now()).toBeGreaterThan(59 * 60_000);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(60 * 60_000);
    // The hour has passed: written through the database, as time would.
    const stored = await t.db.collection('merchants').findOne({ _id: m.merchantId as never });
    const keys = stored!.keys.map((k: { id: string }) => (k.id === old.id ? { ...k, expiresAt: '2020-01-01T00:00:00.000000Z' } : k));
    await t.db.collection('merchants').updateOne({ _id: m.merchantId as never }, { $set: { keys } });
    const refused = await get(t.baseUrl, '/v2/subscriptions?limit=1', m.apiKey);
    expect([refused.status, refused.body.code]).toEqual([401, '0010']);
    expect(await ping(rolled.body.key)).toBe(200);
    expect((await get(t.baseUrl, '/v2/api-keys', rolled.body.key)).body.data.map((k: { id: string }) => k.id)).toEqual([rolled.body.id]);
  });

  it('with 0 hours (and without a body, 24) the old key stops now, in the process that remembered it too', async () => {
    const m = await t.merchant();
    expect(await ping(m.apiKey, other.baseUrl)).toBe(200);
    const [old] = (await get(t.baseUrl, '/v2/api-keys', m.apiKey)).body.data;
    const rolled = await call(other.baseUrl, `/v2/api-keys/${old.id}/roll`, { apiKey: m.apiKey, json: { expiresInHours: 0 } });
    expect(rolled.status).toBe(201);
    expect([await ping(m.apiKey), await ping(m.apiKey, other.baseUrl), await ping(rolled.body.key)]).toEqual([401, 401, 200]);
    const again = await call(t.baseUrl, `/v2/api-keys/${rolled.body.id}/roll`, { apiKey: rolled.body.key });
    const expiresAt = (await get(t.baseUrl, '/v2/api-keys', again.body.key)).body.data.find(
      (k: { id: string }) => k.id === rolled.body.id,
    ).expiresAt;
    expect(Math.round((Date.parse(expiresAt) - Date.now()) / 3_600_000)).toBe(24);
  });

  it('more than 168 hours is refused with 400 0040, and the key is unchanged', async () => {
    const m = await t.merchant();
    const [key] = (await get(t.baseUrl, '/v2/api-keys', m.apiKey)).body.data;
    const res = await call(t.baseUrl, `/v2/api-keys/${key.id}/roll`, { apiKey: m.apiKey, json: { expiresInHours: 169 } });
    expect([res.status, res.body.code]).toEqual([400, '0040']);
    expect((await get(t.baseUrl, '/v2/api-keys', m.apiKey)).body.data).toEqual([key]);
  });
});

describe('revoke', () => {
  it('a revoked key answers 401 at once here, and in a process that remembered it once AUTH_CACHE_TTL_MS has passed (a fresh one)', async () => {
    const m = await t.merchant();
    const second = (await call(t.baseUrl, '/v2/api-keys', { apiKey: m.apiKey })).body;
    expect(await ping(second.key, other.baseUrl)).toBe(200);
    const res = await call(t.baseUrl, `/v2/api-keys/${second.id}`, { method: 'DELETE', apiKey: m.apiKey });
    expect(res.status).toBe(204);
    expect(await ping(second.key)).toBe(401);
    // `other` remembers keys for 60 s (its AUTH_CACHE_TTL_MS): revocation reaches it within that time, not at once.
    expect(await ping(second.key, other.baseUrl)).toBe(200);
    const fresh = await startTestService({ databaseName: t.db.databaseName, authCacheTtlMs: 60_000 });
    try {
      expect(await ping(second.key, fresh.baseUrl)).toBe(401);
    } finally {
      await fresh.close();
    }
    expect(await ping(m.apiKey)).toBe(200);
  });

  it('the last key that does not expire is kept: 409 0031, and it still works', async () => {
    const m = await t.merchant();
    const [only] = (await get(t.baseUrl, '/v2/api-keys', m.apiKey)).body.data;
    const res = await call(t.baseUrl, `/v2/api-keys/${only.id}`, { method: 'DELETE', apiKey: m.apiKey });
    expect([res.status, res.body.code]).toEqual([409, '0031']);
    // A rolled key (expiring) does not count: revoking the new one would lock the merchant out tomorrow.
    const rolled = (await call(t.baseUrl, `/v2/api-keys/${only.id}/roll`, { apiKey: m.apiKey })).body;
    const refused = await call(t.baseUrl, `/v2/api-keys/${rolled.id}`, { method: 'DELETE', apiKey: m.apiKey });
    expect([refused.status, refused.body.code]).toEqual([409, '0031']);
    expect((await call(t.baseUrl, `/v2/api-keys/${only.id}`, { method: 'DELETE', apiKey: rolled.key })).status).toBe(204);
    expect([await ping(m.apiKey), await ping(rolled.key)]).toEqual([401, 200]);
  });

  it("another merchant's key id, an unknown one and a revoked one answer 404 0025, and change nothing", async () => {
    const a = await t.merchant();
    const b = await t.merchant();
    const spare = (await call(t.baseUrl, '/v2/api-keys', { apiKey: b.apiKey })).body;
    const [bKey] = (await get(t.baseUrl, '/v2/api-keys', b.apiKey)).body.data;
    await call(t.baseUrl, `/v2/api-keys/${spare.id}`, { method: 'DELETE', apiKey: b.apiKey });
    for (const id of [bKey.id, randomUUID(), spare.id]) {
      for (const [path, method] of [
        [`/v2/api-keys/${id}`, 'DELETE'],
        [`/v2/api-keys/${id}/roll`, 'POST'],
      ] as const) {
        const res = await call(t.baseUrl, path, { method, apiKey: a.apiKey });
        expect([res.status, res.body.code, res.body.detail]).toEqual([404, '0025', `API key ${id} not found`]);
      }
    }
    expect(await ping(b.apiKey)).toBe(200);
    // b's own requests move its key's lastUsedAt (recorded off the request path, at any moment): everything else is unchanged.
    const withoutUse = ({ lastUsedAt: _used, ...key }: Record<string, unknown>) => key;
    expect((await get(t.baseUrl, '/v2/api-keys', b.apiKey)).body.data.map(withoutUse)).toEqual([withoutUse(bKey)]);
  });
});

describe('secrets stay secret', () => {
  it('no key or hash in any log line or event (of a pause made with a new key), and the stored document holds hashes only', async () => {
    const m = await t.merchant();
    const made = (await call(t.baseUrl, '/v2/api-keys', { apiKey: m.apiKey })).body;
    const [id] = await t.seed(m.merchantId, 1);
    expect((await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey: made.key })).status).toBe(200);
    // The relay records the pause's event right after the answer.
    const recorded = await waitFor(
      () => t.db.collection('events').find({ merchantId: m.merchantId }).toArray(),
      (events) => events.length > 0,
      20_000,
    );
    const rolled = (await call(t.baseUrl, `/v2/api-keys/${made.id}/roll`, { apiKey: m.apiKey, json: { expiresInHours: 0 } })).body;
    await call(t.baseUrl, `/v2/api-keys/${rolled.id}`, { method: 'DELETE', apiKey: m.apiKey });
    await t.service.auth.flush();
    const secrets = [m.apiKey, made.key, rolled.key];
    const logs = JSON.stringify(t.logLines);
    expect(logs).toContain('/v2/api-keys');
    for (const secret of [...secrets, ...secrets.map(hashApiKey)]) expect(logs).not.toContain(secret);
    const stored = JSON.stringify(await t.db.collection('merchants').findOne({ _id: m.merchantId as never }));
    for (const secret of secrets) expect(stored).not.toContain(secret);
    const events = JSON.stringify(recorded);
    expect(events).toContain('subscription.paused');
    for (const secret of [...secrets, ...secrets.map(hashApiKey)]) expect(events).not.toContain(secret);
  });
});
