/**
 * The TypeScript client layer (clients/typescript/src/layer) against the real service: retries that
 * apply a pause once (answers lost by a proxy, and the service's own Subsvc-Test-Outcome failures),
 * Retry-After honoured, a timeout per attempt, an iterator over every page, typed errors, and
 * webhook verification. Lost answers are made for real by a loopback proxy in front of the service
 * that forwards a request and answers 503 in its place (the service did the work; the client never heard).
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import {
  InvalidStatusTransitionError,
  listAll,
  ProblemError,
  ServiceUnavailableError,
  SubscriptionNotFoundError,
  SubsvcClient,
  verify,
  WebhookVerificationError,
} from '../../clients/typescript/src/index.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

interface LossyProxy {
  readonly baseUrl: string;
  /** The Idempotency-Key of each request that went through, in order. */
  readonly keys: (string | undefined)[];
  /** Answers 503 to the next `n` POSTs after forwarding them (the service applied them). */
  loseNext(n: number): void;
  close(): Promise<void>;
}

async function lossyProxy(target: string): Promise<LossyProxy> {
  const upstream = new URL(target);
  let toLose = 0;
  const keys: (string | undefined)[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      keys.push(req.headers['idempotency-key'] as string | undefined);
      const lose = req.method === 'POST' && toLose > 0;
      if (lose) toLose--;
      const forward = httpRequest(
        { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (c: Buffer) => body.push(c));
          answer.on('end', () => {
            if (lose) {
              res.writeHead(503, { 'content-type': 'application/problem+json' });
              res.end(
                JSON.stringify({ type: 'about:blank', title: 'Service unavailable', status: 503, detail: 'lost on purpose', code: '0910' }),
              );
              return;
            }
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(Buffer.concat(body));
          });
        },
      );
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    keys,
    loseNext: (n) => (toLose = n),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let svc: TestService;
let proxy: LossyProxy;
let merchant: { merchantId: string; apiKey: string; testApiKey: string };
let client: SubsvcClient;

beforeAll(async () => {
  svc = await startTestService();
  merchant = await svc.merchant();
  proxy = await lossyProxy(svc.baseUrl);
  client = new SubsvcClient({ apiKey: merchant.apiKey, baseUrl: proxy.baseUrl, initialDelayMs: 20 });
});

afterAll(async () => {
  await proxy?.close();
  await svc?.close();
});

describe('the TypeScript client layer against the service', () => {
  it('applies a pause once when its first two answers are lost, and answers 200', async () => {
    const [id] = await svc.seed(merchant.merchantId, 1, 'fulfilled');
    proxy.loseNext(2);
    const before = proxy.keys.length;
    const paused = await client.subscriptions.pauseSubscription({ subscriptionId: id! });
    expect(paused.status).toBe('paused');
    const keys = proxy.keys.slice(before);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    const events = await waitFor(
      async () => (await client.events.listEvents({ subscriptionId: id! })).data.filter((e) => e.type === 'subscription.paused'),
      (found) => found.length > 0,
      20_000,
      100,
      'the pause event',
    );
    expect(events).toHaveLength(1);
  });

  it('gives up after maxRetries and throws the last answer as its type', async () => {
    const [id] = await svc.seed(merchant.merchantId, 1, 'fulfilled');
    const once = new SubsvcClient({ apiKey: merchant.apiKey, baseUrl: proxy.baseUrl, initialDelayMs: 20, maxRetries: 1 });
    proxy.loseNext(2);
    const error = await once.subscriptions.pauseSubscription({ subscriptionId: id! }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProblemError);
    expect((error as ProblemError).status).toBe(503);
    expect((error as ProblemError).code).toBe('0910');
  });

  it('sends a pause through Subsvc-Test-Outcome unavailable:2: 200, applied once (one event); with maxRetries 1, the 503 as its type', async () => {
    const test = new SubsvcClient({ apiKey: merchant.testApiKey, baseUrl: svc.baseUrl, initialDelayMs: 20 });
    const [made, other] = (await test.testHelpers.createTestSubscriptions({ testSubscriptionsCreate: { count: 2 } })).data;
    const paused = await test.subscriptions.pauseSubscription({ subscriptionId: made!.id, subsvcTestOutcome: 'unavailable:2' });
    expect(paused.status).toBe('paused');
    const events = await waitFor(
      async () => (await test.events.listEvents({ subscriptionId: made!.id })).data.filter((e) => e.type === 'subscription.paused'),
      (found) => found.length > 0,
      20_000,
      100,
      'the pause event',
    );
    expect(events).toHaveLength(1);
    const once = new SubsvcClient({ apiKey: merchant.testApiKey, baseUrl: svc.baseUrl, initialDelayMs: 20, maxRetries: 1 });
    const error = await once.subscriptions
      .pauseSubscription({ subscriptionId: other!.id, subsvcTestOutcome: 'unavailable:2' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect((await test.subscriptions.getSubscription({ subscriptionId: other!.id })).status).toBe('fulfilled');
  });

  it('waits out rate_limited:2 as Retry-After says (1 s each), then answers 200', async () => {
    const test = new SubsvcClient({ apiKey: merchant.testApiKey, baseUrl: svc.baseUrl, initialDelayMs: 20 });
    const [made] = (await test.testHelpers.createTestSubscriptions({ testSubscriptionsCreate: { count: 1 } })).data;
    const started = Date.now();
    const paused = await test.subscriptions.pauseSubscription({ subscriptionId: made!.id, subsvcTestOutcome: 'rate_limited:2' });
    expect(paused.status).toBe('paused');
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
  });

  it('abandons an attempt that outlasts its timeout, retries it, then fails', async () => {
    const attempts: string[] = [];
    const silent = createServer((req) => attempts.push(String(req.headers['idempotency-key'])));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as AddressInfo).port;
      const hung = new SubsvcClient({
        apiKey: merchant.apiKey,
        baseUrl: `http://127.0.0.1:${port}`,
        timeoutMs: 200,
        maxRetries: 1,
        initialDelayMs: 20,
      });
      const started = Date.now();
      await expect(hung.subscriptions.pauseSubscription({ subscriptionId: crypto.randomUUID() })).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(5000);
      expect(attempts).toHaveLength(2);
      expect(new Set(attempts).size).toBe(1);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('iterates over every page of 250 subscriptions, each once', async () => {
    const other = await svc.merchant();
    const ids = await svc.seed(other.merchantId, 250, 'fulfilled');
    const own = new SubsvcClient({ apiKey: other.apiKey, baseUrl: svc.baseUrl });
    const seen: string[] = [];
    for await (const s of listAll((p) => own.subscriptions.listSubscriptions(p), { limit: 100 })) seen.push(s.id);
    expect(seen).toHaveLength(250);
    expect(new Set(seen)).toEqual(new Set(ids));
  });

  it('throws a conflict as InvalidStatusTransitionError with its status, code, detail and request id', async () => {
    const [id] = await svc.seed(merchant.merchantId, 1, 'cancelled');
    const error = await client.subscriptions.pauseSubscription({ subscriptionId: id! }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidStatusTransitionError);
    const problem = error as InvalidStatusTransitionError;
    expect([problem.status, problem.code]).toEqual([409, '0030']);
    expect(problem.detail).not.toBe('');
    expect(problem.requestId).toMatch(/\S/);
    const missing = await client.subscriptions.getSubscription({ subscriptionId: crypto.randomUUID() }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(SubscriptionNotFoundError);
  });
});

describe('webhook verification', () => {
  const secret = `whsec_${Buffer.from('a secret of 24 bytes!!!!').toString('base64')}`;
  const body = JSON.stringify({
    type: 'subscription.paused',
    timestamp: '2026-12-06T10:00:00.000000Z',
    livemode: true,
    data: { subscription: { id: crypto.randomUUID(), status: 'paused' } },
  });
  const signed = (at: Date) => {
    const id = `msg_${crypto.randomUUID()}`;
    return {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, at, body),
    };
  };

  it('accepts a good signature and gives the typed event', async () => {
    const event = await verify(body, signed(new Date()), secret);
    expect(event.type).toBe('subscription.paused');
    expect(event.livemode).toBe(true);
  });

  it('refuses a bad signature and an old timestamp', async () => {
    const headers = signed(new Date());
    await expect(verify(body.replace('paused', 'resumed'), headers, secret)).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(verify(body, signed(new Date(Date.now() - 10 * 60_000)), secret)).rejects.toBeInstanceOf(WebhookVerificationError);
  });
});
