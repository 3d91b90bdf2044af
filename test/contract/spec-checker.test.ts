/**
 * The checker that every response a test receives goes through (test/support/contract.ts): it must
 * pass what the spec allows and catch what it does not, or the other tests' checks mean nothing.
 */
import { describe, expect, it } from 'vitest';
import { contractViolations } from '../support/contract.js';

const pausePath = '/v2/subscriptions/6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60/pause';
const subscription = {
  id: '6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60',
  merchantId: '0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a',
  planId: '5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d',
  status: 'paused',
  cycle: 3,
  createdAt: '2026-09-01T08:00:00.000000Z',
  modifiedAt: '2026-11-22T10:15:30.123456Z',
  livemode: true,
};
const json = 'application/json';

describe('contractViolations, the spec checker every test response goes through', () => {
  it('finds nothing wrong with a pause 200 that matches the PausedSubscription schema', async () => {
    expect(await contractViolations({ method: 'POST', path: pausePath, status: 200, contentType: json, body: subscription })).toEqual([]);
  });

  it('catches a pause 200 without merchantId, and a resume 200 with it (each operation its own schema)', async () => {
    const { merchantId: _, ...withoutMerchant } = subscription;
    expect(
      await contractViolations({ method: 'POST', path: pausePath, status: 200, contentType: json, body: withoutMerchant }),
    ).not.toEqual([]);
    const resumePath = pausePath.replace('pause', 'resume');
    expect(await contractViolations({ method: 'POST', path: resumePath, status: 200, contentType: json, body: subscription })).not.toEqual(
      [],
    );
  });

  it('catches a timestamp with three fractional digits instead of six', async () => {
    const millis = { ...subscription, modifiedAt: '2026-11-22T10:15:30.123Z' };
    expect(await contractViolations({ method: 'POST', path: pausePath, status: 200, contentType: json, body: millis })).not.toEqual([]);
  });

  it('catches a status the operation does not declare', async () => {
    expect(await contractViolations({ method: 'POST', path: pausePath, status: 418, contentType: json, body: {} })).not.toEqual([]);
  });

  it('catches a problem sent as application/json, and passes it as application/problem+json', async () => {
    const problem = { type: 'urn:x', title: 'Subscription not found', status: 404, detail: 'd', code: '0020' };
    expect(await contractViolations({ method: 'POST', path: pausePath, status: 404, contentType: json, body: problem })).not.toEqual([]);
    expect(
      await contractViolations({ method: 'POST', path: pausePath, status: 404, contentType: 'application/problem+json', body: problem }),
    ).toEqual([]);
  });

  it('catches a 400 listing more than 100 errors, the most the spec allows', async () => {
    const errors = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ path: `/subscriptions/${i}`, message: 'must match format "uuid"' }));
    const invalid = (n: number) => ({ type: 'urn:x', title: 'Invalid request', status: 400, detail: 'd', code: '0040', errors: errors(n) });
    const check = (n: number) =>
      contractViolations({ method: 'POST', path: pausePath, status: 400, contentType: 'application/problem+json', body: invalid(n) });
    expect(await check(100)).toEqual([]);
    expect(await check(101)).not.toEqual([]);
  });

  it("passes a bulk request's items as text/csv, the 200's second media type, and catches CSV where only JSON is declared", async () => {
    const itemsPath = '/v2/bulk-requests/3c9d1e2f-4a5b-4c6d-8e7f-9a0b1c2d3e4f/items';
    const file = 'subscriptionId,outcome,reason,at\r\n';
    expect(
      await contractViolations({ method: 'GET', path: itemsPath, status: 200, contentType: 'text/csv; charset=utf-8', body: file }),
    ).toEqual([]);
    expect(
      await contractViolations({
        method: 'GET',
        path: itemsPath.replace('/items', ''),
        status: 200,
        contentType: 'text/csv; charset=utf-8',
        body: file,
      }),
    ).not.toEqual([]);
    // A JSON page is still checked as one.
    expect(await contractViolations({ method: 'GET', path: itemsPath, status: 200, contentType: json, body: file })).not.toEqual([]);
  });

  it('catches an error outside the spec paths that is not a problem (Koa plain text)', async () => {
    expect(
      await contractViolations({ method: 'GET', path: '/nope', status: 404, contentType: 'text/plain', body: 'Not Found' }),
    ).not.toEqual([]);
  });
});
