import { randomUUID } from 'node:crypto';
/**
 * The composition's requests part: the services only requests use, the readiness probes, the
 * process's metrics, and the Koa app built from them.
 */
import { Readable } from 'node:stream';
import { ImportsService } from '../imports/imports.service.js';
import { IMPORT_LIMITS } from '../imports/imports.upload.js';
import type Koa from 'koa';
import type { Db } from 'mongodb';
import { BulkService } from '../bulk/bulk.service.js';
import { BulkStatusService } from '../bulk/bulk.status.js';
import { BulkUndoService } from '../bulk/bulk.undo.js';
import { chunkJobsOn } from '../bulk/bulk.queue.js';
import { STRIPE_API_BASE, type Config } from '../config.js';
import type { Database } from '../db/mongo.js';
import { eventHandlers } from '../events/events.handlers.js';
import { EventsService } from '../events/events.service.js';
import { DEFAULT_HEARTBEAT_MS, liveProcesses } from '../fleet/heartbeat.js';
import { readFleetStatus, type FleetStatus } from '../fleet/status.js';
import { createApp } from '../http/app.js';
import { readinessState, type Readiness } from '../http/health.routes.js';
import { RateLimiter } from '../http/rate-limit.js';
import type { Logger } from '../logger.js';
import { enableMetrics, type Metrics } from '../observability/metrics.js';
import { DueStore } from '../subscriptions/due.store.js';
import { OutboxStore } from '../subscriptions/outbox.store.js';
import { testModeHandlers } from '../test-mode/test-mode.handlers.js';
import { holdHandlers } from '../holds/holds.handlers.js';
import { planHandlers } from '../plans/plans.handlers.js';
import { billingHandlers } from '../billing/billing.handlers.js';
import { StripeEventsService } from '../billing/stripe-events.service.js';
import { BillingSyncFailures } from '../billing/billing-sync-failed.js';
import { StripeBackfill } from '../billing/stripe-backfill.js';
import { StripeApi } from '../billing/stripe.client.js';
import { analyticsHandlers } from '../analytics/analytics.handlers.js';
import { AnalyticsService } from '../analytics/analytics.service.js';
import { PlansService } from '../plans/plans.service.js';
import { timeOfMerchants } from '../clocks/merchant-clocks.js';
import { TestModeService, type RelayNow } from '../test-mode/test-mode.service.js';
import { TriggersService } from '../test-mode/triggers.js';
import { TestOutcomes } from '../test-mode/test-outcomes.js';
import { EndpointsRepository } from '../webhooks/endpoints.repository.js';
import { EndpointsService } from '../webhooks/endpoints.service.js';
import { ReplayService } from '../webhooks/replay.js';
import { DELIVERY_TIMEOUT_MS } from '../webhooks/sender.js';
import { webhookHandlers } from '../webhooks/webhooks.handlers.js';
import { destinationHandlers } from '../event-destinations/destinations.handlers.js';
import { composePortal } from './compose-portal.js';
import type { BothStores, Stores } from './compose-stores.js';
import type { BackgroundWork } from './compose-workers.js';
import type { Domain } from './compose-domain.js';

/** How long a trigger's one-line import may take, waiting for a worker that took it first. */
const IMPORT_TRIGGER_WAIT_MS = 20_000;

export type HttpConfig = Pick<
  Config,
  'dbTimeoutMs' | 'rateLimitBurst' | 'rateLimitPerSecond' | 'authFailuresPerMinute' | 'webhooksAllowPrivateUrls'
> &
  Partial<
    Pick<
      Config,
      | 'metrics'
      | 'metricsPort'
      | 'heartbeatIntervalMs'
      | 'trustedProxies'
      | 'publicUrl'
      | 'testOutcomeHoldMs'
      | 'testKeysOnly'
      | 'importIdleTimeoutMs'
      | 'stripeApiBase'
    >
  >;

/**
 * What the whole fleet is doing (src/fleet/status.ts), each figure read by the store that owns its
 * collection, on `db`: `subsvc status` and the fleet gauges of /metrics.
 */
export function fleetStatusOn(
  db: Db,
  heartbeatIntervalMs: number,
  { due, outbox, endpoints }: Pick<Stores, 'due' | 'outbox' | 'endpoints'> = {
    due: new DueStore(db),
    outbox: new OutboxStore(db),
    endpoints: new EndpointsRepository(db),
  },
): () => Promise<FleetStatus> {
  const chunkJobs = chunkJobsOn(db);
  return () =>
    readFleetStatus({
      live: (now) => liveProcesses(db, heartbeatIntervalMs, now),
      chunksQueued: (cap) => chunkJobs.countUnfinished(cap),
      oldestChunkAt: () => chunkJobs.oldestUnfinishedAt(),
      countDue: (now, cap) => due.countDue(now, cap),
      countOutboxes: (cap) => outbox.countOutboxes(cap),
      oldestOutboxEntry: (sample) => outbox.oldestOutboxEntry(sample),
      countDisabledEndpoints: (cap) => endpoints.countDisabled(cap),
    });
}

/** The process's metrics unless METRICS=off, listening to the connection pools of both clients (src/observability/metrics.ts). */
function metricsFor(database: Pick<Database, 'clients'>, config: Pick<HttpConfig, 'metrics'>): Metrics | undefined {
  if (config.metrics === false) return undefined;
  const registry = enableMetrics();
  // Instrumented once each, however many services share the clients.
  registry.instrumentClient(database.clients.request, 'request');
  registry.instrumentClient(database.clients.background, 'background');
  return registry;
}

/** The readiness probes, and how the process marks itself as stopping. */
export interface ReadinessControl {
  readonly readiness: Readiness;
  /** Marks the process as stopping: /readyz answers 503 from now on (src/http/health.routes.ts). */
  readonly beginStopping: () => void;
}

export function readinessOf(
  database: Database,
  config: Pick<HttpConfig, 'dbTimeoutMs'>,
  workers: BackgroundWork['workers'],
  healthy: () => boolean,
): ReadinessControl {
  let stopping = false;
  const readiness = {
    db: database.db,
    timeoutMs: config.dbTimeoutMs,
    reachable: () => database.reachable(),
    healthy,
    workersRunning: () => (workers.concurrency === 0 ? undefined : workers.running),
    stopping: () => stopping,
  };
  return {
    readiness,
    beginStopping: () => {
      stopping = true;
    },
  };
}

/** The per-merchant rate limit (RATE_LIMIT_PER_SECOND, 0: none). */
export function merchantLimiter(config: Pick<HttpConfig, 'rateLimitBurst' | 'rateLimitPerSecond'>): RateLimiter | undefined {
  return config.rateLimitPerSecond > 0 ? new RateLimiter(config.rateLimitBurst, config.rateLimitPerSecond) : undefined;
}

/** What the app is built from. */
export interface HttpParts {
  readonly database: Database;
  readonly config: HttpConfig;
  readonly both: BothStores;
  readonly domain: Domain;
  readonly work: BackgroundWork;
  readonly readiness: Readiness;
  readonly limiter: RateLimiter | undefined;
  readonly log: Logger;
}

/** The process's metrics with their sources, then the app's factory. */
export function composeHttp(parts: HttpParts): () => Promise<Koa> {
  const { database, config, both, readiness } = parts;
  const registry = metricsFor(database, config);
  registry?.sources(
    fleetStatusOn(database.background, config.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_MS, both.backgroundStores),
    async () => (await readinessState(readiness)).ready,
  );
  return appFactory(parts, registry);
}

/** Bulk requests as requests accept them; a request by filter reads on the background client. */
function bulkServiceOn(
  { stores, backgroundStores }: BothStores,
  work: BackgroundWork,
  { pausePolicies, subscriptions }: Pick<Domain, 'pausePolicies' | 'subscriptions'>,
  log: Logger,
): BulkService {
  return new BulkService(
    { subscriptions, requests: stores.bulk },
    // A request by filter reads and stores up to 100,000 ids: bounded by BULK_DB_TIMEOUT_MS (docs/design.md §6a).
    { subscriptions: work.subscriptions, requests: backgroundStores.bulk },
    work.dispatcher,
    log,
    pausePolicies,
    timeOfMerchants(stores.testClocks),
  );
}

function appFactory({ config, both, domain, work, readiness, limiter, log }: HttpParts, registry: Metrics | undefined): () => Promise<Koa> {
  const { stores } = both;
  const { auth, apiKeys, subscriptions, pausePolicies } = domain;
  const bulk = bulkServiceOn(both, work, domain, log);
  const endpoints = new EndpointsService(stores.endpoints, config.webhooksAllowPrivateUrls);
  /** What a test helper changed: its events recorded and their first deliveries attempted before it answers. */
  const relayNow: RelayNow = (ids) => work.relay.relay(ids, DELIVERY_TIMEOUT_MS);
  const plans = new PlansService(stores.plans);
  const imports = new ImportsService(
    stores.imports,
    (id) => domain.subscriptions.clock(id),
    () => work.imports.wake(),
    { ...IMPORT_LIMITS, ...(config.importIdleTimeoutMs !== undefined ? { idleMs: config.importIdleTimeoutMs } : {}) },
  );
  const billingFailures = new BillingSyncFailures(
    subscriptions,
    stores.billingSync,
    async (id) => (await subscriptions.clock(id)).timestamp(),
    () => work.relay,
    stores.events,
  );
  const testMode = new TestModeService(stores.testClocks, subscriptions, stores, domain.seeder, relayNow, work.holds);
  return () =>
    createApp({
      auth,
      apiKeys,
      subscriptions,
      lifecycle: domain.lifecycle,
      imports,
      pausePolicies,
      bulk,
      bulkStatus: new BulkStatusService(stores.bulk),
      bulkUndo: new BulkUndoService(stores.bulk, subscriptions, bulk),
      webhooks: {
        ...eventHandlers(new EventsService(stores.events), work.webhooks),
        ...webhookHandlers(endpoints, stores.deliveries, new ReplayService(endpoints, stores.events, work.webhooks)),
        ...destinationHandlers(work.destinations),
      },
      holds: holdHandlers(work.holds, (id) => subscriptions.clock(id)),
      plans: planHandlers(plans),
      billing: billingHandlers(
        domain.billing,
        new StripeEventsService(domain.billing, domain.lifecycle, subscriptions, stores.stripeEvents, stores.billingPushes),
        new StripeBackfill(domain.billing, new StripeApi(config.stripeApiBase ?? STRIPE_API_BASE), imports),
      ),
      billingSync: stores.billingSync,
      analytics: analyticsHandlers(
        new AnalyticsService(
          stores.pauseHistory,
          {
            resumeCandidates: (merchantId, until) => subscriptions.resumeCandidates(merchantId, until),
            holdResumeTimes: (merchantId) => work.holds.resumeTimes(merchantId),
          },
          (id) => subscriptions.clock(id),
        ),
      ),
      testHelpers: testModeHandlers(
        testMode,
        new TriggersService(
          subscriptions,
          bulk,
          domain.seeder,
          stores.events,
          relayNow,
          {
            policies: pausePolicies,
            advance: (merchantId, to) => testMode.advance(merchantId, to),
          },
          domain.lifecycle,
          async (merchantId, apiKeyId) => {
            const externalId = `trigger_${randomUUID()}`;
            const ndjson = `${JSON.stringify({ externalId, planId: randomUUID() })}\n`;
            const doc = await imports.accept({ merchantId, apiKeyId, format: 'ndjson', events: false, body: Readable.from([ndjson]) });
            const done = await work.imports.applyNow(doc, IMPORT_TRIGGER_WAIT_MS);
            const created = done?.state === 'completed' ? await domain.lifecycle.findByExternalId(merchantId, externalId) : null;
            if (!created) throw new Error(`the trigger's import ${doc._id} did not complete within ${IMPORT_TRIGGER_WAIT_MS} ms`);
            return created.id;
          },
          (merchantId, subscriptionId, failedEventId) =>
            billingFailures.failed([
              {
                id: failedEventId,
                merchantId,
                subscriptionId,
                externalId: `sub_trigger_${subscriptionId.slice(0, 8)}`,
                action: 'pause',
                createdAt: new Date(),
                attempts: 1,
                error: 'Stripe refused the change (a test trigger; nothing was sent to Stripe)',
              },
            ]),
        ),
      ),
      log,
      idempotency: stores.idempotency,
      testMode: { outcomes: new TestOutcomes(stores.testOutcomes), holdMs: config.testOutcomeHoldMs, testKeysOnly: config.testKeysOnly },
      limiter,
      authFailures:
        config.authFailuresPerMinute > 0
          ? new RateLimiter(config.authFailuresPerMinute, config.authFailuresPerMinute / 60, { scope: 'address' })
          : undefined,
      trustedProxies: config.trustedProxies ?? [],
      portal: composePortal(stores, domain, plans, config.publicUrl, log),
      readiness,
      metrics: registry && { registry, route: config.metricsPort === undefined },
    });
}
