import { inspect } from 'node:util';

/**
 * Polls until the check passes and returns the value that passed it; at the deadline it throws,
 * naming what it waited for and the last value read, so that a wait that never ends is the
 * failure, not a later assertion on a stale value.
 */
export async function waitFor<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 60_000,
  everyMs = 100,
  what: string | (() => string) = 'the condition',
): Promise<T> {
  const { value, met } = await pollFor(read, done, timeoutMs, everyMs);
  if (!met)
    throw new Error(
      `waited ${timeoutMs} ms for ${typeof what === 'function' ? what() : what}; it never held. Last value: ${inspect(value, { depth: 4, maxStringLength: 500 })}`,
    );
  return value;
}

/**
 * For a measurement over a window (how far an engine gets in a given time): polls until the check
 * passes or the window ends, and says which. Everything else uses waitFor.
 */
export async function pollFor<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  windowMs: number,
  everyMs = 100,
): Promise<{ value: T; met: boolean }> {
  const deadline = Date.now() + windowMs;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, everyMs));
    value = await read();
  }
  return { value, met: done(value) };
}
