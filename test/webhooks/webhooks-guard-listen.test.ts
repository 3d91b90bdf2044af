/** The SSRF guard as shipped (private URLs refused unless allowed) and `subsvc webhooks listen` as a developer runs it. */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/lib/net.js';
import { call } from '../support/http.js';
import { databaseUri, startTestService, type TestService } from '../support/service.js';

let guarded: TestService;
let open: TestService;
beforeAll(async () => {
  // As with MONGODB_URI set (the default then): only https URLs resolving to public addresses.
  guarded = await startTestService({ webhooksAllowPrivateUrls: false });
  open = await startTestService({ workers: 1, webhookRetryDelaysMs: [300] });
});
afterAll(async () => {
  await guarded.close();
  await open.close();
});

describe('no server-side request forgery', () => {
  it('refuses http, and URLs resolving to loopback, private or link-local addresses, with 400 0044', async () => {
    const { apiKey } = await guarded.merchant();
    for (const url of [
      'http://example.com/hooks',
      'https://127.0.0.1/hooks',
      'https://localhost/hooks',
      'https://10.0.0.7/hooks',
      'https://169.254.169.254/latest',
      'https://[::1]/hooks',
      'https://user:pw@example.com/',
    ]) {
      const res = await call(guarded.baseUrl, '/v2/webhook-endpoints', { method: 'POST', apiKey, json: { url, events: ['*'] } });
      expect([url, res.status, res.body.code]).toEqual([url, 400, '0044']);
    }
    expect((await call(guarded.baseUrl, '/v2/webhook-endpoints', { method: 'GET', apiKey })).body.data).toEqual([]);
  });
});

describe('subsvc webhooks listen', () => {
  it('registers a local endpoint, prints each delivery verified, and removes the endpoint when stopped', async () => {
    const { merchantId, apiKey } = await open.merchant();
    const port = await freePort();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/main/cli.ts', 'webhooks', 'listen', '--merchant', merchantId, '--port', String(port)],
      {
        env: { ...process.env, MONGODB_URI: databaseUri(open.db.databaseName) },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const next = async () => JSON.parse(String((await lines.next()).value));
    try {
      const first = await next();
      expect(first.listening).toBe(`http://127.0.0.1:${port}/`);
      const listed = await call(open.baseUrl, '/v2/webhook-endpoints', { method: 'GET', apiKey });
      expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([first.endpointId]);
      const [id] = await open.seed(merchantId, 1);
      await call(open.baseUrl, `/v2/subscriptions/${id}/pause`, { method: 'POST', apiKey });
      const printed = await next();
      expect(printed).toMatchObject({
        verified: true,
        event: { type: 'subscription.paused', data: { subscription: { id, status: 'paused' } } },
      });
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    expect((await call(open.baseUrl, '/v2/webhook-endpoints', { method: 'GET', apiKey })).body.data).toEqual([]);
  }, 60_000);
});
