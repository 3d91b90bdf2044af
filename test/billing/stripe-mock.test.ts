/**
 * The harness the Stripe connection is tested with: stripe-mock behind the recording proxy. It must
 * refuse what Stripe's spec refuses (else the connection's tests would pass on calls Stripe rejects),
 * and its stop and start must look like Stripe going away and coming back.
 */
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStripeMock, stripeMockBuilt, type StripeMock } from '../support/stripe-mock.js';

describe.skipIf(!stripeMockBuilt())('stripe-mock behind the recorder', () => {
  let mock: StripeMock;
  let stripe: Stripe;
  beforeAll(async () => {
    mock = await startStripeMock();
    const base = new URL(mock.base);
    stripe = new Stripe('sk_test_harness', { host: base.hostname, port: Number(base.port), protocol: 'http', maxNetworkRetries: 0 });
  });
  afterAll(() => mock?.close());

  it('when a call matches Stripe spec, it is answered and recorded with its form fields', async () => {
    const updated = await stripe.subscriptions.update('sub_harness', { pause_collection: { behavior: 'void' } }, { idempotencyKey: 'k1' });
    expect(updated.object).toBe('subscription');
    const last = mock.calls.at(-1)!;
    expect(last).toMatchObject({ method: 'POST', path: '/v1/subscriptions/sub_harness', status: 200 });
    expect(last.form.get('pause_collection[behavior]')).toBe('void');
    expect(last.headers['idempotency-key']).toBe('k1');
  });

  it('when a call breaks Stripe spec, stripe-mock refuses it and invalid() lists it', async () => {
    await expect(stripe.subscriptions.update('sub_harness', { pause_collection: { behavior: 'sleep' as 'void' } })).rejects.toThrow();
    expect(mock.invalid().map((c) => c.path)).toEqual(['/v1/subscriptions/sub_harness']);
  });

  it('when stopped, calls fail to connect; started again, they are answered', async () => {
    await mock.stop();
    await expect(stripe.subscriptions.retrieve('sub_harness')).rejects.toThrow(/connection/i);
    await mock.start();
    mock.answers.push(429);
    await expect(stripe.subscriptions.retrieve('sub_harness')).rejects.toMatchObject({ statusCode: 429 });
    expect((await stripe.subscriptions.retrieve('sub_harness')).object).toBe('subscription');
  });
});
