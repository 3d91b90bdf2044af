/** An HTTP client for the tests that checks every response it receives against the spec. */
import { contractViolations } from './contract.js';

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
