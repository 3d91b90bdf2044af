/** Timestamps (docs/design.md §5): six fractional digits, strictly increasing, sorting like their instants. */
import { describe, expect, it } from 'vitest';
import {
  EARLIEST_TIMESTAMP_MICROS,
  formatTimestamp,
  LATEST_TIMESTAMP_MICROS,
  nowTimestamp,
  TIMESTAMP_PATTERN,
} from '../../src/lib/clock.js';

describe('the clock', () => {
  it('formats an instant in microseconds as UTC with exactly six fractional digits', () => {
    expect(formatTimestamp(1_700_000_000_123_456n)).toBe('2023-11-14T22:13:20.123456Z');
    expect(formatTimestamp(1_700_000_000_000_001n)).toBe('2023-11-14T22:13:20.000001Z');
    expect(formatTimestamp(1_700_000_000_000_000n)).toBe('2023-11-14T22:13:20.000000Z');
  });

  it('formats instants of different seconds in turn each with its own second (the second last formatted is reused)', () => {
    const [a, b] = [1_700_000_000_123_456n, 1_700_000_061_000_001n];
    expect([a, b, a, b - 1n, a + 1n].map(formatTimestamp)).toEqual([
      '2023-11-14T22:13:20.123456Z',
      '2023-11-14T22:14:21.000001Z',
      '2023-11-14T22:13:20.123456Z',
      '2023-11-14T22:14:21.000000Z',
      '2023-11-14T22:13:20.123457Z',
    ]);
  });

  it('formats an instant before 1970 (a test fixture made in the year 298, found by Schemathesis) with its fraction, not a negative one', () => {
    expect(formatTimestamp(-52_758_716_479_157_000n)).toBe('0298-02-21T16:58:40.843000Z');
    expect(formatTimestamp(-1n)).toBe('1969-12-31T23:59:59.999999Z');
    expect(formatTimestamp(-1_000_000n)).toBe('1969-12-31T23:59:59.000000Z');
  });

  it('formats the first and last instants of years 0000-9999 in the pattern, and refuses one microsecond beyond either', () => {
    expect(formatTimestamp(EARLIEST_TIMESTAMP_MICROS)).toBe('0000-01-01T00:00:00.000000Z');
    expect(formatTimestamp(LATEST_TIMESTAMP_MICROS)).toBe('9999-12-31T23:59:59.999999Z');
    expect(() => formatTimestamp(EARLIEST_TIMESTAMP_MICROS - 1n)).toThrow(RangeError);
    expect(() => formatTimestamp(LATEST_TIMESTAMP_MICROS + 1n)).toThrow(RangeError);
    // The instant of 9999-12-31T23:59:59.999999-23:59, which was written as "+010000-01-01T23:58:59.999999Z".
    expect(() => formatTimestamp(LATEST_TIMESTAMP_MICROS + 86_340_000_000n)).toThrow(RangeError);
  });

  it('gives 10000 timestamps in a row that match the pattern and strictly increase, as strings too', () => {
    const stamps = Array.from({ length: 10_000 }, () => nowTimestamp());
    expect(stamps.every((s) => TIMESTAMP_PATTERN.test(s))).toBe(true);
    for (let i = 1; i < stamps.length; i++) expect(stamps[i]! > stamps[i - 1]!).toBe(true);
  });

  it('is the wall clock to the millisecond', () => {
    const before = Date.now();
    const stamp = nowTimestamp();
    const after = Date.now();
    const millis = Date.parse(stamp);
    // The hrtime correction keeps the stamp within the millisecond the wall clock shows.
    expect(millis).toBeGreaterThanOrEqual(before - 1);
    expect(millis).toBeLessThanOrEqual(after + 1);
  });

  it('sorts as strings exactly as the instants they name, across seconds, days and years', () => {
    const instants = [
      1_699_999_999_999_999n,
      1_700_000_000_000_000n,
      1_700_000_000_000_001n,
      1_700_000_000_999_999n,
      1_700_000_001_000_000n,
      1_703_980_799_999_999n,
      1_703_980_800_000_000n,
      1_000_000_000_000_000n,
      9_999_999_999_999_999n,
    ];
    const byString = [...instants].sort((a, b) => (formatTimestamp(a) < formatTimestamp(b) ? -1 : 1));
    const byInstant = [...instants].sort((a, b) => (a < b ? -1 : 1));
    expect(byString).toEqual(byInstant);
  });
});
