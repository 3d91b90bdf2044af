/**
 * Handlers typed from the spec (src/request-context/request-context.ts): what the type checker
 * refuses (each `@ts-expect-error` fails `tsc` the day the types stop refusing it), and what the
 * adapter hands to a handler and writes back, through openapi-backend's routing and validation.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { OpenApi31Backend } from '../../src/http/openapi.js';
import { loadSpec } from '../../src/lib/spec.js';
import { operationHandler, type Handler, type Request } from '../../src/request-context/request-context.js';

const subscription = {
  id: '6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60',
  merchantId: '0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a',
  planId: '5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d',
  livemode: true,
  status: 'paused' as const,
  cycle: 3,
  createdAt: '2026-09-01T08:00:00.000000Z',
  modifiedAt: '2026-11-22T10:15:30.123456Z',
};

describe('typed handlers', () => {
  it('refuse, at compile time, a status or a body the operation does not have, and parameters it does not take', () => {
    // @ts-expect-error getSubscription answers 200, never 201
    const wrongStatus: Handler<'getSubscription'> = async () => ({ status: 201, body: subscription });
    // @ts-expect-error a subscription's status is one of the spec's enum
    const wrongBody: Handler<'getSubscription'> = async () => ({ status: 200, body: { ...subscription, status: 'active' } });
    const wrongParam: Handler<'getEvent'> = async ({ params }) => {
      // @ts-expect-error getEvent's path has eventId, not subscriptionId
      void params.subscriptionId;
      throw new Error('not called');
    };
    const typedBody = (request: Request<'pauseSubscription'>) => {
      // @ts-expect-error pauseAt is a string (a date-time), as the spec says
      const n: number | undefined = request.body.pauseAt;
      return n;
    };
    const typedQuery = (request: Request<'listSubscriptions'>) => {
      // @ts-expect-error the status filter is the spec's enum
      const s: 'active' | undefined = request.query.status;
      return s;
    };
    expect([wrongStatus, wrongBody, wrongParam, typedBody, typedQuery]).toHaveLength(5);
  });

  it('get the validated body and decoded path parameter, and their reply is written with its status, body and headers', async () => {
    const api = new OpenApi31Backend({ definition: loadSpec(), quick: true });
    const merchant = { id: subscription.merchantId, apiKeyId: '01937a1c-5b2e-7c4d-8e9f-0a1b2c3d4e71' };
    const seen: Request<'pauseSubscription'>[] = [];
    api.register({
      pauseSubscription: operationHandler<'pauseSubscription'>(async (request) => {
        seen.push(request);
        return { status: 200, body: { ...subscription, id: request.params.subscriptionId }, headers: { 'X-Seen': 'yes' } };
      }),
      notFound: () => {
        throw new Error('not routed');
      },
      validationFail: (c) => {
        throw new Error(JSON.stringify(c.validation.errors));
      },
    });
    api.registerSecurityHandler('ApiKey', () => merchant);
    api.registerSecurityHandler('ApiKeyUnderscore', () => undefined);
    await api.init();
    const headers: Record<string, string> = {};
    const ctx = {
      status: 404,
      body: undefined as unknown,
      set: (name: string, value: string) => void (headers[name] = value),
      res: new EventEmitter(),
    };
    const resumeAt = '2027-01-01T00:00:00Z';
    await api.handleRequest(
      {
        method: 'POST',
        path: `/v2/subscriptions/${encodeURIComponent(subscription.id)}/pause`,
        headers: { 'content-type': 'application/json' },
        body: { resumeAt },
      },
      ctx,
    );
    expect(seen.map(({ operationId, merchant: m, params, body }) => ({ operationId, merchant: m.id, params, body }))).toEqual([
      { operationId: 'pauseSubscription', merchant: merchant.id, params: { subscriptionId: subscription.id }, body: { resumeAt } },
    ]);
    // The JSON type is written with the body (the one Koa would give it), the reply's own headers beside it.
    expect({ status: ctx.status, body: ctx.body, headers }).toEqual({
      status: 200,
      body: subscription,
      headers: { 'Content-Type': 'application/json; charset=utf-8', 'X-Seen': 'yes' },
    });
  });
});
