/**
 * A test clock advanced by many requests at once in one process (docs/partners.md "Test clocks",
 * docs/design.md §8 "Conditional updates"), through HTTP, on the engine the tests run on (the
 * embedded FerretDB where no mongod can be had, whose conditional update is not atomic on its
 * own): the clock never stands behind an advance answered 200, an overtaken advance answers 409
 * 0036, and nothing an advance applies is stamped after the clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ rateLimitPerSecond: 0 });
});
afterAll(async () => {
  await t?.close();
});

const ROUNDS = 3;
const DAY = 24 * 60 * 60 * 1000;

const { api } = httpOf(() => t);
const iso = (ms: number) => new Date(ms).toISOString();

describe('the test clock advanced by many requests at once', () => {
  const CLOCKS_AT_ONCE = 10;

  it(`${CLOCKS_AT_ONCE} advances at once, ${ROUNDS} rounds: each answers 200 or 409 0036; the clock stands at the latest 200, and no change it applied is stamped after it`, async () => {
    const m = await t.merchant();
    // Schedules spread over every round's advances, so that each advance has some to apply.
    const fixtures = await api(m.testApiKey, 'POST', '/v2/test-helpers/subscriptions', { count: 40 });
    expect(fixtures.status).toBe(201);
    const start = Date.parse((await api(m.testApiKey, 'GET', '/v2/test-helpers/clock')).body.now);
    const ids: string[] = fixtures.body.data.map((s: { id: string }) => s.id);
    for (const [i, id] of ids.entries()) {
      const pauseAt = iso(start + ((1 + i) * DAY) / 2 + 1000);
      const res = await api(m.testApiKey, 'POST', `/v2/subscriptions/${id}/pause`, {
        pauseAt,
        resumeAt: iso(Date.parse(pauseAt) + DAY / 4),
      });
      expect(res.status).toBe(200);
    }

    for (let round = 0; round < ROUNDS; round++) {
      const from = Date.parse((await api(m.testApiKey, 'GET', '/v2/test-helpers/clock')).body.now);
      const targets = Array.from({ length: CLOCKS_AT_ONCE }, (_, i) => iso(from + ((i + 1) * DAY) / 2));
      const replies = await Promise.all(targets.map((to) => api(m.testApiKey, 'POST', '/v2/test-helpers/clock/advance', { to })));

      for (const reply of replies) {
        if (reply.status !== 200) expect([reply.status, reply.body.code], JSON.stringify(reply.body)).toEqual([409, '0036']);
      }
      const answered = replies.filter((r) => r.status === 200).map((r) => r.body.now as string);
      expect(answered.length).toBeGreaterThan(0);
      const applied = replies.reduce((sum, r) => sum + (r.status === 200 ? (r.body.appliedCount as number) : 0), 0);
      console.log(
        `round ${round}: ${answered.length} of ${CLOCKS_AT_ONCE} advances answered 200, the others 409; ${applied} scheduled changes applied`,
      );
      const clock = (await api(m.testApiKey, 'GET', '/v2/test-helpers/clock')).body.now as string;
      expect(clock, `round ${round}: the clock stands behind an advance answered 200`).toBe([...answered].sort().at(-1));
      const subscriptions = await Promise.all(ids.map((id) => api(m.testApiKey, 'GET', `/v2/subscriptions/${id}`)));
      const after = subscriptions.map((s) => s.body.modifiedAt as string).filter((at) => at > clock);
      expect(after, `round ${round}: changes stamped after the clock (${clock})`).toEqual([]);
    }
  });
});
