/**
 * A merchant's API keys changed by many requests at once in one process (docs/design.md §3 and §8
 * "Conditional updates"), through HTTP, on the engine the tests run on (the embedded FerretDB
 * where no mongod can be had, whose conditional update is not atomic on its own): every 201 key
 * works, every 204 key stops at once here and is not listed, and no change is lost.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { hashApiKey } from '../../src/auth/auth.service.js';
import { call, httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { startWireProxy } from '../support/wire-proxy.js';

let t: TestService;
beforeAll(async () => {
  // Keys are remembered (the default 30 s), so "stops at once" is the cache's forgetting; no rate limits, which would answer 429 to the bursts.
  t = await startTestService({ rateLimitPerSecond: 0, authFailuresPerMinute: 0 });
});
afterAll(async () => {
  await t?.close();
});

const ROUNDS = 3;
const AT_ONCE = 20;

const { api } = httpOf(() => t);
const ping = async (apiKey: string) => (await api(apiKey, 'GET', '/v2/subscriptions?limit=1')).status;
const pingAll = (keys: readonly string[]) => Promise.all(keys.map(ping));

interface ListedKey {
  readonly id: string;
  readonly expiresAt: string | null;
}

async function listedKeys(apiKey: string): Promise<ListedKey[]> {
  const res = await api(apiKey, 'GET', '/v2/api-keys?limit=100');
  expect(res.status).toBe(200);
  return res.body.data;
}

async function createKeys(apiKey: string, count: number): Promise<{ id: string; key: string }[]> {
  const made: { id: string; key: string }[] = [];
  for (let i = 0; i < count; i++) {
    const res = await api(apiKey, 'POST', '/v2/api-keys');
    expect(res.status).toBe(201);
    made.push({ id: res.body.id, key: res.body.key });
  }
  return made;
}

/** The keys of the 201 answers among `replies`. */
function createdOf(replies: readonly { status: number; body: { id: string; key: string } }[]): { id: string; key: string }[] {
  return replies.filter((r) => r.status === 201).map((r) => ({ id: r.body.id, key: r.body.key }));
}

describe('API keys changed by many requests at once', () => {
  it(`${AT_ONCE} creates at once for one merchant, ${ROUNDS} rounds: every 201 key authenticates and is listed`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const m = await t.merchant();
      const replies = await Promise.all(Array.from({ length: AT_ONCE }, () => api(m.apiKey, 'POST', '/v2/api-keys')));

      expect(replies.map((r) => r.status)).toEqual(replies.map(() => 201));
      const created = createdOf(replies);
      expect(await pingAll(created.map((k) => k.key)), `round ${round}: keys answered 201 that do not authenticate`).toEqual(
        created.map(() => 200),
      );
      const listed = new Set((await listedKeys(m.apiKey)).map((k) => k.id));
      expect(created.filter((k) => !listed.has(k.id))).toEqual([]);
    }
  });

  it(`revokes racing creates (and first uses of the revoked keys), ${ROUNDS} rounds: every 204 key answers 401 here at once and is not listed; every 201 key works`, async () => {
    const HALF = AT_ONCE / 2;
    for (let round = 0; round < ROUNDS; round++) {
      const m = await t.merchant();
      const first = (await listedKeys(m.apiKey))[0]!.id;
      const doomed = await createKeys(m.apiKey, HALF);
      const [revokes, creates] = await Promise.all([
        Promise.all(doomed.map((k) => api(m.apiKey, 'DELETE', `/v2/api-keys/${k.id}`))),
        Promise.all(Array.from({ length: HALF }, () => api(m.apiKey, 'POST', '/v2/api-keys'))),
        // Looked up while being revoked: what a lookup finds must not outlive the revocation.
        pingAll(doomed.map((k) => k.key)),
      ]);

      expect(revokes.map((r) => r.status)).toEqual(revokes.map(() => 204));
      expect(creates.map((r) => r.status)).toEqual(creates.map(() => 201));
      expect(await pingAll(doomed.map((k) => k.key)), `round ${round}: keys answered 204 that still authenticate`).toEqual(
        doomed.map(() => 401),
      );
      const created = createdOf(creates);
      expect(await pingAll(created.map((k) => k.key)), `round ${round}: keys answered 201 that do not authenticate`).toEqual(
        created.map(() => 200),
      );
      const listed = (await listedKeys(m.apiKey)).map((k) => k.id).sort();
      expect(listed).toEqual([first, ...created.map((k) => k.id)].sort());
    }
  });

  it(`rolls racing creates, ${ROUNDS} rounds: nothing is lost (new keys work, rolled keys work until they expire and show when)`, async () => {
    const HALF = AT_ONCE / 2;
    for (let round = 0; round < ROUNDS; round++) {
      const m = await t.merchant();
      const first = (await listedKeys(m.apiKey))[0]!.id;
      const rolledFrom = await createKeys(m.apiKey, HALF);
      const [rolls, creates] = await Promise.all([
        Promise.all(rolledFrom.map((k) => api(m.apiKey, 'POST', `/v2/api-keys/${k.id}/roll`, { expiresInHours: 1 }))),
        Promise.all(Array.from({ length: HALF }, () => api(m.apiKey, 'POST', '/v2/api-keys'))),
      ]);

      expect([...rolls, ...creates].map((r) => r.status)).toEqual([...rolls, ...creates].map(() => 201));
      const made = [...createdOf(rolls), ...createdOf(creates)];
      expect(await pingAll([...made, ...rolledFrom].map((k) => k.key)), `round ${round}: keys lost`).toEqual(
        [...made, ...rolledFrom].map(() => 200),
      );
      const listed = await listedKeys(m.apiKey);
      expect(listed.map((k) => k.id).sort()).toEqual([first, ...[...made, ...rolledFrom].map((k) => k.id)].sort());
      expect(listed.filter((k) => rolledFrom.some((r) => r.id === k.id) && k.expiresAt === null).map((k) => k.id)).toEqual([]);
    }
  });
});

describe('a key looked up while it is revoked', () => {
  it('a lookup that read the key before its revocation and answers after the 204 does not keep it working here', async () => {
    const proxy = await startWireProxy(inject('mongoUri'));
    const slow = await startTestService({ serverUri: proxy.uri('unused'), rateLimitPerSecond: 0, authFailuresPerMinute: 0 });
    try {
      const m = await slow.merchant();
      const created = await call(slow.baseUrl, '/v2/api-keys', { apiKey: m.apiKey });
      expect(created.status).toBe(201);
      // The first lookup of the key reads it (active), and its answer is held until the revocation has answered.
      const held = proxy.on(
        { command: 'find', collection: 'merchants', match: (c) => JSON.stringify(c.body).includes(hashApiKey(created.body.key)) },
        { action: 'hold', at: 'reply', times: 1 },
      );
      const firstUse = call(slow.baseUrl, '/v2/subscriptions?limit=1', { method: 'GET', apiKey: created.body.key });
      await held.reached;

      const revoked = await call(slow.baseUrl, `/v2/api-keys/${created.body.id}`, { method: 'DELETE', apiKey: m.apiKey });
      proxy.release();

      expect(revoked.status).toBe(204);
      // It began before the revocation: either answer is right for it.
      expect([200, 401]).toContain((await firstUse).status);
      expect((await call(slow.baseUrl, '/v2/subscriptions?limit=1', { method: 'GET', apiKey: created.body.key })).status).toBe(401);
    } finally {
      await slow.close();
      await proxy.close();
    }
  });
});
