/**
 * The clock of a merchant's data (docs/design.md §3 "Test clocks"): the real one when live; in test
 * mode its test clock's time, read once per request (the real time until the clock is first set).
 */
import { parseRfc3339, REAL_CLOCK, type Clock } from '../lib/clock.js';
import { livemodeOf } from '../merchants/livemode.js';
import type { TestClocksRepository } from './test-clocks.repository.js';

/** A merchant's clock for one request: the real one when live; in test mode its test clock's time, read once (the real time until the clock is first set). */
export function clockOfMerchants(clocks: TestClocksRepository): (merchantId: string) => Promise<Clock> {
  return async (merchantId) => {
    const at = livemodeOf(merchantId) ? undefined : await clocks.timeOf(merchantId);
    return at === undefined ? REAL_CLOCK : fixedClock(at);
  };
}

function fixedClock(at: string): Clock {
  const micros = parseRfc3339(at)!;
  return { timestamp: () => at, micros: () => micros, test: true };
}

/** The time of a merchant's data: the real time when live, its test clock's in test mode. */
export function timeOfMerchants(clocks: TestClocksRepository): (merchantId: string) => Promise<string> {
  const clockOf = clockOfMerchants(clocks);
  return async (merchantId) => (await clockOf(merchantId)).timestamp();
}
