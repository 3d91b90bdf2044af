/**
 * Stripe's own API mock for the Stripe connection's tests, behind a recording proxy on loopback.
 * stripe-mock (built from the Go module proxy into .cache/stripe-mock by the global setup, like
 * FerretDB) validates every request against Stripe's published OpenAPI spec; the proxy in front of
 * it records each call, so that tests count and inspect them, and can be stopped and started again
 * on the same port (Stripe unreachable) or told to answer a status of its own (Stripe's 429 or 5xx).
 *
 *   const stripe = await startStripeMock();   // inside describe.skipIf(!stripeMockBuilt())
 *   startTestService({ stripeApiBase: stripe.base })
 *   stripe.calls                                // every call that reached the proxy, in order
 *   stripe.answers.push(500)                    // the next call answers 500 without reaching the mock
 *   await stripe.stop(); await stripe.start();  // refuse connections / listen again
 *   stripe.hold(); stripe.release()             // keep calls unanswered (they count in `received`) / answer them
 *   stripe.subscriptionPages = { pages: 3, perPage: 2, refused?: 1 }
 *                                               // list calls (GET /v1/subscriptions) answer that many pages
 *                                               // of stripe-mock's fixture under ids of their own, paged by
 *                                               // `starting_after` as Stripe does (stripe-mock has one page);
 *                                               // the page `refused` (from 0) answers 401
 *   stripe.invalid()                            // calls stripe-mock refused as invalid: expect none
 *   await stripe.close()
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inject } from 'vitest';
import { freePort } from '../../src/lib/net.js';

export interface StripeCall {
  readonly method: string;
  /** Path and query, e.g. `/v1/subscriptions/sub_123`. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The form body, decoded (`pause_collection[behavior]` → `void`). */
  readonly form: URLSearchParams;
  readonly status: number;
  readonly response: string;
}

export interface StripeMock {
  /** The recorder's base URL: what STRIPE_API_BASE is set to. */
  readonly base: string;
  readonly calls: StripeCall[];
  /** Every call as it arrived, answered or not (a caller killed while it waited included). */
  readonly received: Omit<StripeCall, 'status' | 'response'>[];
  hold(): void;
  release(): void;
  /** Statuses the next calls get from the recorder itself, without reaching stripe-mock (a queue). */
  readonly answers: number[];
  /** Set: list calls answer these pages (ids `sub_page{page}x{item}`), each checked by stripe-mock first. */
  subscriptionPages: { readonly pages: number; readonly perPage: number; readonly refused?: number } | undefined;
  /** Calls stripe-mock refused as not matching Stripe's spec (400 `invalid_request_error`). */
  invalid(): StripeCall[];
  /** Closes the recorder's port and every open connection: Stripe unreachable. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Whether the global setup built stripe-mock; where it could not (no Go), it said SKIPPED once. */
export function stripeMockBuilt(): boolean {
  return inject('stripeMockBinary') !== undefined;
}

async function waitListening(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`stripe-mock exited with ${child.exitCode}`);
    try {
      const reply = await fetch(`http://127.0.0.1:${port}/v1/balance`, { headers: { authorization: 'Bearer sk_test_123' } });
      await reply.text();
      if (reply.ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error('stripe-mock did not start within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function startStripeMock(): Promise<StripeMock> {
  const binary = inject('stripeMockBinary');
  if (binary === undefined) throw new Error('stripe-mock is not built: guard the tests with stripeMockBuilt()');
  const mockPort = await freePort();
  // Its HTTPS listener on a port of the system's choosing: by default it takes 12112, which a second
  // instance (another test file's, at the same time) then fails to get, and exits.
  const child = spawn(binary, ['-http-addr', `127.0.0.1:${mockPort}`, '-https-addr', '127.0.0.1:'], { stdio: 'ignore' });
  await waitListening(mockPort, child);

  const calls: StripeCall[] = [];
  const received: Omit<StripeCall, 'status' | 'response'>[] = [];
  const answers: number[] = [];
  let held: (() => void)[] | undefined;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push({ method: req.method!, path: req.url!, headers: req.headers, form: new URLSearchParams(body.toString()) });
      if (held) {
        held.push(() => answer());
        return;
      }
      answer();
    });
    const answer = () => {
      const body = Buffer.concat(chunks);
      const record = (status: number, response: string) =>
        calls.push({
          method: req.method!,
          path: req.url!,
          headers: req.headers,
          form: new URLSearchParams(body.toString()),
          status,
          response,
        });
      const refused = mock.subscriptionPages?.refused;
      const own = answers.shift() ?? (refused !== undefined && pageOf(req.method!, req.url!) === refused ? 401 : undefined);
      if (own !== undefined) {
        const response = JSON.stringify({
          error: { type: own === 429 ? 'rate_limit_error' : 'api_error', message: `recorder answered ${own}` },
        });
        record(own, response);
        res.writeHead(own, { 'content-type': 'application/json' }).end(response);
        return;
      }
      const forward = request(
        { host: '127.0.0.1', port: mockPort, method: req.method, path: req.url, headers: req.headers },
        (upstream) => {
          const parts: Buffer[] = [];
          upstream.on('data', (chunk: Buffer) => parts.push(chunk));
          upstream.on('end', () => {
            const response = paged(req.method!, req.url!, upstream.statusCode!, Buffer.concat(parts));
            record(upstream.statusCode!, response.toString());
            const { 'content-length': _, ...headers } = upstream.headers;
            res.writeHead(upstream.statusCode!, headers).end(response);
          });
        },
      );
      forward.on('error', () => res.destroy());
      forward.end(body);
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  /** Which of mock.subscriptionPages a list call asks for, by its `starting_after`; undefined for any other call. */
  const pageOf = (method: string, url: string): number | undefined => {
    const [path, query] = url.split('?');
    if (!mock.subscriptionPages || method !== 'GET' || path !== '/v1/subscriptions') return undefined;
    const after = new URLSearchParams(query).get('starting_after');
    const page = after === null ? 0 : Number(/^sub_page(\d+)x\d+$/.exec(after)?.[1] ?? NaN) + 1;
    if (!Number.isInteger(page)) throw new Error(`starting_after ${after} names no subscription of the pages`);
    return page;
  };

  /** stripe-mock's answer to a subscriptions list, as the page `starting_after` asks for (mock.subscriptionPages). */
  const paged = (method: string, url: string, status: number, response: Buffer): Buffer => {
    const pages = mock.subscriptionPages;
    if (!pages || pageOf(method, url) === undefined || status !== 200) return response;
    const page = pageOf(method, url)!;
    const list = JSON.parse(response.toString()) as { data: { id: string }[]; has_more: boolean };
    const [fixture] = list.data;
    list.data = Array.from({ length: page < pages.pages ? pages.perPage : 0 }, (_, i) => ({ ...fixture!, id: `sub_page${page}x${i}` }));
    list.has_more = page + 1 < pages.pages;
    return Buffer.from(JSON.stringify(list));
  };

  const stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  const mock: StripeMock = {
    base: `http://127.0.0.1:${port}`,
    subscriptionPages: undefined,
    calls,
    received,
    answers,
    hold: () => {
      held ??= [];
    },
    release: () => {
      const waiting = held ?? [];
      held = undefined;
      for (const answer of waiting) answer();
    },
    invalid: () => calls.filter((c) => c.status === 400 && c.response.includes('invalid_request_error')),
    stop,
    start: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    close: async () => {
      if (server.listening) await stop();
      child.kill('SIGKILL');
    },
  };
  return mock;
}
