/**
 * The one retry loop (src/lib/retry.ts): as many attempts as the policy names, until one settles;
 * and the one polling loop: reads until done or the policy's time is up.
 */
import { describe, expect, it, vi } from 'vitest';
import { pollUntil, untilSettled } from '../../src/lib/retry.js';
import { RETRY } from '../../src/retry-policies.js';

describe('untilSettled', () => {
  it('stops at the first attempt that settles and returns its value', async () => {
    const seen: number[] = [];
    const value = await untilSettled({ attempts: 5 }, async (n) => (seen.push(n), n === 2 ? 'third' : undefined));
    expect([value, seen]).toEqual(['third', [0, 1, 2]]);
  });

  it("gives up after the policy's attempts with undefined (the concurrent-writer policy makes 5)", async () => {
    let calls = 0;
    expect(await untilSettled(RETRY.concurrentWriter, async () => void calls++)).toBeUndefined();
    expect(calls).toBe(5);
  });

  it('ends at once on an error, which its caller gets', async () => {
    let calls = 0;
    await expect(
      untilSettled({ attempts: 3 }, async () => {
        calls++;
        throw new Error('not found');
      }),
    ).rejects.toThrow('not found');
    expect(calls).toBe(1);
  });

  it('a falsy value other than undefined settles it', async () => {
    expect(await untilSettled({ attempts: 3 }, async () => false)).toBe(false);
  });
});

describe('pollUntil', () => {
  it('reads until what it read is done, waiting between reads, and resolves to that', async () => {
    // On the fake clock: a wall clock's timer may fire a millisecond before Date.now() says its time has come.
    vi.useFakeTimers();
    try {
      let reads = 0;
      const polled = pollUntil(
        { withinMs: 5_000, everyMs: 20 },
        async () => ++reads,
        (n) => n === 3,
      );
      await vi.advanceTimersByTimeAsync(0);
      expect(reads).toBe(1);
      await vi.advanceTimersByTimeAsync(19);
      expect(reads).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(reads).toBe(2);
      await vi.advanceTimersByTimeAsync(20);
      expect([await polled, reads]).toEqual([3, 3]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('past its time, resolves to the last value read, done or not', async () => {
    let reads = 0;
    const value = await pollUntil(
      { withinMs: 60, everyMs: 20 },
      async () => ++reads,
      () => false,
    );
    expect(value).toBe(reads);
    expect(reads).toBeGreaterThanOrEqual(2);
  });

  it('a read that throws ends it with that error', async () => {
    await expect(
      pollUntil(
        { withinMs: 1_000, everyMs: 10 },
        () => Promise.reject(new Error('gone')),
        () => true,
      ),
    ).rejects.toThrow('gone');
  });
});
