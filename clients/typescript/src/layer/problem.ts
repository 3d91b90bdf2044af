/**
 * The base of the client layer's error types: an answer of the API that is a problem (RFC 9457).
 * Each code of the spec has its own subclass (../problems.ts), so that a caller catches by kind.
 */
export class ProblemError extends Error {
  /** The code a subclass stands for; empty on the base class. */
  static readonly code: string = '';
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  /** The answer's `X-Request-Id`, to quote when reporting a problem. */
  readonly requestId: string | undefined;
  /** The whole problem document, `errors` included. */
  readonly body: Record<string, unknown>;

  constructor(status: number, body: Record<string, unknown>, requestId: string | undefined) {
    const code = typeof body.code === 'string' ? body.code : '';
    const detail = typeof body.detail === 'string' ? body.detail : '';
    super(`${status} ${code}: ${detail || String(body.title ?? '')}`);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.requestId = requestId;
    this.body = body;
  }
}

/** The problem an error answer carries; a body that is not a problem keeps the status, with an empty code. */
export async function problemOf(response: Response): Promise<Record<string, unknown>> {
  const text = await response.clone().text();
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's page): the status alone says what happened.
  }
  return { status: response.status, detail: text.slice(0, 500) };
}
