/**
 * Tracing as an operator turns it on: `subsvc serve` with OTEL_EXPORTER_OTLP_ENDPOINT exports
 * OTLP/HTTP (JSON) to a collector, here a loopback server in the test. The request's span continues
 * the caller's traceparent and the MongoDB instrumentation's spans are its children (the driver,
 * CommonJS, is instrumented because the CLI starts tracing before loading it).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeDomain } from '../../src/main/composition.js';
import { loadConfig } from '../../src/config.js';
import { connectDatabase, type Database } from '../../src/db/mongo.js';
import { createLogger } from '../../src/logger.js';
import { call } from '../support/http.js';
import { databaseUri } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { startServe, type ServeProcess } from '../support/worker-process.js';

interface ExportedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
}

let collector: Server;
let collectorUrl: string;
const exported: ExportedSpan[] = [];
let database: Database;
let uri: string;
let serve: ServeProcess | undefined;

beforeAll(async () => {
  collector = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const body = JSON.parse(text) as { resourceSpans: { scopeSpans: { spans: ExportedSpan[] }[] }[] };
        for (const r of body.resourceSpans) for (const s of r.scopeSpans) exported.push(...s.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  uri = databaseUri(`test_otlp_${randomUUID().slice(0, 8)}`);
  database = await connectDatabase(uri, { dbTimeoutMs: 10_000, bulkDbTimeoutMs: 10_000 }, createLogger('silent'));
});
afterAll(async () => {
  await serve?.stop();
  await database.db.dropDatabase().catch(() => undefined);
  await database.close();
  await new Promise((resolve) => collector.close(resolve));
});

describe('subsvc serve with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it(
    'exports the request span, continuing traceparent, with the MongoDB commands as its children; logs carry trace_id',
    { timeout: 60_000 },
    async () => {
      serve = await startServe(uri, { BULK_CONCURRENCY: '0', OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl, OTEL_BSP_SCHEDULE_DELAY: '100' });
      const domain = await composeDomain(database, loadConfig({}));
      const { merchantId, apiKey } = await domain.auth.createMerchant('otlp');
      const [id] = (await domain.seeder.seed({ merchantId, count: 1, status: 'fulfilled' })).map((s) => s.id);
      const traceId = randomBytes(16).toString('hex');
      const caller = randomBytes(8).toString('hex');

      const res = await call(serve.baseUrl, `/v2/subscriptions/${id}/pause`, {
        apiKey,
        headers: { traceparent: `00-${traceId}-${caller}-01` },
      });
      expect(res.status).toBe(200);
      const spans = await waitFor(
        async () => exported.filter((s) => s.traceId === traceId),
        (found) => found.some((s) => s.name === 'POST pauseSubscription') && found.length >= 2,
        20_000,
      );
      const server = spans.find((s) => s.name === 'POST pauseSubscription');
      expect(server?.parentSpanId).toBe(caller);
      const commands = spans.filter((s) => s.parentSpanId === server!.spanId);
      // The API key's lookup, and the pause's conditional update (the instrumentation names it `findAndModify $cmd`).
      const names = commands.map((s) => s.name);
      expect(names, JSON.stringify(spans.map((s) => s.name))).toContain('find merchants');
      expect(names.some((n) => n.startsWith('findAndModify'))).toBe(true);
      expect(serve.lines.some((l) => l.msg === 'request completed' && l.trace_id === traceId && l.span_id === server!.spanId)).toBe(true);
    },
  );
});
