/**
 * Prometheus metrics with prom-client (docs/operations.md lists them; the names are a contract with
 * the deployment's alert rules and dashboard). One registry per process (`enableMetrics()`, called
 * by the composition root unless METRICS=off; `metrics()` is undefined while off, so every hook
 * is one optional call); process metrics come from prom-client's collectDefaultMetrics.
 *
 * Labels are bounded: an operationId of the spec (or `unknown`, `docs`, `health`, `metrics`), an
 * HTTP status, an outcome, `request`/`background`. Never an id.
 *
 * Counters and histograms are moved where the work happens (small hooks in the HTTP middleware,
 * the bulk worker, the schedule worker, the webhook worker, and the driver's connection-pool
 * events); what they cost the request path is measured by `npm run bench` (c) (docs/benchmarks.md).
 * Fleet-wide gauges (queue, backlog, due schedules, disabled endpoints, live processes) are read
 * from the database at scrape time by src/fleet/status.ts, at most once per FLEET_CACHE_MS
 * whatever the scrape rate.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context, Middleware } from 'koa';
import type { MongoClient } from 'mongodb';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { SERVICE_METRICS, type ServiceMetricName } from './metric-names.js';
import { counterCell, histogramCell } from './metric-cells.js';

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
/** How much earlier than its timeout a socket's timer may fire (Node's timers round to the millisecond). */
const TIMER_EARLY_MS = 5;
/** A scrape within this of the last one answers the same fleet figures (every process scrapes the same database). */
const FLEET_CACHE_MS = 5_000;

/** A metric's name, help and labels, as src/observability/metric-names.ts lists them (the deployment's rules and dashboard are checked against that list). */
function named<N extends ServiceMetricName>(
  name: N,
): { name: N; help: string; labelNames: (typeof SERVICE_METRICS)[N]['labels'][number][] } {
  const { help, labels }: { help: string; labels: readonly string[] } = SERVICE_METRICS[name];
  return { name, help, labelNames: [...labels] as (typeof SERVICE_METRICS)[N]['labels'][number][] };
}

export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests: Counter<'operation' | 'status'>;
  readonly httpDuration: Histogram<'operation'>;
  /** Requests being served now: a plain count, which the in-flight gauge reads at scrape time. */
  inFlight = 0;
  readonly rateLimited: Counter;
  readonly bulkAccepted: Counter<'operation'>;
  readonly bulkCommands: Counter<'operation' | 'outcome'>;
  readonly chunkDuration: Histogram;
  readonly scheduleLag: Histogram;
  readonly deliveries: Counter<'outcome'>;
  readonly deliveryDuration: Histogram;
  readonly billingPushes: Counter<'outcome'>;
  readonly destinationMessages: Counter<'outcome'>;
  readonly destinationsPending: Gauge;
  readonly destinationsExpired: Gauge;
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
  /** The label cells of each operation (and status) answered so far: prom-client resolves labels on every call otherwise (./metric-cells.ts). */
  private readonly byOperation = new Map<string, { duration: (seconds: number) => void; requests: Map<number, () => void> }>();

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({ ...named('subsvc_http_requests_total'), registers });
    this.httpDuration = new Histogram({ ...named('subsvc_http_request_duration_seconds'), buckets: DURATION_BUCKETS, registers });
    // prom-client calls a gauge's collect() with the gauge as `this`: these metrics are reached as `self`.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const self = this;
    new Gauge({
      ...named('subsvc_http_requests_in_flight'),
      registers,
      collect() {
        this.set(self.inFlight);
      },
    });
    this.rateLimited = new Counter({ ...named('subsvc_rate_limited_total'), registers });
    this.bulkAccepted = new Counter({ ...named('subsvc_bulk_requests_accepted_total'), registers });
    this.bulkCommands = new Counter({ ...named('subsvc_bulk_commands_total'), registers });
    this.chunkDuration = new Histogram({ ...named('subsvc_bulk_chunk_duration_seconds'), buckets: DURATION_BUCKETS, registers });
    this.scheduleLag = new Histogram({ ...named('subsvc_schedule_lag_seconds'), buckets: LAG_BUCKETS, registers });
    this.deliveries = new Counter({ ...named('subsvc_webhook_deliveries_total'), registers });
    this.billingPushes = new Counter({ ...named('subsvc_billing_pushes_total'), registers });
    this.deliveryDuration = new Histogram({ ...named('subsvc_webhook_delivery_duration_seconds'), buckets: DURATION_BUCKETS, registers });
    this.destinationMessages = new Counter({ ...named('subsvc_event_destination_messages_total'), registers });
    this.destinationsPending = new Gauge({ ...named('subsvc_event_destinations_pending'), registers });
    this.destinationsExpired = new Gauge({ ...named('subsvc_event_destinations_expired'), registers });
    this.dbDuration = new Histogram({ ...named('subsvc_db_operation_duration_seconds'), buckets: DB_BUCKETS, registers });
    this.dbTimeouts = new Counter({ ...named('subsvc_db_operation_timeouts_total'), registers });
    this.poolWait = new Histogram({ ...named('subsvc_db_pool_wait_seconds'), buckets: DB_BUCKETS, registers });
    this.buildInfo = new Gauge({ ...named('subsvc_build_info'), registers });
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

  /** One answered request: counted by operation and status, its latency observed. */
  answered(operation: string, status: number, seconds: number): void {
    let children = this.byOperation.get(operation);
    if (!children) {
      children = { duration: histogramCell(this.httpDuration, { operation }), requests: new Map() };
      this.byOperation.set(operation, children);
    }
    let requests = children.requests.get(status);
    if (!requests) {
      requests = counterCell(this.httpRequests, { operation, status: String(status) });
      children.requests.set(status, requests);
    }
    requests();
    children.duration(seconds);
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
   * From the connection pool's events (CMAP), which the driver emits whether or not anything
   * listens, so that counting adds only these listeners: per checkout, the wait for a connection
   * and how long the operation then held it (its command's round trip and the driver's own work
   * on it: one command, or one batch of a bulk write, or one getMore of a cursor); timeouts. The
   * driver's command monitoring (`monitorCommands`), which builds three event objects per command
   * and cost the request path most of what the metrics cost (docs/benchmarks.md), stays off.
   *
   * A command that timed out shows in these events as a connection checked in after being held at
   * least the client's socket timeout and closed at once for an error (checkIn emits both, in that
   * order, in the same call): counted as a timeout, like a checkout that gave up waiting.
   */
  instrumentClient(client: MongoClient, role: DbClientRole): void {
    // Once per client, however many services are composed on it.
    if (this.instrumented.has(client)) return;
    this.instrumented.add(client);
    const held = histogramCell(this.dbDuration, { client: role });
    const timeouts = this.dbTimeouts.labels(role);
    const wait = histogramCell(this.poolWait, { client: role });
    const socketTimeoutMs = client.options.socketTimeoutMS ?? 0;
    // A connection held this long was idle long enough for the socket timeout (its timer fires no earlier, but for a timer's rounding).
    const timedOutAfterMs = socketTimeoutMs > 0 ? socketTimeoutMs - TIMER_EARLY_MS : Infinity;
    // Checkout times of the connections checked out now, per server (connection ids are per pool).
    const checkedOut = new Map<string, Map<number | string, number>>();
    const of = (address: string) => checkedOut.get(address) ?? checkedOut.set(address, new Map()).get(address)!;
    let heldTooLong: { address: string; id: number | string } | undefined;
    client.on('connectionCheckedOut', (event) => {
      wait(event.durationMS / 1000);
      of(event.address).set(event.connectionId, performance.now());
    });
    client.on('connectionCheckedIn', (event) => {
      const pool = of(event.address);
      const since = pool.get(event.connectionId);
      if (since === undefined) return;
      pool.delete(event.connectionId);
      const ms = performance.now() - since;
      held(ms / 1000);
      heldTooLong = ms >= timedOutAfterMs ? { address: event.address, id: event.connectionId } : undefined;
    });
    client.on('connectionClosed', (event) => {
      checkedOut.get(event.address)?.delete(event.connectionId);
      if (event.reason === 'error' && heldTooLong?.id === event.connectionId && heldTooLong.address === event.address) timeouts.inc();
      heldTooLong = undefined;
    });
    client.on('connectionCheckOutFailed', (event) => {
      wait(event.durationMS / 1000);
      if (event.reason === 'timeout') timeouts.inc();
    });
  }
}

/** The label of a path outside the spec that the app serves (the portal's pages), or undefined. */
export type PathKind = (path: string) => string | undefined;

/** What an answered request is counted under: its operationId, else what kind of path it was. */
function operationOf(path: string, operationId: string | undefined, kindOf: PathKind): string {
  if (operationId) return operationId;
  const kind = kindOf(path);
  if (kind !== undefined) return kind;
  if (path === '/healthz' || path === '/readyz') return 'health';
  if (path === '/metrics') return 'metrics';
  if (path === '/docs' || path.startsWith('/docs/') || path === '/openapi.yaml' || path === '/openapi.json') return 'docs';
  return 'unknown';
}

/** The key under ctx.state where the operation middleware leaves the matched operationId. */
export const OPERATION_ID = 'operationId';

/** Told of every request as it starts and once it is answered, its error (if any) rendered (by src/http/request-context.middleware.ts). */
export interface RequestObserver {
  started(): void;
  answered(ctx: Context, seconds: number): void;
}

/**
 * Counts every request once it is answered (after the problem middleware has turned an error
 * into its status): by operation and status, its latency, and the requests in flight. Told by the
 * request-context middleware (src/http/request-context.middleware.ts), which times the request anyway.
 */
export function httpRequestObserver(metrics: Metrics, kindOf: PathKind = () => undefined): RequestObserver {
  return {
    started: () => {
      metrics.inFlight++;
    },
    answered: (ctx, seconds) => {
      metrics.inFlight--;
      metrics.answered(operationOf(ctx.path, ctx.state[OPERATION_ID] as string | undefined, kindOf), ctx.status, seconds);
    },
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
    if (ctx.path !== '/metrics' || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) {
      await next();
      return;
    }
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
