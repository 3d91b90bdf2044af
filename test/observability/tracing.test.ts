/**
 * OpenTelemetry traces (src/observability/tracing.ts) with an in-memory exporter: a bulk request
 * sent with a W3C `traceparent` continues that trace into its chunk and into the webhook
 * deliveries of the changes it made (each POST carrying the delivery span's `traceparent`), and
 * log lines carry trace_id and span_id. The database spans of the MongoDB instrumentation need the
 * driver loaded after tracing starts, which a test process cannot arrange (vitest loads the driver
 * first): test/observability/tracing-process.test.ts checks them on a `subsvc serve` process exporting OTLP.
 * Small requests applied together in one run (src/bulk/bulk.worker.ts) each continue their own
 * request's trace.
 */
import { randomBytes } from 'node:crypto';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushTracing, startTracing, stopTracing } from '../../src/observability/tracing.js';
import { call } from '../support/http.js';
import { registeredReceiver, startReceiver, type Receiver } from '../support/receiver.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

const exporter = new InMemorySpanExporter();
let t: TestService;
let receiver: Receiver;
beforeAll(async () => {
  startTracing({ exporter, simple: true });
  t = await startTestService({ workers: 2 });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
  await stopTracing();
});

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('traces', () => {
  it('request → bulk chunk → webhook delivery: one trace, continuing the caller’s traceparent', { timeout: 60_000 }, async () => {
    const { merchantId, apiKey } = await t.merchant();
    const created = await call(t.baseUrl, '/v2/webhook-endpoints', { method: 'POST', apiKey, json: { url: receiver.url, events: ['*'] } });
    receiver.secret = created.body.secret;
    const ids = await t.seed(merchantId, 3);
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');

    const bulk = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', {
      apiKey,
      json: { subscriptions: ids },
      headers: { traceparent: `00-${traceId}-${callerSpanId}-01` },
    });
    expect(bulk.status).toBe(202);
    // Three subscription.paused and the bulk_request.completed.
    await waitFor(
      async () => receiver.received.length,
      (n) => n >= 4,
      30_000,
    );
    // Each delivery's span ends once its answer is in (after the receiver saw the POST).
    const ended = () => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    await waitFor(
      async () => ended().filter((s) => s.name === 'webhook delivery').length,
      (n) => n >= 4,
      10_000,
    );
    await flushTracing();
    const spans = ended();

    const server = spans.find((s) => s.name === 'POST bulkPauseSubscriptions');
    expect(server, spans.map((s) => s.name).join(', ')).toBeDefined();
    expect(parentOf(server!)).toBe(callerSpanId);
    expect(server!.attributes['http.response.status_code']).toBe(202);
    const chunks = spans.filter((s) => s.name === 'bulk chunk');
    expect(chunks).toHaveLength(1);
    expect(parentOf(chunks[0]!)).toBe(server!.spanContext().spanId);
    const deliveries = spans.filter((s) => s.name === 'webhook delivery');
    expect(deliveries.length).toBeGreaterThanOrEqual(4);
    for (const delivery of deliveries) expect(parentOf(delivery)).toBe(chunks[0]!.spanContext().spanId);

    // Each POST continued the delivery's span.
    const deliverySpanIds = new Set(deliveries.map((d) => d.spanContext().spanId));
    const sent = receiver.received.filter((r) => r.traceparent?.split('-')[1] === traceId);
    expect(sent).toHaveLength(receiver.received.length);
    for (const r of sent) expect(deliverySpanIds.has(r.traceparent!.split('-')[2]!)).toBe(true);

    // Log lines written while serving it, and while applying the chunk, carry the ids.
    const completed = t.logLines.find((l) => l.msg === 'request completed' && l.trace_id === traceId);
    expect(completed).toMatchObject({ span_id: server!.spanContext().spanId });
    expect(
      t.logLines.some((l) => l.msg === 'bulk command applied' && l.trace_id === traceId && l.span_id === chunks[0]!.spanContext().spanId),
    ).toBe(true);
  });

  it('a request without traceparent starts a trace of its own; a single pause’s delivery continues it', { timeout: 60_000 }, async () => {
    const { merchantId, apiKey } = await t.merchant();
    const created = await call(t.baseUrl, '/v2/webhook-endpoints', { method: 'POST', apiKey, json: { url: receiver.url, events: ['*'] } });
    receiver.secret = created.body.secret;
    const [id] = await t.seed(merchantId, 1);
    const before = receiver.received.length;
    expect((await call(t.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey })).status).toBe(200);
    await waitFor(
      async () => receiver.received.length,
      (n) => n > before,
      30_000,
    );
    await flushTracing();
    const server = exporter
      .getFinishedSpans()
      .find((s) => s.name === 'POST pauseSubscription' && s.attributes['url.path'] === `/v2/subscriptions/${id}/pause`);
    expect(server).toBeDefined();
    expect(parentOf(server!)).toBeUndefined();
    const traceId = server!.spanContext().traceId;
    // The delivery's span ends once its answer is in (after the receiver saw the POST).
    const delivery = await waitFor(
      async () => exporter.getFinishedSpans().find((s) => s.name === 'webhook delivery' && s.spanContext().traceId === traceId),
      (found) => found !== undefined,
      10_000,
    );
    expect(delivery && parentOf(delivery)).toBe(server!.spanContext().spanId);
    expect(receiver.received.at(-1)!.traceparent?.split('-')[1]).toBe(traceId);
  });

  it(
    'requests applied together in one run each continue their own trace: their chunk span, their log lines, their changes’ deliveries and their completion’s',
    { timeout: 120_000 },
    async () => {
      // Queued while no worker runs (an HTTP-only service on a database of its own), so that the
      // worker started after finds them waiting and its first run takes the others as companions.
      const accepting = await startTestService({ workers: 0, rateLimitPerSecond: 0 });
      const receivers: Receiver[] = [];
      let worker: TestService | undefined;
      try {
        const { merchantId, apiKey } = await accepting.merchant();
        const { receiver } = await registeredReceiver(
          accepting.baseUrl,
          apiKey,
          ['subscription.paused', 'bulk_request.completed'],
          receivers,
        );
        const ids = await accepting.seed(merchantId, 9);
        const requests: { traceId: string; callerSpanId: string; ids: string[]; requestId?: string }[] = [];
        for (let i = 0; i < 3; i++) {
          const request = {
            traceId: randomBytes(16).toString('hex'),
            callerSpanId: randomBytes(8).toString('hex'),
            ids: ids.slice(i * 3, i * 3 + 3),
          };
          const res = await call(accepting.baseUrl, '/v2/subscriptions/bulk/pause', {
            apiKey,
            json: { subscriptions: request.ids },
            headers: { traceparent: `00-${request.traceId}-${request.callerSpanId}-01` },
          });
          expect(res.status).toBe(202);
          requests.push({ ...request, requestId: res.body.requestId });
        }
        const queued = () => accepting.db.collection('bulkJobs').countDocuments({ nextRunAt: { $ne: null } });
        await waitFor(queued, (n) => n === 3, 30_000, 100, 'the 3 jobs queued');
        worker = await startTestService({ workers: 2, databaseName: accepting.db.databaseName });
        await waitFor(
          async () => receiver.received.length,
          (n) => n >= 12,
          60_000,
          100,
          'the 12 deliveries',
        );
        const shared = worker.logLines.find((l) => l.msg === 'bulk chunks applied together');
        expect(shared, 'one run took the other requests as companions').toBeDefined();
        await flushTracing();
        const spans = exporter.getFinishedSpans();
        for (const request of requests) {
          const ofTrace = spans.filter((s) => s.spanContext().traceId === request.traceId);
          const server = ofTrace.find((s) => s.name === 'POST bulkPauseSubscriptions')!;
          expect(parentOf(server)).toBe(request.callerSpanId);
          const chunks = ofTrace.filter((s) => s.name === 'bulk chunk');
          expect(
            chunks.map((s) => parentOf(s)),
            `the request's chunk span continues its own trace`,
          ).toEqual([server.spanContext().spanId]);
          const applied = worker.logLines.filter(
            (l) => l.msg === 'bulk command applied' && request.ids.includes(l['subscriptionId'] as string),
          );
          expect(applied).toHaveLength(3);
          for (const line of applied) expect(line).toMatchObject({ trace_id: request.traceId, span_id: chunks[0]!.spanContext().spanId });
          expect(worker.logLines.find((l) => l.msg === 'bulk request completed' && l['requestId'] === request.requestId)).toMatchObject({
            trace_id: request.traceId,
          });
          const deliveries = receiver.received.filter((r) => request.ids.includes(r.body.data.subscription?.id));
          expect(deliveries).toHaveLength(3);
          for (const delivery of deliveries)
            expect(delivery.traceparent?.split('-')[1], `the delivery of ${delivery.body.data.subscription?.id}`).toBe(request.traceId);
          const completed = receiver.received.filter(
            (r) => r.body.type === 'bulk_request.completed' && r.body.data.requestId === request.requestId,
          );
          expect(completed).toHaveLength(1);
          expect(completed[0]!.traceparent?.split('-')[1], 'the delivery of its bulk_request.completed').toBe(request.traceId);
        }
      } finally {
        for (const receiver of receivers) await receiver.close();
        await worker?.close();
        await accepting.close();
      }
    },
  );
});
