/**
 * The kinds of retry policy (how many attempts, how long between them) and the one loop that
 * retries at once; the service's own policies are named in src/retry-policies.ts.
 */

/** Attempts made at once, one after another, with no wait between them. */
export interface ImmediateRetry {
  readonly attempts: number;
}

/** A retry later, after a fixed delay. */
export interface DelayedRetry {
  readonly delayMs: number;
}

/** Retries with exponential backoff (Agenda's strategy: delay × factor^n, capped, with jitter). */
export interface Backoff {
  readonly delay: number;
  readonly factor: number;
  readonly maxDelay: number;
  readonly maxRetries: number;
  readonly jitter: number;
}

/**
 * The one retry loop: runs `attempt` up to `policy.attempts` times, until it settles (returns a
 * value other than undefined); undefined when no attempt did. An error ends it at once.
 */
export async function untilSettled<T>(policy: ImmediateRetry, attempt: (n: number) => Promise<T | undefined>): Promise<T | undefined> {
  for (let tries = 0; tries < policy.attempts; tries++) {
    const settled = await attempt(tries);
    if (settled !== undefined) return settled;
  }
  return undefined;
}

/** A wait for something another party does: read every `everyMs` for at most `withinMs`. */
export interface Polling {
  readonly withinMs: number;
  readonly everyMs: number;
}

/**
 * The one polling loop: reads until `done` holds of what it read or `policy.withinMs` has passed,
 * `policy.everyMs` apart; resolves to the last value read, whether or not it was done.
 */
export async function pollUntil<T>(policy: Polling, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const until = Date.now() + policy.withinMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() >= until) return value;
    await new Promise((resolve) => setTimeout(resolve, policy.everyMs));
  }
}
