/** An HTTP client for the tests that checks every response it receives against the spec. */
import { contractViolations } from './contract.js';
import { waitFor } from './wait.js';

export interface CallOptions {
  readonly method?: string;
  readonly apiKey?: string;
  readonly headers?: Record<string, string>;
  /** A value sent as JSON. */
  readonly json?: unknown;
  /** Sent as it is (with `headers` naming its type). */
  readonly rawBody?: string;
}

export interface Reply<T = any> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
}

export async function call<T = any>(baseUrl: string, path: string, options: CallOptions = {}): Promise<Reply<T>> {
  const method = options.method ?? 'POST';
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey !== undefined) headers['x-api-key'] = options.apiKey;
  let body: string | undefined = options.rawBody;
  if (options.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(options.json);
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  const contentType = response.headers.get('content-type') ?? '';
  const parsed: unknown = contentType.includes('json') && text ? JSON.parse(text) : text;
  const violations = await contractViolations({ method, path, status: response.status, contentType, body: parsed });
  if (violations.length > 0) {
    throw new Error(`${method} ${path} → ${response.status} breaks the contract:\n  ${violations.join('\n  ')}\n${text}`);
  }
  return { status: response.status, headers: response.headers, body: parsed as T };
}

/** `api(key, method, path, json?, headers?)`: a call with the tests' usual arguments, checked as `call` checks it. */
export type Api = (apiKey: string, method: string, path: string, json?: unknown, headers?: Record<string, string>) => Promise<Reply>;

/**
 * Waits until a bulk request is completed and returns that status answer: `request` is its id or
 * the `location` its 202 gave; it asks every `everyMs`. At the deadline it throws with the last answer.
 */
export type Completed = (apiKey: string, request: string, timeoutMs?: number, everyMs?: number) => Promise<Reply>;

/**
 * The shared `api` and `completed` of a test file, on the service `on()` returns at each call (so
 * that a service started in `beforeAll` is the one called): `const { api, completed } = httpOf(() => t)`.
 */
export function httpOf(on: () => { readonly baseUrl: string; readonly logLines?: readonly Record<string, unknown>[] }): {
  api: Api;
  completed: Completed;
} {
  const api: Api = async (apiKey, method, path, json, headers) => {
    const service = on();
    const reply = await call(service.baseUrl, path, {
      method,
      apiKey,
      ...(json === undefined ? {} : { json }),
      ...(headers ? { headers } : {}),
    });
    if (reply.status === 500 && service.logLines) unexpected(method, path, reply, service.logLines);
    return reply;
  };
  const completed: Completed = (apiKey, request, timeoutMs = 60_000, everyMs = 100) =>
    waitFor(
      () => api(apiKey, 'GET', request.startsWith('/') ? request : `/v2/bulk-requests/${request}`),
      (res) => res.status === 200 && res.body.state === 'completed',
      timeoutMs,
      everyMs,
      `bulk request ${request} completed`,
    );
  return { api, completed };
}

/** A 500's cause, from the service's own log lines of that request: a failing test's output then says why. */
function unexpected(method: string, path: string, reply: Reply, logLines: readonly Record<string, unknown>[]): void {
  const reqId = reply.headers.get('x-request-id');
  const errors = logLines.filter((line) => line.reqId === reqId && Number(line.level) >= 50);
  const causes = errors.map((line) => (line.err as { stack?: string } | undefined)?.stack ?? JSON.stringify(line));
  console.error(`${method} ${path} answered 500 (request ${reqId}):\n${causes.join('\n') || 'no error logged for it'}`);
}
