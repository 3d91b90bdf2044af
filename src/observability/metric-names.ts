/**
 * The Prometheus metrics every process exposes on /metrics: the one list that the metrics code,
 * the alert rules (deploy/prometheus/alerts.yml), the Grafana dashboard (deploy/grafana/) and the
 * table in docs/operations.md agree on. `npm run check` (scripts/check-deploy.ts) fails when the
 * rules or the dashboard name a metric that is not here, or when the operations guide's table
 * lists other names. Labels are bounded: never a merchant, subscription, request or event id.
 */
export type MetricType = 'counter' | 'gauge' | 'histogram';

export interface MetricName {
  readonly type: MetricType;
  readonly labels: readonly string[];
  readonly help: string;
}

/** The service's own metrics. Fleet-wide gauges are read from the database: aggregate them with max(), never sum(). */
export const SERVICE_METRICS = {
  subsvc_http_requests_total: {
    type: 'counter',
    labels: ['operation', 'status'],
    help: 'HTTP requests answered, by operationId and status code',
  },
  subsvc_http_request_duration_seconds: { type: 'histogram', labels: ['operation'], help: 'HTTP request latency' },
  subsvc_http_requests_in_flight: { type: 'gauge', labels: [], help: 'HTTP requests being served' },
  subsvc_rate_limited_total: { type: 'counter', labels: [], help: '429s from the per-merchant rate limit' },
  subsvc_bulk_requests_accepted_total: { type: 'counter', labels: ['operation'], help: 'bulk requests accepted (202)' },
  subsvc_bulk_commands_total: {
    type: 'counter',
    labels: ['operation', 'outcome'],
    help: "bulk commands applied by this process's workers, by outcome",
  },
  subsvc_bulk_chunks_queued: { type: 'gauge', labels: [], help: 'bulk chunks waiting (fleet-wide)' },
  subsvc_bulk_oldest_chunk_age_seconds: {
    type: 'gauge',
    labels: [],
    help: 'age of the oldest waiting bulk chunk, 0 when none (fleet-wide)',
  },
  subsvc_bulk_chunk_duration_seconds: {
    type: 'histogram',
    labels: [],
    help: 'time of one bulk chunk job run (its chunk and the waiting chunks it took with it)',
  },
  subsvc_schedules_due_pending: { type: 'gauge', labels: [], help: 'scheduled changes due and not yet applied (fleet-wide)' },
  subsvc_schedule_lag_seconds: { type: 'histogram', labels: [], help: 'applied time minus due time of each scheduled change' },
  subsvc_events_outbox_backlog: { type: 'gauge', labels: [], help: 'events recorded but not yet relayed (fleet-wide)' },
  subsvc_events_outbox_oldest_age_seconds: {
    type: 'gauge',
    labels: [],
    help: 'age of the oldest unrelayed event, 0 when none (fleet-wide)',
  },
  subsvc_webhook_deliveries_total: {
    type: 'counter',
    labels: ['outcome'],
    help: 'webhook delivery attempts by outcome (delivered, retrying, failed)',
  },
  subsvc_billing_pushes_total: {
    type: 'counter',
    labels: ['outcome'],
    help: 'calls to the billing system (Stripe) by outcome (sent, retrying, failed, dropped)',
  },
  subsvc_webhook_delivery_duration_seconds: { type: 'histogram', labels: [], help: "one webhook delivery attempt's HTTP time" },
  subsvc_webhook_endpoints_disabled: { type: 'gauge', labels: [], help: 'webhook endpoints disabled after repeated failures (fleet-wide)' },
  subsvc_event_destination_messages_total: {
    type: 'counter',
    labels: ['outcome'],
    help: 'messages to event destinations (Kafka) by outcome (published, failed)',
  },
  subsvc_event_destinations_pending: {
    type: 'gauge',
    labels: [],
    help: 'events waiting for an event destination (fleet-wide, read by worker processes)',
  },
  subsvc_event_destinations_expired: {
    type: 'gauge',
    labels: [],
    help: 'events still waiting for an event destination past the event retention, kept rather than dropped (fleet-wide, up to 1000)',
  },
  subsvc_db_operation_duration_seconds: {
    type: 'histogram',
    labels: ['client'],
    help: 'MongoDB operation latency by client (request, background): how long each operation held its pooled connection',
  },
  subsvc_db_operation_timeouts_total: { type: 'counter', labels: ['client'], help: 'MongoDB commands or pool waits that timed out' },
  subsvc_db_pool_wait_seconds: { type: 'histogram', labels: ['client'], help: 'time waiting for a pooled MongoDB connection' },
  subsvc_ready: { type: 'gauge', labels: [], help: '1 when /readyz would answer 200, else 0' },
  subsvc_fleet_processes: { type: 'gauge', labels: ['role'], help: 'live processes from the heartbeats, by role (serve, worker)' },
  subsvc_build_info: { type: 'gauge', labels: ['version', 'role'], help: "always 1: the process's version and role" },
} as const satisfies Record<string, MetricName>;

/**
 * prom-client's collectDefaultMetrics() names that the dashboard and rules use (it exposes more),
 * and Prometheus's own `up`.
 */
export const DEFAULT_METRICS_USED = [
  'process_cpu_seconds_total',
  'process_resident_memory_bytes',
  'nodejs_eventloop_lag_p99_seconds',
  'nodejs_heap_size_used_bytes',
  'up',
] as const;

export type ServiceMetricName = keyof typeof SERVICE_METRICS;

/** A name as a query writes it, for a histogram's `_bucket`, `_sum` and `_count` series too. */
export function knownMetric(series: string): boolean {
  const metrics: Readonly<Record<string, MetricName>> = SERVICE_METRICS;
  if ((DEFAULT_METRICS_USED as readonly string[]).includes(series) || series in metrics) return true;
  const base = series.replace(/_(bucket|sum|count)$/, '');
  return base !== series && metrics[base]?.type === 'histogram';
}
