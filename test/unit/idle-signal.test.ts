import { describe, expect, it } from 'vitest';
import { IdleSignal } from '../../src/lib/idle-signal.js';

describe('IdleSignal', () => {
  it('a waiter resumes at the wake, long before its deadline', async () => {
    const signal = new IdleSignal();
    const started = Date.now();
    const waited = signal.next(60_000);
    setTimeout(() => signal.wake(), 10);
    await waited;
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('with no wake, a waiter resumes at its deadline; a later wake finds no one', async () => {
    const signal = new IdleSignal();
    let resumed = false;
    const waited = signal.next(20).then(() => (resumed = true));
    await waited;
    expect(resumed).toBe(true);
    expect(() => signal.wake()).not.toThrow();
  });

  it('one wake resumes every waiter', async () => {
    const signal = new IdleSignal();
    const waits = [signal.next(60_000), signal.next(60_000), signal.next(60_000)];
    signal.wake();
    await expect(Promise.all(waits)).resolves.toHaveLength(3);
  });
});
