/**
 * `npx tsx scripts/profile/handle-request.ts`: what openapi-backend's request flow costs the service
 * per request, without HTTP or a database: a single pause through `handleRequest` (parses,
 * routing, both security handlers, validation) to a handler that does nothing, the API key
 * resolved at once. Four rounds of 50,000; the first ones warm up (docs/performance.md).
 */
import type { AuthService } from '../../src/auth/auth.service.js';
import { createOpenApiBackend } from '../../src/http/openapi.js';
import type { OperationHandlers } from '../../src/request-context/request-context.js';

const merchant = { id: 'm1', apiKeyId: 'k1' };
const auth = { authenticate: async () => merchant } as unknown as AuthService;
const handlers = { pauseSubscription: async () => undefined } as unknown as OperationHandlers;
const api = await createOpenApiBackend(auth, handlers, { requests: undefined, authFailures: undefined });
const headers = {
  host: '127.0.0.1:1234',
  'x-api-key': 'sk_live_abcdefabcdefabcdef',
  'content-type': 'application/json',
  'content-length': '2',
  connection: 'keep-alive',
};
const path = '/v2/subscriptions/6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60/pause';
for (let round = 1; round <= 4; round++) {
  const n = 50_000;
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++)
    await api.handleRequest({ method: 'POST', path, query: '', headers, body: {} }, { state: {}, ip: '127.0.0.1' });
  console.log(`round ${round}: ${(Number(process.hrtime.bigint() - started) / n / 1000).toFixed(2)} µs per request`);
}
