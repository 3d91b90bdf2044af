/**
 * OpenTelemetry traces, off unless the environment asks for them (OTEL_EXPORTER_OTLP_ENDPOINT,
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_TRACES_EXPORTER other than `none`; OTEL_SDK_DISABLED
 * turns them off). Built on the OpenTelemetry SDK (@opentelemetry/sdk-trace, the OTLP/HTTP
 * exporter, which reads the standard OTEL_EXPORTER_OTLP_* variables, and the W3C trace-context
 * propagator), with the official MongoDB instrumentation for database spans.
 *
 * How it is wired, and why (docs/fleet.md, "Traces"): the service is ESM, and OpenTelemetry's
 * automatic instrumentation patches modules as they are loaded. The MongoDB driver is CommonJS:
 * its files are loaded through `require`, which @opentelemetry/instrumentation-mongodb hooks, so it
 * works as long as it is registered before the driver loads. cli.ts therefore imports this module
 * first (ESM evaluates imports in order). Node's `http` is imported by our ESM code, which the
 * require hook does not see (it would take the `--import` loader hook of import-in-the-middle); so
 * the server span is made here, by a Koa middleware using the tracer API, which is as exact and
 * needs no loader flag: one span per request, the caller's `traceparent` honoured.
 *
 * Beyond a request: a bulk request stores the request's trace context, its chunk jobs carry it,
 * and each chunk's span is a child of the request's; a change's outbox entry stores the context it
 * was made in, the webhook delivery of its event is a child of that, and the delivery's POST sends
 * `traceparent`. Log lines carry `trace_id` and `span_id` (src/logger.ts).
 */
import { context, propagation, trace, SpanKind, SpanStatusCode, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { MongoDBInstrumentation } from '@opentelemetry/instrumentation-mongodb';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor, TracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace';
import type { Middleware } from 'koa';

type Env = Record<string, string | undefined>;

/** Whether the standard variables ask for traces. */
export function tracesRequested(env: Env = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim();
  if (exporter) return exporter !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

function exporterFor(env: Env): SpanExporter {
  const name = env.OTEL_TRACES_EXPORTER?.split(',')[0]?.trim() || 'otlp';
  if (name === 'console') return new ConsoleSpanExporter();
  if (name !== 'otlp') throw new Error(`OTEL_TRACES_EXPORTER=${name} is not supported here: otlp (OTLP over HTTP), console or none`);
  if (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL && env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL !== 'http/json') {
    throw new Error(`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=${env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL} is not supported here: http/json`);
  }
  return new OTLPTraceExporter();
}

let provider: TracerProvider | undefined;
let tracer: Tracer | undefined;

export interface TracingOptions {
  /** Where spans go; default from the environment (OTLP/HTTP). Tests pass an in-memory exporter. */
  readonly exporter?: SpanExporter;
  /** Export each span as it ends (tests) rather than in batches. */
  readonly simple?: boolean;
  readonly serviceVersion?: string;
  readonly env?: Env;
}

/** Starts tracing for this process (once); returns false when already started. */
export function startTracing(options: TracingOptions = {}): boolean {
  if (provider) return false;
  const env = options.env ?? process.env;
  const exporter = options.exporter ?? exporterFor(env);
  const resource = resourceFromAttributes({
    'service.name': env.OTEL_SERVICE_NAME || 'subsvc',
    ...(options.serviceVersion ? { 'service.version': options.serviceVersion } : {}),
  }).merge(detectResources({ detectors: [envDetector] }));
  provider = new TracerProvider({
    resource,
    spanProcessors: [options.simple ? new SimpleSpanProcessor({ exporter }) : new BatchSpanProcessor({ exporter })],
  });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  registerInstrumentations({ instrumentations: [new MongoDBInstrumentation()], tracerProvider: provider });
  tracer = trace.getTracer('subsvc', options.serviceVersion);
  return true;
}

/** Sends what is buffered and stops (at the end of a process, or of a test). */
export async function stopTracing(): Promise<void> {
  if (!provider) return;
  const stopping = provider;
  provider = undefined;
  tracer = undefined;
  await stopping.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
}

/** Sends what is buffered (tests read the exporter right after). */
export async function flushTracing(): Promise<void> {
  await provider?.forceFlush();
}

export function tracingOn(): boolean {
  return tracer !== undefined;
}

/** The active span's ids for a log line, or nothing (tracing off, or outside any span). */
export function traceFields(): { trace_id: string; span_id: string } | undefined {
  if (!tracer) return undefined;
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** The active context as a W3C `traceparent`, to store with work done later (a bulk request, an outbox entry); undefined when off. */
export function currentTraceparent(): string | undefined {
  if (!tracer) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

function contextOf(traceparent: string | undefined): Context {
  return traceparent ? propagation.extract(context.active(), { traceparent }) : context.active();
}

/**
 * Runs `fn` in a span that continues the stored `traceparent` (a child of the span it names), or
 * in a new trace when there is none; just runs it when tracing is off.
 */
export async function inSpan<T>(
  name: string,
  traceparent: string | undefined,
  attributes: Record<string, string | number>,
  fn: () => Promise<T>,
): Promise<T> {
  if (!tracer) return fn();
  return tracer.startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, contextOf(traceparent), async (span) => {
    try {
      return await fn();
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * Runs `fn` in the context the stored `traceparent` names (no new span), so that what it logs or
 * stores carries that trace; just runs it when tracing is off or there is none.
 */
export function inTraceContext<T>(traceparent: string | undefined, fn: () => T): T {
  return tracer && traceparent ? context.with(contextOf(traceparent), fn) : fn();
}

/** Adds `traceparent` (the active span's) to outgoing headers, when tracing is on. */
export function injectTraceparent(headers: Record<string, string>): Record<string, string> {
  if (tracer) propagation.inject(context.active(), headers);
  return headers;
}

/** Marks the active span failed (an HTTP attempt that did not succeed, without an exception). */
export function failActiveSpan(message: string): void {
  trace.getActiveSpan()?.setStatus({ code: SpanStatusCode.ERROR, message });
}

/**
 * One server span per request, continuing the caller's `traceparent`: named by the method and the
 * operationId (ctx.state, set once routed: src/http/openapi.ts), with the HTTP attributes of the
 * semantic conventions; 5xx marks it failed. Added only when tracing is on. `recordedPath`: the
 * path as a span may hold it (a credential in a path replaced).
 */
export function httpTracingMiddleware(operationKey: string, recordedPath: (path: string) => string = (path) => path): Middleware {
  return async (ctx, next) => {
    const active = tracer!;
    const parent = propagation.extract(context.active(), ctx.headers);
    await active.startActiveSpan(
      ctx.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method, 'url.path': recordedPath(ctx.path) } },
      parent,
      async (span: Span) => {
        try {
          await next();
        } finally {
          const operation = ctx.state[operationKey] as string | undefined;
          if (operation) span.updateName(`${ctx.method} ${operation}`).setAttribute('http.route', operation);
          span.setAttribute('http.response.status_code', ctx.status);
          if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        }
      },
    );
  };
}
