/**
 * Webhook endpoints and pause policies changed by many requests at once in one process
 * (docs/design.md §8 "Conditional updates"), through HTTP, on the engine the tests run on (the
 * embedded FerretDB where no mongod can be had, which writes a whole document back after reading
 * it): no change answered 200 is lost, and none answers 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ rateLimitPerSecond: 0, webhooksAllowPrivateUrls: true });
});
afterAll(async () => {
  await t?.close();
});

const ROUNDS = 3;
const AT_ONCE = 20;

const { api } = httpOf(() => t);

describe('webhook endpoints and pause policies changed by many requests at once', () => {
  it(`${AT_ONCE} PATCHes at once of different fields of one endpoint, ${ROUNDS} rounds: every change answered 200 is kept`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const m = await t.merchant();
      const created = await api(m.apiKey, 'POST', '/v2/webhook-endpoints', { url: 'http://127.0.0.1:9/start', events: ['*'] });
      expect(created.status).toBe(201);
      const path = `/v2/webhook-endpoints/${created.body.id}`;
      const changes = [
        { url: 'http://127.0.0.1:9/changed' },
        { events: ['subscription.paused'] },
        ...Array.from({ length: AT_ONCE - 2 }, (_, i) =>
          i === AT_ONCE - 3 ? { description: 'last' } : { status: i % 2 === 0 ? 'disabled' : 'enabled' },
        ),
      ];
      const replies = await Promise.all(changes.map((change) => api(m.apiKey, 'PATCH', path, change)));

      expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
      const stored = (await api(m.apiKey, 'GET', path)).body;
      expect(stored, `round ${round}: a change answered 200 was lost`).toMatchObject({
        url: 'http://127.0.0.1:9/changed',
        events: ['subscription.paused'],
        description: 'last',
      });
    }
  });

  it(`${AT_ONCE} first PUTs of a pause policy at once, ${ROUNDS} rounds: each answers 200, and the policy read is one of them`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const m = await t.merchant();
      const policies = Array.from({ length: AT_ONCE }, (_, i) => ({ maxPauseDays: i + 1, maxPausesPerYear: null, requireResumeAt: false }));
      const replies = await Promise.all(policies.map((policy) => api(m.apiKey, 'PUT', '/v2/pause-policy', policy)));

      expect(
        replies.map((r) => r.status),
        JSON.stringify(replies.find((r) => r.status !== 200)?.body),
      ).toEqual(replies.map(() => 200));
      const read = (await api(m.apiKey, 'GET', '/v2/pause-policy')).body;
      expect(policies.map((p) => p.maxPauseDays)).toContain(read.maxPauseDays);
    }
  });
});
