/**
 * Plan names (docs/api.md "Plans") through HTTP on the real database: PUT names or renames a plan
 * id, GET reads one, GET /v2/plans lists them a page at a time; each merchant and each mode sees
 * only its own; the customers' page shows the name, and the id while there is none. Each test has
 * its own merchant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 0 });
});
afterAll(async () => {
  await t?.close();
});

const { api } = httpOf(() => t);
const name = (apiKey: string, planId: string, planName: string) => api(apiKey, 'PUT', `/v2/plans/${planId}`, { name: planName });

describe('PUT and GET /v2/plans/{planId}', () => {
  it('names a plan, renames it, and GET shows the last name', async () => {
    const { apiKey } = await t.merchant();
    const planId = randomUUID();
    expect(await name(apiKey, planId, 'Coffee beans, monthly')).toMatchObject({
      status: 200,
      body: { planId, name: 'Coffee beans, monthly', livemode: true },
    });
    expect((await name(apiKey, planId, 'Coffee beans, every 4 weeks')).body).toEqual({
      planId,
      name: 'Coffee beans, every 4 weeks',
      livemode: true,
    });
    expect(await api(apiKey, 'GET', `/v2/plans/${planId}`)).toMatchObject({
      status: 200,
      body: { planId, name: 'Coffee beans, every 4 weeks', livemode: true },
    });
  });

  it('a plan id in capitals is the same plan, shown in lower case', async () => {
    const { apiKey } = await t.merchant();
    const planId = randomUUID();
    expect((await name(apiKey, planId.toUpperCase(), 'Tea')).body.planId).toBe(planId);
    expect((await api(apiKey, 'GET', `/v2/plans/${planId.toUpperCase()}`)).body).toEqual({ planId, name: 'Tea', livemode: true });
  });

  it('naming a new plan ten times at once answers 200 each time and keeps one of the names', async () => {
    const { apiKey } = await t.merchant();
    const planId = randomUUID();
    const names = Array.from({ length: 10 }, (_, i) => `Name ${i}`);
    const answers = await Promise.all(names.map((planName) => name(apiKey, planId, planName)));
    expect(answers.map((a) => a.status)).toEqual(names.map(() => 200));
    expect(names).toContain((await api(apiKey, 'GET', `/v2/plans/${planId}`)).body.name);
    expect((await api(apiKey, 'GET', '/v2/plans')).body.data).toHaveLength(1);
  });

  it('a plan never named answers 404 0028', async () => {
    const { apiKey } = await t.merchant();
    const planId = randomUUID();
    expect(await api(apiKey, 'GET', `/v2/plans/${planId}`)).toMatchObject({
      status: 404,
      body: { code: '0028', title: 'Plan not found', detail: `Plan ${planId} not found` },
    });
  });

  it.each([
    ['an empty name', { name: '' }],
    ['a name over 100 characters', { name: 'n'.repeat(101) }],
    ['no name', {}],
    ['an unknown property', { name: 'Tea', price: 3 }],
  ])('%s answers 400 0040 and names nothing', async (_what, body) => {
    const { apiKey } = await t.merchant();
    const planId = randomUUID();
    expect(await api(apiKey, 'PUT', `/v2/plans/${planId}`, body)).toMatchObject({ status: 400, body: { code: '0040' } });
    expect((await api(apiKey, 'GET', `/v2/plans/${planId}`)).status).toBe(404);
  });

  it('a plan id that is not a UUID answers 400 0040', async () => {
    const { apiKey } = await t.merchant();
    expect(await name(apiKey, 'gold', 'Gold')).toMatchObject({ status: 400, body: { code: '0040' } });
    expect(await api(apiKey, 'GET', '/v2/plans/gold')).toMatchObject({ status: 400, body: { code: '0040' } });
  });

  it('a name of 100 characters is kept whole', async () => {
    const { apiKey } = await t.merchant();
    const planId = randomUUID();
    const long = 'é'.repeat(100);
    expect((await name(apiKey, planId, long)).status).toBe(200);
    expect((await api(apiKey, 'GET', `/v2/plans/${planId}`)).body.name).toBe(long);
  });
});

describe('GET /v2/plans', () => {
  it('lists the named plans in plan id order, a page at a time', async () => {
    const { apiKey } = await t.merchant();
    const ids = [randomUUID(), randomUUID(), randomUUID()].sort();
    for (const [i, planId] of ids.entries()) expect((await name(apiKey, planId, `Plan ${i}`)).status).toBe(200);

    const first = await api(apiKey, 'GET', '/v2/plans?limit=2');
    expect(first).toMatchObject({ status: 200, body: { hasMore: true, nextCursor: ids[1] } });
    expect(first.body.data).toEqual([
      { planId: ids[0], name: 'Plan 0', livemode: true },
      { planId: ids[1], name: 'Plan 1', livemode: true },
    ]);
    const second = await api(apiKey, 'GET', `/v2/plans?limit=2&startingAfter=${ids[1]}`);
    expect(second.body).toEqual({ data: [{ planId: ids[2], name: 'Plan 2', livemode: true }], hasMore: false, nextCursor: null });
  });

  it('a merchant that named none gets an empty page; limit=0 answers 400 0040', async () => {
    const { apiKey } = await t.merchant();
    expect((await api(apiKey, 'GET', '/v2/plans')).body).toEqual({ data: [], hasMore: false, nextCursor: null });
    expect(await api(apiKey, 'GET', '/v2/plans?limit=0')).toMatchObject({ status: 400, body: { code: '0040' } });
  });
});

describe('plans are per merchant and per mode', () => {
  it("another merchant neither sees nor renames a merchant's plan", async () => {
    const owner = await t.merchant();
    const other = await t.merchant();
    const planId = randomUUID();
    await name(owner.apiKey, planId, 'Wine club');

    expect(await api(other.apiKey, 'GET', `/v2/plans/${planId}`)).toMatchObject({ status: 404, body: { code: '0028' } });
    expect((await api(other.apiKey, 'GET', '/v2/plans')).body.data).toEqual([]);
    expect((await name(other.apiKey, planId, 'Their name')).status).toBe(200);
    expect((await api(owner.apiKey, 'GET', `/v2/plans/${planId}`)).body.name).toBe('Wine club');
  });

  it('a test key names plans of the test mode only, shown with livemode false', async () => {
    const { apiKey, testApiKey } = await t.merchant();
    const planId = randomUUID();
    await name(apiKey, planId, 'Live name');

    expect(await api(testApiKey, 'GET', `/v2/plans/${planId}`)).toMatchObject({ status: 404, body: { code: '0028' } });
    expect((await api(testApiKey, 'GET', '/v2/plans')).body.data).toEqual([]);
    expect((await name(testApiKey, planId, 'Test name')).body).toEqual({ planId, name: 'Test name', livemode: false });
    expect((await api(testApiKey, 'GET', '/v2/plans')).body.data).toEqual([{ planId, name: 'Test name', livemode: false }]);
    expect((await api(apiKey, 'GET', '/v2/plans')).body.data).toEqual([{ planId, name: 'Live name', livemode: true }]);
  });
});

describe("the customers' page", () => {
  it('shows the plan id until the plan is named, then its name, escaped', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [subscriptionId] = await t.seed(merchantId, 1);
    const { planId } = (await api(apiKey, 'GET', `/v2/subscriptions/${subscriptionId}`)).body;
    const link = await api(apiKey, 'POST', `/v2/subscriptions/${subscriptionId}/portal-links`);
    expect(link.status).toBe(201);
    const page = async () => (await fetch(link.body.url)).text();

    expect(await page()).toContain(`<dt>Plan</dt><dd>${planId}</dd>`);
    await name(apiKey, planId, 'Beans & <b>more</b>');
    expect(await page()).toContain('<dt>Plan</dt><dd>Beans &amp; &lt;b&gt;more&lt;/b&gt;</dd>');
  });
});
