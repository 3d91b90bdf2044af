/**
 * Serialises tasks that share a key, within this process. Where the server's conditional update
 * is not atomic against a concurrent one (src/db/workarounds.ts keyedMutex says why an engine needs
 * it), every write of the service to a document that a conditional update changes is queued here
 * by the document (GUARDED below; docs/design.md §8). Where it is atomic, it is the guard and
 * nothing is queued (UNQUEUED): the composition root decides which.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /**
   * Runs the task holding every key. Keys are taken in sorted order, so two tasks with
   * overlapping keys cannot each hold one the other waits for.
   */
  runAll<T>(keys: readonly string[], task: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(keys)].sort();
    const holding = (i: number): Promise<T> => (i === sorted.length ? task() : this.run(sorted[i]!, () => holding(i + 1)));
    return holding(0);
  }
}

/** What changes of one subscription are queued by: a KeyedMutex, or UNQUEUED. */
export type PerKeyQueue = Pick<KeyedMutex, 'run' | 'runAll'>;

/** Runs every task at once: for a server whose atomic conditional update guards each change. */
export const UNQUEUED: PerKeyQueue = Object.freeze({
  run: <T>(_key: string, task: () => Promise<T>) => task(),
  runAll: <T>(_keys: readonly string[], task: () => Promise<T>) => task(),
});

/**
 * Every kind of document the guard queues writes of, with the key they queue by: the one list of
 * what the per-process guard covers (docs/design.md §8 "Conditional updates" gives each update and
 * its condition). Subscriptions are queued by their bare id (src/subscriptions/subscriptions.service.ts
 * and the events relay); these keys carry a prefix, so none is ever a subscription's.
 */
export const GUARDED = Object.freeze({
  /** A merchant's (or test mode's) document: its key set (`keysVersion`), last-used times, test mode upsert (src/auth/merchants.repository.ts). */
  merchant: (merchantId: string) => `merchant:${merchantId}`,
  /** A test mode's clock: an advance moves it only from the time it read (src/test-mode/test-clocks.repository.ts). */
  testClock: (testModeId: string) => `testClock:${testModeId}`,
  /** A webhook endpoint: changes by its merchant, and the delivery outcomes' failure count and disabling (src/webhooks/endpoints.repository.ts). */
  webhookEndpoint: (endpointId: string) => `webhookEndpoint:${endpointId}`,
  /** A merchant's pause policy: its replacing upsert (src/pause-policy/pause-policy.repository.ts). */
  pausePolicy: (merchantId: string) => `pausePolicy:${merchantId}`,
  /** A merchant's plan (`<merchantId>:<planId>`): its naming upsert (src/plans/plans.repository.ts). */
  plan: (planKey: string) => `plan:${planKey}`,
  /** A billing connection (`<merchantId>:<system>`): its connecting upsert (src/billing/stripe-connections.repository.ts). */
  billingConnection: (connectionKey: string) => `billingConnection:${connectionKey}`,
  /** A hold: released once, only while active (src/holds/holds.repository.ts). */
  hold: (holdId: string) => `hold:${holdId}`,
  /** A bulk request: its undo is set once, only where none is (src/bulk/bulk.repository.ts). */
  bulkRequest: (requestId: string) => `bulkRequest:${requestId}`,
  /** The schedule clock's one document: `$min` notes and the poll's versioned settle (src/subscriptions/schedule.clock.ts). */
  scheduleClock: () => 'scheduleClock',
});
