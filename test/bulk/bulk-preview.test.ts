/**
 * The bulk operations' previews (`/bulk/pause/preview`, `/bulk/resume/preview`): the dry run as
 * operations of their own (docs/design.md §6a), on the real database and on the Prism mock, whose
 * bulk operations answer the 202 a bulk request gets without being asked for it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { startPrism, type RunningPrism } from '../support/prism.js';
import { startTestService, type TestService } from '../support/service.js';

let t: TestService;
let mock: RunningPrism;
beforeAll(async () => {
  [t, mock] = await Promise.all([startTestService({ rateLimitPerSecond: 0 }), startPrism()]);
});
afterAll(async () => {
  await Promise.all([mock?.stop(), t?.close()]);
});

const send = (baseUrl: string, path: string, apiKey: string, json: object) =>
  call(baseUrl, `/v2/subscriptions/bulk/${path}`, { apiKey, json });
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

describe('a preview on the service', () => {
  it('answers what the deprecated dryRun answers, for ids and for a filter, and queues and changes nothing', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [active, paused, cancelled] = [
      await t.seed(merchantId, 3),
      await t.seed(merchantId, 2, 'paused'),
      await t.seed(merchantId, 1, 'cancelled'),
    ];
    const before = await t.db.collection('subscriptions').find({ merchantId }).sort({ _id: 1 }).toArray();
    const cases: [string, object][] = [
      ['pause', { subscriptions: [...active, ...cancelled, randomUUID()] }],
      ['pause', { filter: { status: ['fulfilled', 'cancelled'] } }],
      ['resume', { filter: { status: ['paused'] } }],
      ['resume', { subscriptions: [...paused, active[0]!] }],
    ];
    for (const [operation, body] of cases) {
      const preview = await send(t.baseUrl, `${operation}/preview`, apiKey, body);
      const dryRun = await send(t.baseUrl, operation, apiKey, { ...body, dryRun: true });
      expect({ operation, body, status: preview.status, answer: preview.body }).toEqual({
        operation,
        body,
        status: 200,
        answer: dryRun.body,
      });
    }
    expect((await send(t.baseUrl, 'pause/preview', apiKey, { filter: {} })).body).toMatchObject({
      matchedCount: 6,
      cancelledCount: 1,
      sample: [...active, ...paused].sort(),
    });
    expect((await call(t.baseUrl, '/v2/bulk-requests', { apiKey, method: 'GET' })).body.data).toEqual([]);
    expect(await t.db.collection('subscriptions').find({ merchantId }).sort({ _id: 1 }).toArray()).toEqual(before);
  });

  it('a pause preview counts what the pause policy would reject for the schedule it is sent with', async () => {
    const { merchantId, apiKey } = await t.merchant();
    await call(t.baseUrl, '/v2/pause-policy', {
      apiKey,
      method: 'PUT',
      json: { maxPauseDays: 10, maxPausesPerYear: null, requireResumeAt: false },
    });
    const ids = await t.seed(merchantId, 2);
    const tooLong = await send(t.baseUrl, 'pause/preview', apiKey, { subscriptions: ids, resumeAt: inDays(30) });
    const withinPolicy = await send(t.baseUrl, 'pause/preview', apiKey, { subscriptions: ids, resumeAt: inDays(5), reason: 'Holidays' });
    expect([tooLong.body.policyRejectedCount, tooLong.body.sample]).toEqual([2, []]);
    expect([withinPolicy.body.policyRejectedCount, [...withinPolicy.body.sample].sort()]).toEqual([0, [...ids].sort()]);
  });

  it('refuses dryRun in its body, both ids and a filter, and a schedule in the past, with the codes of the bulk operation', async () => {
    const { apiKey } = await t.merchant();
    const cases: [string, object, number, string][] = [
      ['pause/preview', { filter: {}, dryRun: true }, 400, '0040'],
      ['resume/preview', { subscriptions: [randomUUID()], dryRun: false }, 400, '0040'],
      ['resume/preview', { subscriptions: [randomUUID()], filter: {} }, 400, '0040'],
      ['resume/preview', { filter: {}, resumeAt: inDays(5) }, 400, '0040'],
      ['pause/preview', { filter: {}, resumeAt: '2020-01-01T00:00:00Z' }, 400, '0043'],
    ];
    for (const [path, body, status, code] of cases) {
      const res = await send(t.baseUrl, path, apiKey, body);
      expect({ path, body, status: res.status, code: res.body.code }).toEqual({ path, body, status, code });
    }
  });
});

describe('the mock', () => {
  it('answers a bulk request without Prefer with the 202 a bulk request gets, and a preview with the dry run', async () => {
    const subscriptions = [randomUUID(), randomUUID()];
    for (const operation of ['pause', 'resume']) {
      const accepted = await send(mock.baseUrl, operation, 'sk_any', { subscriptions });
      expect({ operation, status: accepted.status }).toEqual({ operation, status: 202 });
      expect(accepted.body).toMatchObject({
        requestId: expect.any(String),
        operation: expect.stringMatching(/^(PAUSE|RESUME)$/),
        acceptedCount: expect.any(Number),
      });
      expect(accepted.headers.get('location')).toMatch(/^\/v2\/bulk-requests\//);
      const preview = await send(mock.baseUrl, `${operation}/preview`, 'sk_any', { subscriptions });
      expect({ operation, status: preview.status }).toEqual({ operation, status: 200 });
      expect(preview.body).toMatchObject({ matchedCount: expect.any(Number), sample: expect.any(Array) });
    }
  });
});
