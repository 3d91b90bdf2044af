/**
 * scripts/bench-compare.ts, which `npm run bench` ends with: whether two runs agree within 15% on
 * every ratio, and for a ratio that does not, whether its change is within twice the noise the
 * rounds of both runs imply (scripts/bench-rounds.ts, medianNoise).
 */
import { describe, expect, it } from 'vitest';
import { compareRuns } from '../../scripts/bench-compare.js';
import { medianNoise, spreadOf } from '../../scripts/bench-rounds.js';

describe('the noise of a median of rounds', () => {
  it("is the standard error of the median, from the rounds' median absolute deviation, relative to the median", () => {
    // MAD 0.1, so σ = 0.14826 and the standard error 1.2533 σ / √3.
    expect(medianNoise([0.9, 1.0, 1.1])).toBeCloseTo((1.2533 * 0.14826) / Math.sqrt(3), 6);
    expect(medianNoise([2, 2, 2, 2, 2])).toBe(0);
    // One wild round of five does not make the run look noisy: the deviation is the median one.
    expect(medianNoise([1.0, 1.01, 0.99, 1.0, 3.0])).toBeLessThan(0.01);
  });

  it('is unknown under three rounds', () => {
    expect(medianNoise([1, 1.2])).toBeUndefined();
  });
});

describe('comparing two runs', () => {
  const run = (measuredAt: string, ratios: Record<string, readonly number[]>) => ({
    measuredAt,
    ...Object.fromEntries(Object.entries(ratios).map(([k, r]) => [k, spreadOf(r)])),
  });

  it('agrees when every median is within 15%, and prints each change with its noise', () => {
    const { agree, lines } = compareRuns(run('first', { a: [0.9, 1.0, 1.1] }), run('second', { a: [0.95, 1.1, 1.2] }));
    expect(agree).toBe(true);
    expect(lines.find((l) => l.startsWith('| a '))).toMatch(/\| +\+10% \| +±14% \| +yes \|$/);
  });

  it("tells a change the rounds' spread explains from one it does not", () => {
    const first = run('first', { noisy: [0.9, 1.0, 1.1], tight: [1.0, 1.001, 0.999] });
    const second = run('second', { noisy: [1.08, 1.2, 1.32], tight: [1.2, 1.201, 1.199] });
    const { agree, outside, outsideWithinNoise, lines } = compareRuns(first, second);
    expect(agree).toBe(false);
    expect(outside).toEqual(['noisy', 'tight']);
    expect(outsideWithinNoise).toEqual(['noisy']);
    expect(lines.find((l) => l.startsWith('| noisy '))).toMatch(/NO, noise \|$/);
    expect(lines.find((l) => l.startsWith('| tight '))).toMatch(/\| +NO \|$/);
    expect(lines.at(-1)).toMatch(/^outside: 2; within twice the noise their rounds imply \(NO, noise\): 1/);
  });

  it('prints no noise for a run stored without its rounds', () => {
    const stored = { measuredAt: 'old', a: { median: 1, min: 0.9, max: 1.1 } };
    const { lines } = compareRuns(stored, run('new', { a: [1, 1.05, 0.95] }));
    expect(lines.find((l) => l.startsWith('| a '))).toMatch(/\| +- \| +yes \|$/);
  });
});
