/** Reading a subscription and listing them: the caller's own only, in id order, a page at a time. */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.close());

const get = (apiKey: string, path: string) => call(t.baseUrl, path, { method: 'GET', apiKey });

/** Every page of the list, following nextCursor. */
async function walk(apiKey: string, query: string): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await get(apiKey, `/v2/subscriptions?${query}${cursor ? `&startingAfter=${cursor}` : ''}`);
    expect(res.status).toBe(200);
    ids.push(...res.body.data.map((s: { id: string }) => s.id));
    expect(res.body.hasMore).toBe(res.body.nextCursor !== null);
    cursor = res.body.nextCursor;
    pages += 1;
  } while (cursor);
  return { ids, pages };
}

describe('GET /v2/subscriptions/{id}', () => {
  it('answers the subscription as the pause answer shows it, and changes nothing', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1, 'paused');
    const before = await t.db.collection('subscriptions').findOne({ _id: id as never }, { projection: { outbox: 0 } });
    const res = await get(apiKey, `/v2/subscriptions/${id!.toUpperCase()}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id,
      merchantId,
      planId: before!.planId,
      status: 'paused',
      cycle: before!.cycle,
      createdAt: before!.createdAt,
      modifiedAt: before!.modifiedAt,
      livemode: true,
    });
    expect(await t.db.collection('subscriptions').findOne({ _id: id as never }, { projection: { outbox: 0 } })).toEqual(before);
  });

  it.each([
    ['another merchant’s', async () => (await t.seed((await t.merchant()).merchantId, 1))[0]!],
    ['an unknown', async () => randomUUID()],
    ['a malformed', async () => 'not-a-uuid'],
  ])('%s id answers 404 0020, indistinguishable', async (_case, makeId) => {
    const { apiKey } = await t.merchant();
    const id = await makeId();
    const res = await get(apiKey, `/v2/subscriptions/${id}`);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: '0020', detail: `Subscription ${id} not found` });
  });

  it('an id over 200 characters answers 400 0040, as the spec documents (found by the fuzzer)', async () => {
    const { apiKey } = await t.merchant();
    for (const path of [`/v2/subscriptions/${'a'.repeat(201)}`, `/v2/bulk-requests/${'a'.repeat(201)}`]) {
      const res = await get(apiKey, path);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('0040');
    }
  });

  it('without an API key answers 401 0010', async () => {
    const res = await call(t.baseUrl, `/v2/subscriptions/${randomUUID()}`, { method: 'GET' });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('0010');
  });
});

describe('GET /v2/subscriptions', () => {
  it('walking every page returns each of the caller’s subscriptions exactly once, in id order, and no one else’s', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const mine = await t.seed(merchantId, 45);
    await t.seed((await t.merchant()).merchantId, 10);
    const { ids, pages } = await walk(apiKey, 'limit=10');
    expect(pages).toBe(5);
    expect(ids).toEqual([...mine].sort());
  });

  it('without a limit, a page holds 20', async () => {
    const { merchantId, apiKey } = await t.merchant();
    await t.seed(merchantId, 21);
    const res = await get(apiKey, '/v2/subscriptions');
    expect(res.body.data).toHaveLength(20);
    expect(res.body.hasMore).toBe(true);
  });

  it('filters by status', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const paused = await t.seed(merchantId, 3, 'paused');
    await t.seed(merchantId, 4, 'fulfilled');
    await t.seed(merchantId, 2, 'cancelled');
    const { ids } = await walk(apiKey, 'status=paused&limit=2');
    expect(ids).toEqual([...paused].sort());
  });

  it('a page boundary on a subscription deleted meanwhile still continues after it', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const ids = [...(await t.seed(merchantId, 6))].sort();
    const first = await get(apiKey, '/v2/subscriptions?limit=3');
    expect(first.body.nextCursor).toBe(ids[2]);
    await t.db.collection('subscriptions').deleteOne({ _id: ids[2] as never });
    const next = await get(apiKey, `/v2/subscriptions?limit=3&startingAfter=${first.body.nextCursor}`);
    expect(next.body.data.map((s: { id: string }) => s.id)).toEqual(ids.slice(3));
    expect(next.body).toMatchObject({ hasMore: false, nextCursor: null });
  });

  it('a cursor taken from another merchant’s list gives nothing of theirs', async () => {
    const a = await t.merchant();
    const b = await t.merchant();
    const theirs = await t.seed(b.merchantId, 5);
    const mine = await t.seed(a.merchantId, 5);
    const theirCursor = [...theirs].sort()[0]!;
    const res = await get(a.apiKey, `/v2/subscriptions?limit=100&startingAfter=${theirCursor}`);
    const seen = res.body.data.map((s: { id: string }) => s.id);
    expect(seen.every((id: string) => mine.includes(id))).toBe(true);
    expect(seen).toEqual([...mine].sort().filter((id) => id > theirCursor));
  });

  it.each(['limit=0', 'limit=101', 'limit=abc', 'status=deleted', 'startingAfter=not-a-uuid'])(
    'a malformed query (%s) answers 400 0040',
    async (query) => {
      const { apiKey } = await t.merchant();
      const res = await get(apiKey, `/v2/subscriptions?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('0040');
    },
  );
});
