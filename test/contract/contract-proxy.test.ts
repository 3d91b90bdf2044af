/**
 * The proxy the installed clients' scenarios go through (scripts/clients/test.ts): an answer within
 * the contract reaches the client unchanged; one that breaks it becomes a 502 naming the violation.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContractProxy, type ContractProxy } from '../support/contract-proxy.js';

const NOT_FOUND = {
  type: 'urn:subsvc:problem:subscription-not-found',
  title: 'Subscription not found',
  status: 404,
  detail: 'Subscription abc not found',
  code: '0020',
};

let upstream: Server;
let proxy: ContractProxy;
beforeAll(async () => {
  // An upstream that answers GET /v2/subscriptions/{id} within the contract (404 problem) or, asked with `x-break`, outside it.
  upstream = createServer((request, response) => {
    if (request.headers['x-break']) response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'abc' }));
    else response.writeHead(404, { 'content-type': 'application/problem+json', 'x-request-id': 'r-1' }).end(JSON.stringify(NOT_FOUND));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  proxy = await startContractProxy(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
});
afterAll(async () => {
  await proxy?.stop();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe('the contract-checking proxy', () => {
  it('relays an answer within the contract unchanged: status, headers and body', async () => {
    const answer = await fetch(`${proxy.baseUrl}/v2/subscriptions/abc`);
    expect([answer.status, answer.headers.get('content-type'), answer.headers.get('x-request-id')]).toEqual([
      404,
      'application/problem+json',
      'r-1',
    ]);
    expect(await answer.json()).toEqual(NOT_FOUND);
    expect(proxy.violations).toEqual([]);
  });

  it('turns an answer that breaks the contract into a 502 naming the violation, and records it', async () => {
    const answer = await fetch(`${proxy.baseUrl}/v2/subscriptions/abc`, { headers: { 'x-break': '1' } });
    expect(answer.status).toBe(502);
    const problem = (await answer.json()) as { detail: string };
    expect(problem.detail).toMatch(/^GET \/v2\/subscriptions\/abc → 200: .*must have required property/);
    expect(proxy.violations).toHaveLength(1);
    expect(proxy.violations[0]).toMatch(/^GET \/v2\/subscriptions\/abc → 200: /);
  });
});
