import { describe, expect, it } from 'vitest';
import { contractViolations } from './support/contract.js';

const pausePath = '/v2/subscriptions/6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60/pause';
const subscription = {
  id: '6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60',
  merchantId: '0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a',
  planId: '5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d',
  status: 'paused',
  cycle: 3,
  createdAt: '2026-09-01T08:00:00.000000Z',
  modifiedAt: '2026-11-22T10:15:30.123456Z',
};
const json = 'application/json';

describe('the spec checker every test response goes through', () => {
  it('accepts a pause response that matches the spec', async () => {
    expect(await contractViolations({ method: 'POST', path: pausePath, status: 200, contentType: json, body: subscription })).toEqual([]);
  });

  it('rejects a pause response without merchantId, and a resume response with it', async () => {
    const { merchantId: _, ...withoutMerchant } = subscription;
    expect(await contractViolations({ method: 'POST', path: pausePath, status: 200, contentType: json, body: withoutMerchant })).not.toEqual([]);
    const resumePath = pausePath.replace('pause', 'resume');
    expect(await contractViolations({ method: 'POST', path: resumePath, status: 200, contentType: json, body: subscription })).not.toEqual([]);
  });

  it('rejects a millisecond timestamp, an undeclared status and a problem sent as plain JSON', async () => {
    const millis = { ...subscription, modifiedAt: '2026-11-22T10:15:30.123Z' };
    expect(await contractViolations({ method: 'POST', path: pausePath, status: 200, contentType: json, body: millis })).not.toEqual([]);
    expect(await contractViolations({ method: 'POST', path: pausePath, status: 418, contentType: json, body: {} })).not.toEqual([]);
    const problem = { type: 'urn:x', title: 'Subscription not found', status: 404, detail: 'd', code: '0020' };
    expect(await contractViolations({ method: 'POST', path: pausePath, status: 404, contentType: json, body: problem })).not.toEqual([]);
    expect(
      await contractViolations({ method: 'POST', path: pausePath, status: 404, contentType: 'application/problem+json', body: problem }),
    ).toEqual([]);
  });

  it('rejects an error outside the spec paths that is not a problem', async () => {
    expect(await contractViolations({ method: 'GET', path: '/nope', status: 404, contentType: 'text/plain', body: 'Not Found' })).not.toEqual([]);
  });
});
