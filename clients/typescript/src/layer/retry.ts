/**
 * Retries as the client layer makes them: on a network error, 429, 502, 503 and 504, at most
 * `maxRetries` times, after the wait the answer asks for (Retry-After, else the RateLimit field's
 * reset when no request is left) or a jittered exponential backoff. A mutating request carries one
 * Idempotency-Key, the caller's or one made here, reused by each of its retries, so that the
 * service applies it once however many attempts reach it.
 */
export interface RetryOptions {
  /** Retries after the first attempt; 2 unless set. */
  readonly maxRetries?: number;
  /** Milliseconds each attempt may take before it is abandoned (and retried); 30 s unless set. */
  readonly timeoutMs?: number;
  /** The first backoff in milliseconds, doubled on each retry; 500 unless set. */
  readonly initialDelayMs?: number;
  /** The longest wait between two attempts, in milliseconds; 20 s unless set. */
  readonly maxDelayMs?: number;
}

const RETRIED_STATUSES = new Set([429, 502, 503, 504]);
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The wait an answer asks for, in milliseconds, or undefined when it names none. */
export function requestedWaitMs(headers: Headers): number | undefined {
  const retryAfter = headers.get('retry-after');
  if (retryAfter !== null) {
    if (/^\d+$/.test(retryAfter.trim())) return Number(retryAfter) * 1000;
    const at = Date.parse(retryAfter);
    if (!Number.isNaN(at)) return Math.max(0, at - Date.now());
  }
  // IETF RateLimit field: `"merchant";r=0;t=5` (no request left, reset in 5 s).
  const rateLimit = headers.get('ratelimit');
  const remaining = rateLimit && /(?:^|;)\s*r=(\d+)/.exec(rateLimit);
  const reset = rateLimit && /(?:^|;)\s*t=(\d+)/.exec(rateLimit);
  if (remaining && reset && Number(remaining[1]) === 0) return Number(reset[1]) * 1000;
  return undefined;
}

/** The backoff before retry number `retry` (0 for the first): exponential, with full jitter over its upper half. */
export function backoffMs(retry: number, initialDelayMs: number, maxDelayMs: number): number {
  const ceiling = Math.min(maxDelayMs, initialDelayMs * 2 ** retry);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

const sleep = (ms: number, signal: AbortSignal | null | undefined) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/** A `fetch` that retries as above; the answer of the last attempt is returned, whatever its status. */
export function retryingFetch(options: RetryOptions = {}, fetchImpl: typeof fetch = fetch): typeof fetch {
  const maxRetries = options.maxRetries ?? 2;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const initialDelayMs = options.initialDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 20_000;
  return async (input, init = {}) => {
    const headers = new Headers(init.headers);
    const method = (init.method ?? 'GET').toUpperCase();
    if (!SAFE_METHODS.has(method) && !headers.has('idempotency-key')) headers.set('Idempotency-Key', crypto.randomUUID());
    const callerSignal = init.signal;
    for (let retry = 0; ; retry++) {
      const attempt = new AbortController();
      const timer = setTimeout(() => attempt.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
      const abortAttempt = () => attempt.abort(callerSignal?.reason);
      callerSignal?.addEventListener('abort', abortAttempt, { once: true });
      let wait: number;
      try {
        const response = await fetchImpl(input, { ...init, headers, signal: attempt.signal });
        if (!RETRIED_STATUSES.has(response.status) || retry >= maxRetries) return response;
        wait = requestedWaitMs(response.headers) ?? backoffMs(retry, initialDelayMs, maxDelayMs);
        // Its body is not read: release the connection for the next attempt.
        await response.body?.cancel();
      } catch (error) {
        // The caller's own abort is final; a network error or this layer's timeout is retried.
        if (callerSignal?.aborted || retry >= maxRetries) throw error;
        wait = backoffMs(retry, initialDelayMs, maxDelayMs);
      } finally {
        clearTimeout(timer);
        callerSignal?.removeEventListener('abort', abortAttempt);
      }
      await sleep(Math.min(wait, maxDelayMs), callerSignal);
    }
  };
}
