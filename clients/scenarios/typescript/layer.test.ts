/**
 * The client layer of @subsvc/client as a merchant uses it, against the target SUBSVC_TARGET names
 * (scripts/clients/test.ts): retries through lost answers, every page of a list, typed errors and
 * webhook verification. The same scenarios in Python, Go and Java: clients/scenarios/*.
 * Lost answers are made for real by a loopback proxy in front of the target: it forwards a request,
 * then answers 503 in place of the target's answer (the target did the work; the client never heard).
 */
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { InvalidStatusTransitionError, listAll, SubsvcClient, verify, WebhookVerificationError } from '@subsvc/client';
import { Webhook } from 'standardwebhooks';

interface Target {
  readonly name: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly stateful: boolean;
  /** The same merchant's test-mode key (sk_test_…), which Subsvc-Test-Outcome needs. */
  readonly testApiKey: string;
  /** Subscriptions for these scenarios alone (scenarios.test.ts takes from `ids`). */
  readonly layerIds: Record<'fulfilled' | 'cancelled', string[]>;
  /** A merchant with `listCount` subscriptions and nothing else (any key on the mock, with a count of null). */
  readonly listApiKey: string;
  readonly listCount: number | null;
}

const target = JSON.parse(readFileSync(process.env.SUBSVC_TARGET!, 'utf8')) as Target;
// The mock answers what it is asked for; an error's body is problem+json, so Accept names it.
const mockHeaders = (prefer: string) =>
  target.stateful ? undefined : { Prefer: prefer, Accept: 'application/json, application/problem+json' };

function take(status: keyof Target['layerIds']): string {
  const id = target.layerIds[status].shift();
  if (!id) throw new Error(`the target has no ${status} subscription left`);
  return id;
}

/** The subscription's subscription.paused events, once there is one (events are recorded just after the change). */
async function pausedEvents(client: SubsvcClient, subscriptionId: string): Promise<number> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const events = await client.events.listEvents({ subscriptionId });
    const count = events.data.filter((e) => e.type === 'subscription.paused').length;
    if (count > 0 || Date.now() > deadline) return count;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Forwards every request to the target; answers 503 in place of the target's answer to the next `lose` POSTs. */
const proxy = {
  lose: 0,
  keys: [] as (string | undefined)[],
  server: createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      proxy.keys.push(req.headers['idempotency-key'] as string | undefined);
      const lost = req.method === 'POST' && proxy.lose > 0;
      if (lost) proxy.lose--;
      const upstream = new URL(target.baseUrl);
      const forward = httpRequest(
        { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (c: Buffer) => body.push(c));
          answer.on('end', () => {
            if (lost) {
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
  }),
  url: () => `http://127.0.0.1:${(proxy.server.address() as AddressInfo).port}`,
};

before(() => new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve)));
after(() => new Promise<void>((resolve) => proxy.server.close(() => resolve())));

describe(`the client layer of @subsvc/client against ${target.name}`, () => {
  it('retries a pause whose first two answers are lost with one Idempotency-Key: 200, applied once (one event)', async () => {
    const client = new SubsvcClient({ apiKey: target.apiKey, baseUrl: proxy.url(), initialDelayMs: 20 });
    const id = take('fulfilled');
    proxy.lose = 2;
    const before = proxy.keys.length;
    const paused = await client.subscriptions.pauseSubscription({ subscriptionId: id });
    assert.equal(paused.status, 'paused');
    const keys = proxy.keys.slice(before);
    assert.equal(keys.length, 3);
    assert.equal(new Set(keys).size, 1);
    assert.match(keys[0] ?? '', /^[0-9a-f-]{36}$/);
    if (target.stateful) assert.equal(await pausedEvents(client, id), 1);
  });

  it(
    'sends a pause through Subsvc-Test-Outcome unavailable:2: retried with one Idempotency-Key, 200, applied once (one event)',
    { skip: target.stateful ? false : 'the mock has no failures on demand: the service only' },
    async () => {
      const client = new SubsvcClient({ apiKey: target.testApiKey, baseUrl: target.baseUrl, initialDelayMs: 20 });
      const [made] = (await client.testHelpers.createTestSubscriptions({ testSubscriptionsCreate: { count: 1 } })).data;
      const paused = await client.subscriptions.pauseSubscription({ subscriptionId: made!.id, subsvcTestOutcome: 'unavailable:2' });
      assert.equal(paused.status, 'paused');
      assert.equal(await pausedEvents(client, made!.id), 1);
    },
  );

  it('iterates over every page of a list, each subscription once', async () => {
    const client = new SubsvcClient({ apiKey: target.listApiKey, baseUrl: target.baseUrl });
    const seen: string[] = [];
    for await (const s of listAll((p) => client.subscriptions.listSubscriptions(p), { limit: 100 })) seen.push(s.id);
    assert.equal(new Set(seen).size, seen.length);
    if (target.listCount !== null) assert.equal(seen.length, target.listCount);
    else assert.ok(seen.length > 0);
  });

  it('throws a conflict as InvalidStatusTransitionError: status, code, detail and request id', async () => {
    const client = new SubsvcClient({ apiKey: target.apiKey, baseUrl: target.baseUrl, headers: mockHeaders('code=409') });
    const error: unknown = await client.subscriptions.pauseSubscription({ subscriptionId: take('cancelled') }).catch((e: unknown) => e);
    assert.ok(error instanceof InvalidStatusTransitionError, `expected InvalidStatusTransitionError, got ${String(error)}`);
    assert.deepEqual([error.status, error.code], [409, '0030']);
    assert.notEqual(error.detail, '');
    if (target.stateful) assert.match(error.requestId ?? '', /\S/);
  });

  describe('verify', () => {
    const secret = `whsec_${Buffer.from(randomUUID()).toString('base64')}`;
    const body = JSON.stringify({
      type: 'subscription.paused',
      timestamp: '2026-12-06T10:00:00.000000Z',
      livemode: true,
      data: {
        subscription: {
          id: '6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60',
          merchantId: '0b7e4c1a-2d3f-4e5a-8b9c-0d1e2f3a4b5c',
          planId: '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f',
          status: 'paused',
          cycle: 3,
          createdAt: '2026-11-01T08:00:00.000000Z',
          modifiedAt: '2026-12-06T10:00:00.000000Z',
          livemode: true,
        },
        previousStatus: 'fulfilled',
        cause: { kind: 'api' },
      },
    });
    const signed = (at: Date) => {
      const id = `msg_${randomUUID()}`;
      return {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign(id, at, body),
      };
    };

    it('accepts a good signature and gives the typed event', async () => {
      const event = await verify(body, signed(new Date()), secret);
      assert.equal(event.type, 'subscription.paused');
      assert.equal('previousStatus' in event.data ? event.data.previousStatus : undefined, 'fulfilled');
    });

    it('refuses a bad signature and an old timestamp with WebhookVerificationError', async () => {
      await assert.rejects(verify(body.replace('"cycle":3', '"cycle":4'), signed(new Date()), secret), WebhookVerificationError);
      const old = new Date(Date.now() - 10 * 60_000);
      await assert.rejects(verify(body, signed(old), secret), WebhookVerificationError);
      const forged = createHmac('sha256', 'not the secret')
        .update(`msg_1.${Math.floor(Date.now() / 1000)}.${body}`)
        .digest('base64');
      await assert.rejects(
        verify(
          body,
          { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': `v1,${forged}` },
          secret,
        ),
        WebhookVerificationError,
      );
    });
  });
});
