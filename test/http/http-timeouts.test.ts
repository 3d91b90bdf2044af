/** Slow or stalled clients are cut off with 408 and hold nothing open (HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS). */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkRequestsOf } from '../support/bulk.js';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

const HEADERS_TIMEOUT_MS = 500;
const REQUEST_TIMEOUT_MS = 1_500;
/** node:http checks its timeouts every min(1 s, HEADERS_TIMEOUT_MS) here (src/http/http-server.ts). */
const CHECK_EVERY_MS = Math.min(1_000, HEADERS_TIMEOUT_MS);
/**
 * When a timeout is over, the server answers by the next check; a loaded machine (2 cores shared by
 * several test runs) may take several times that. The bounds asserted are ordering (not before the
 * timeout) and this generous multiple, below the client's own guard.
 */
const LOADED = 4;
const CLIENT_GUARD_MS = 30_000;

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: REQUEST_TIMEOUT_MS });
});
afterAll(() => t.close());

/** Writes `text` on a raw connection and collects what the server sends until it closes. */
function rawExchange(text: string): Promise<{ reply: string; closedAfterMs: number }> {
  const { port } = new URL(t.baseUrl);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(text));
    let reply = '';
    socket.on('data', (chunk) => (reply += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve({ reply, closedAfterMs: Date.now() - started }));
    socket.setTimeout(CLIENT_GUARD_MS, () => socket.destroy(new Error('the server never closed the connection')));
  });
}

describe('HTTP timeouts', () => {
  it('headers that never finish answer 408 and the connection is closed', async () => {
    const { reply, closedAfterMs } = await rawExchange(`POST /v2/subscriptions/bulk/pause HTTP/1.1\r\nHost: x\r\nx-api-key: sk_`);
    expect(reply).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
    expect(closedAfterMs).toBeLessThan(LOADED * (HEADERS_TIMEOUT_MS + CHECK_EVERY_MS));
  });

  it('a body that never arrives answers 408, closes the connection, and nothing is queued or applied', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const body = JSON.stringify({ subscriptions: [id] });
    const head = `POST /v2/subscriptions/bulk/pause HTTP/1.1\r\nHost: x\r\nx-api-key: ${apiKey}\r\ncontent-type: application/json\r\ncontent-length: ${body.length + 10}\r\n\r\n`;
    const { reply, closedAfterMs } = await rawExchange(head + body);
    expect(reply).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(closedAfterMs).toBeLessThan(LOADED * (REQUEST_TIMEOUT_MS + CHECK_EVERY_MS));
    expect(await bulkRequestsOf(t.db, merchantId)).toBe(0);
    expect(await t.db.collection('subscriptions').findOne({ _id: id as never })).toMatchObject({ status: 'fulfilled' });
    // A client's stall is the client's problem: no error or warning in the service's log.
    expect(t.logLines.filter((line) => line.component === 'http' && Number(line.level) >= 40).map((line) => line.msg)).toEqual([]);
  });

  it('a prompt request on the same server is served as usual', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const res = await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('paused');
  });
});
