import { createOpenApiBackend } from '../src/http/openapi.js';
import type { AuthService } from '../src/auth/auth.service.js';
import type { OperationHandlers } from '../src/request-context/request-context.js';
const merchant = { id: 'm1', apiKeyId: 'k1' };
const auth = { authenticate: async () => merchant } as unknown as AuthService;
const noop = async () => undefined;
const handlers = { pauseSubscription: noop } as unknown as OperationHandlers;
const api = await createOpenApiBackend(auth, handlers, { requests: undefined, authFailures: undefined });
const headers = { host: '127.0.0.1:1234', 'x-api-key': 'sk_live_abcdefabcdefabcdef', 'content-type': 'application/json', 'content-length': '2', connection: 'keep-alive' };
for (let round = 0; round < 4; round++) {
  const n = 50000; const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await api.handleRequest({ method: 'POST', path: '/v2/subscriptions/6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60/pause', query: '', headers, body: {} }, { state: {}, ip: '1' });
  console.log((Number(process.hrtime.bigint() - t) / n / 1000).toFixed(2), 'µs per handleRequest');
}
