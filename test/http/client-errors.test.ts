/**
 * What node:http refuses before the app sees a request (headers too large, bytes that are not
 * HTTP, an unknown method, headers too slow) is answered as problem+json with an X-Request-Id too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractViolations } from '../support/contract.js';
import { rawExchange } from '../support/raw-http.js';
import { startTestService, type TestService } from '../support/service.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ headersTimeoutMs: 500, requestTimeoutMs: 1_500 });
});
afterAll(() => t.close());

const pause = 'POST /v2/subscriptions/bulk/pause HTTP/1.1\r\nHost: x\r\n';

describe('requests node:http refuses', () => {
  it.each([
    ['headers over 16 KiB', 431, '0040', `${pause}x-padding: ${'a'.repeat(20 * 1024)}\r\n\r\n`],
    ['a control byte in a header value', 400, '0040', `${pause}x-api-key: sk_\u0001\r\n\r\n`],
    ['an unknown method', 400, '0040', 'FETCH /v2/subscriptions/bulk/pause HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['headers that never finish', 408, '0040', `${pause}x-api-key: sk_`],
  ])('%s: %i problem+json with an X-Request-Id, and the connection is closed', async (_name, status, code, request) => {
    const reply = await rawExchange(t.baseUrl, request);
    expect(reply.status).toBe(status);
    expect(reply.headers['content-type']).toBe('application/problem+json');
    expect(reply.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(reply.headers.connection).toBe('close');
    const body = JSON.parse(reply.body);
    expect(body).toMatchObject({ status, code });
    expect(await contractViolations({ method: 'GET', path: '/', status, contentType: reply.headers['content-type']!, body })).toEqual([]);
  });
});
