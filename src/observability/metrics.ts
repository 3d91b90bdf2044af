/**
 * Prometheus metrics with prom-client (docs/operations.md lists them; the names are a contract with
 * the deployment's alert rules and dashboard). One registry per process (`enableMetrics()`, called
 * by the composition root unless METRICS=off; `metrics()` is undefined while off, so every hook
 * is one optional call); process metrics come from prom-client's collectDefaultMetrics.
 *
 * Labels are bounded: an operationId of the spec (or `unknown`, `docs`, `health`, `metrics`), an
 * HTTP status, an outcome, a driver command name, `request`/`background`. Never an id.
 *
 * Counters and histograms are moved where the work happens (small hooks in the HTTP middleware,
 * the bulk worker, the schedule worker, the webhook worker, and the driver's command monitoring
 * and connection-pool events). Fleet-wide gauges (queue, backlog, due schedules, disabled
 * endpoints, live processes) are read from the database at scrape time by src/fleet/status.ts,
 * at most once per FLEET_CACHE_MS whatever the scrape rate.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Middleware } from 'koa';
import type { MongoClient } from 'mongodb';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { SERVICE_METRICS, type ServiceMetricName } from '../lib/metric-names.js';

export type DbClientRole = 'request' | 'background';

/** What the fleet gauges show; read by src/fleet/status.ts. */
export interface FleetReading {
  readonly chunksQueued: number;
  readonly oldestChunkAgeSeconds: number;
  readonly schedulesDue: number;
  readonly outboxBacklog: number;
  readonly outboxOldestAgeSeconds: number;
  readonly endpointsDisabled: number;
  readonly processes: { readonly serve: number; readonly worker: number };
}

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const DB_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];
const LAG_BUCKETS = [0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600];
/** A scrape within this of the last one answers the same fleet figures (every process scrapes the same database). */
const FLEET_CACHE_MS = 5_000;

/** A metric's name, help and labels, as src/lib/metric-names.ts lists them (the deployment's rules and dashboard are checked against that list). */
function named<N extends ServiceMetricName>(name: N): { name: N; help: string; labelNames: (typeof SERVICE_METRICS)[N]['labels'][number][] } {
  const { help, labels }: { help: string; labels: readonly string[] } = SERVICE_METRICS[name];
  return { name, help, labelNames: [...labels] as (typeof SERVICE_METRICS)[N]['labels'][number][] };
}

export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests: Counter<'operation' | 'status'>;
  readonly httpDuration: Histogram<'operation'>;
  readonly httpInFlight: Gauge;
  readonly rateLimited: Counter;
  readonly bulkAccepted: Counter<'operation'>;
  readonly bulkCommands: Counter<'operation' | 'outcome'>;
  readonly chunkDuration: Histogram;
  readonly scheduleLag: Histogram;
  readonly deliveries: Counter<'outcome'>;
  readonly deliveryDuration: Histogram;
  readonly dbDuration: Histogram<'client' | 'command'>;
  readonly dbTimeouts: Counter<'client'>;
  readonly poolWait: Histogram<'client'>;
  private readonly ready: Gauge;
  private readonly fleetProcesses: Gauge<'role'>;
  private readonly buildInfo: Gauge<'version' | 'role'>;
  private fleetSource: (() => Promise<FleetReading>) | undefined;
  private readinessSource: (() => Promise<boolean>) | undefined;
  private fleetCache: { at: number; reading: Promise<FleetReading | undefined> } | undefined;
  private readonly instrumented = new WeakSet<MongoClient>();

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({ ...named('subsvc_http_requests_total'), registers });
    this.httpDuration = new Histogram({ ...named('subsvc_http_request_duration_seconds'), buckets: DURATION_BUCKETS, registers });
    this.httpInFlight = new Gauge({ ...named('subsvc_http_requests_in_flight'), registers });
    this.rateLimited = new Counter({ ...named('subsvc_rate_limited_total'), registers });
    this.bulkAccepted = new Counter({ ...named('subsvc_bulk_requests_accepted_total'), registers });
    this.bulkCommands = new Counter({ ...named('subsvc_bulk_commands_total'), registers });
    this.chunkDuration = new Histogram({ ...named('subsvc_bulk_chunk_duration_seconds'), buckets: DURATION_BUCKETS, registers });
    this.scheduleLag = new Histogram({ ...named('subsvc_schedule_lag_seconds'), buckets: LAG_BUCKETS, registers });
    this.deliveries = new Counter({ ...named('subsvc_webhook_deliveries_total'), registers });
    this.deliveryDuration = new Histogram({ ...named('subsvc_webhook_delivery_duration_seconds'), buckets: DURATION_BUCKETS, registers });
    this.dbDuration = new Histogram({ ...named('subsvc_db_operation_duration_seconds'), buckets: DB_BUCKETS, registers });
    this.dbTimeouts = new Counter({ ...named('subsvc_db_operation_timeouts_total'), registers });
    this.poolWait = new Histogram({ ...named('subsvc_db_pool_wait_seconds'), buckets: DB_BUCKETS, registers });
    this.buildInfo = new Gauge({ ...named('subsvc_build_info'), registers });
    const self = this;
    this.ready = new Gauge({
      ...named('subsvc_ready'),
      registers,
      async collect() {
        if (self.readinessSource) this.set((await self.readinessSource().catch(() => false)) ? 1 : 0);
      },
    });
    this.fleetProcesses = new Gauge({
      ...named('subsvc_fleet_processes'),
      registers,
      async collect() {
        const reading = await self.fleet();
        if (!reading) return;
        this.set({ role: 'serve' }, reading.processes.serve);
        this.set({ role: 'worker' }, reading.processes.worker);
      },
    });
    const fleetGauge = (name: ServiceMetricName, pick: (r: FleetReading) => number) =>
      new Gauge({
        ...named(name),
        registers,
        async collect() {
          const reading = await self.fleet();
          if (reading) this.set(pick(reading));
        },
      });
    fleetGauge('subsvc_bulk_chunks_queued', (r) => r.chunksQueued);
    fleetGauge('subsvc_bulk_oldest_chunk_age_seconds', (r) => r.oldestChunkAgeSeconds);
    fleetGauge('subsvc_schedules_due_pending', (r) => r.schedulesDue);
    fleetGauge('subsvc_events_outbox_backlog', (r) => r.outboxBacklog);
    fleetGauge('subsvc_events_outbox_oldest_age_seconds', (r) => r.outboxOldestAgeSeconds);
    fleetGauge('subsvc_webhook_endpoints_disabled', (r) => r.endpointsDisabled);
  }

  /** The process's identity, as subsvc_build_info. */
  identify(version: string, role: 'serve' | 'worker'): void {
    this.buildInfo.reset();
    this.buildInfo.set({ version, role }, 1);
  }

  /** Where the fleet gauges come from (src/fleet/status.ts) and what /readyz would say. */
  sources(fleet: () => Promise<FleetReading>, readiness?: () => Promise<boolean>): void {
    this.fleetSource = fleet;
    this.readinessSource = readiness;
  }

  private fleet(): Promise<FleetReading | undefined> {
    const source = this.fleetSource;
    if (!source) return Promise.resolve(undefined);
    const now = Date.now();
    if (!this.fleetCache || now - this.fleetCache.at >= FLEET_CACHE_MS) {
      // A failed read leaves the gauges as they were (the scrape still answers).
      this.fleetCache = { at: now, reading: source().catch(() => undefined) };
    }
    return this.fleetCache.reading;
  }

  /** The exposition, in Prometheus text format. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /**
   * Per driver command: its latency by client and command name, timeouts; per pooled connection
   * checkout: the wait. The client must have been created with `monitorCommands: true`.
   */
  instrumentClient(client: MongoClient, role: DbClientRole): void {
    // Once per client, however many services are composed on it.
    if (this.instrumented.has(client)) return;
    this.instrumented.add(client);
    const duration = this.dbDuration;
    const timeouts = this.dbTimeouts.labels(role);
    const wait = this.poolWait.labels(role);
    client.on('commandSucceeded', (event) => duration.labels(role, event.commandName).observe(event.duration / 1000));
    client.on('commandFailed', (event) => {
      duration.labels(role, event.commandName).observe(event.duration / 1000);
      if (isTimeout(event.failure)) timeouts.inc();
    });
    client.on('connectionCheckedOut', (event) => wait.observe(event.durationMS / 1000));
    client.on('connectionCheckOutFailed', (event) => {
      wait.observe(event.durationMS / 1000);
      if (event.reason === 'timeout') timeouts.inc();
    });
  }
}

function isTimeout(error: Error): boolean {
  return /timed? ?out/i.test(error.name) || /timed? ?out/i.test(error.message);
}

/** What an answered request is counted under: its operationId, else what kind of path it was. */
function operationOf(path: string, operationId: string | undefined): string {
  if (operationId) return operationId;
  if (path === '/healthz' || path === '/readyz') return 'health';
  if (path === '/metrics') return 'metrics';
  if (path === '/docs' || path.startsWith('/docs/') || path === '/openapi.yaml' || path === '/openapi.json') return 'docs';
  return 'unknown';
}

/** The key under ctx.state where the operation middleware leaves the matched operationId. */
export const OPERATION_ID = 'operationId';

/**
 * Counts every request once it is answered (after the problem middleware has turned an error
 * into its status): by operation and status, its latency, and the requests in flight.
 */
export function httpMetricsMiddleware(metrics: Metrics): Middleware {
  return async (ctx, next) => {
    metrics.httpInFlight.inc();
    const started = performance.now();
    try {
      await next();
    } finally {
      metrics.httpInFlight.dec();
      const operation = operationOf(ctx.path, ctx.state[OPERATION_ID] as string | undefined);
      metrics.httpRequests.labels(operation, String(ctx.status)).inc();
      metrics.httpDuration.labels(operation).observe((performance.now() - started) / 1000);
    }
  };
}

let current: Metrics | undefined;
let enabled = false;

/** The process's metrics, created on first use; METRICS=off never calls this. */
export function enableMetrics(): Metrics {
  current ??= new Metrics();
  enabled = true;
  return current;
}

/** Stops counting (npm run bench measures with and without); the registry stays. */
export function disableMetrics(): void {
  enabled = false;
}

/** The process's metrics, or undefined when they are off: hooks call `metrics()?.…`. */
export function metrics(): Metrics | undefined {
  return enabled ? current : undefined;
}

/** GET /metrics on the API's listener (no API key, like /healthz). */
export function metricsRoute(registry: Metrics): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== '/metrics' || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    const { contentType, body } = await registry.exposition();
    ctx.type = contentType;
    ctx.body = body;
  };
}

/** METRICS_PORT: /metrics on a listener of its own, answering nothing else (404). */
export async function startMetricsServer(registry: Metrics, port: number, host: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('only GET /metrics here\n');
      return;
    }
    registry.exposition().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      (error: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${error.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const { port: actual } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${actual}/metrics`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
