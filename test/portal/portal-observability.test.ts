/**
 * A portal link's token is a credential (issue 47): it never reaches the traces, the metrics or
 * the logs. Spans are caught by an in-memory exporter (as test/observability/tracing.test.ts does), metrics read
 * from /metrics, logs from the service's own lines, after a customer has opened the page, paused
 * and hit a 404.
 */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushTracing, startTracing, stopTracing } from '../../src/observability/tracing.js';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

const exporter = new InMemorySpanExporter();
let t: TestService;
beforeAll(async () => {
  startTracing({ exporter, simple: true });
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
  await stopTracing();
});

describe('the token in traces, metrics and logs', () => {
  it('appears in none of them: spans and log lines name the route /portal/:token, metrics count it under "portal"', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const made = await call(t.baseUrl, `/v2/subscriptions/${id}/portal-links`, { apiKey });
    const url: string = made.body.url;
    const token = url.split('/portal/')[1]!;
    const page = await (await fetch(url)).text();
    const csrf = /name="csrf" value="([^"]*)"/.exec(page)?.[1];
    const posted = await fetch(`${url}/pause`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${csrf}&days=7`,
      redirect: 'manual',
    });
    expect(posted.status).toBe(303);
    expect((await fetch(`${url}x`)).status).toBe(404);
    await flushTracing();

    const spans = exporter.getFinishedSpans();
    const paths = spans.map((s) => s.attributes['url.path']).filter((p) => typeof p === 'string' && p.startsWith('/portal'));
    expect(paths).toEqual(['/portal/:token', '/portal/:token/pause', '/portal/:token']);
    expect(JSON.stringify(spans.map((s) => [s.name, s.attributes, s.events]))).not.toContain(token);

    const metrics = await (await fetch(`${t.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/subsvc_http_requests_total\{[^}]*operation="portal"[^}]*status="200"[^}]*\} [1-9]/);
    expect(metrics).not.toContain(token.slice(0, 12));

    expect(JSON.stringify(t.logLines)).not.toContain(token.slice(0, 12));
    expect(t.logLines.filter((l) => typeof l.path === 'string' && l.path.startsWith('/portal')).map((l) => l.path)).toEqual([
      '/portal/:token',
      '/portal/:token/pause',
      '/portal/:token',
    ]);
  });
});
