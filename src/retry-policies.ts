/**
 * Every retry and wait of the service, as named policies in one place: how many attempts, and how
 * long between them. What is retried, and why it is safe to, is said where each is used.
 */
import type { Backoff, DelayedRetry, ImmediateRetry, Polling } from './lib/retry.js';

export const RETRY = Object.freeze({
  /**
   * A change of a subscription whose conditional update found it changed by a concurrent writer
   * between our update and our read (SubscriptionsService): read again and decide again.
   */
  concurrentWriter: { attempts: 5 } satisfies ImmediateRetry,
  /** Claiming an Idempotency-Key that another request just released or that just expired. */
  idempotencyClaim: { attempts: 3 } satisfies ImmediateRetry,
  /** A change of a merchant's API keys whose conditional write found the set changed by another process since its read. */
  keySetChange: { attempts: 5 } satisfies ImmediateRetry,
  /**
   * A test clock's advance whose move found the clock moved forward by another advance, still short
   * of where this one goes: moved again from where it stands, before the advance answers 409.
   */
  testClockMove: { attempts: 16 } satisfies ImmediateRetry,
  /** A bulk chunk job that threw (a database error, commands still unresolved): Agenda runs it again. */
  bulkChunk: { delay: 500, factor: 2, maxDelay: 30_000, maxRetries: 10, jitter: 0.2 } satisfies Backoff,
  /** A relay of events that failed in a live process: the same process tries again. */
  eventsRelay: { delayMs: 5_000 } satisfies DelayedRetry,
  /** A bulk request accepted this long ago and still not dispatched was left by a process that stopped: the workers' sweep dispatches it. */
  undispatchedBulk: { delayMs: 5_000 } satisfies DelayedRetry,
  /** A pending webhook delivery this long past due has no job that will take it: the workers' sweep queues it again. */
  overdueDelivery: { delayMs: 120_000 } satisfies DelayedRetry,
  /** A test trigger's wait for the events of its bulk request, which the workers (maybe another process's) record. */
  triggerEvents: { withinMs: 20_000, everyMs: 100 } satisfies Polling,
});

/**
 * The delays before each retry of a failed webhook delivery (about a day in all; after the last,
 * the delivery is `failed`). Configurable as WEBHOOK_RETRY_DELAYS_MS (src/config.ts), whose
 * default this is.
 */
export const WEBHOOK_RETRY_DELAYS_MS: readonly number[] = Object.freeze([
  5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
]);
