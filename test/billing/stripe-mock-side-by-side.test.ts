/**
 * stripe-mock started by test files that run at once (two side-by-side files, and the Stripe push
 * faults in the waiting lane beside them): each instance answers on its own ports. stripe-mock
 * opens HTTPS on port 12112 unless told otherwise, so a second instance on the machine exited at
 * start and its file failed.
 */
import { describe, expect, it } from 'vitest';
import { startStripeMock, stripeMockBuilt } from '../support/stripe-mock.js';

describe.skipIf(!stripeMockBuilt())('stripe-mock for test files that run at once', () => {
  it('two started together both answer a call through their recorders', async () => {
    const mocks = await Promise.allSettled([startStripeMock(), startStripeMock()]);
    try {
      expect(mocks.map((m) => m.status)).toEqual(['fulfilled', 'fulfilled']);
      for (const mock of mocks) {
        if (mock.status !== 'fulfilled') continue;
        const reply = await fetch(`${mock.value.base}/v1/balance`, { headers: { authorization: 'Bearer sk_test_123' } });
        expect(reply.status).toBe(200);
        expect(mock.value.calls).toHaveLength(1);
      }
    } finally {
      for (const mock of mocks) if (mock.status === 'fulfilled') await mock.value.close();
    }
  });
});
