/**
 * The composition root: every repository built once per database client, every service and entry
 * point built once, dependencies passed in; the engine workarounds decided here from the server's
 * capabilities (src/db/workarounds.ts) and logged at start; and startService(), the one assembly
 * of HTTP server and workers that `serve`, the tests and the scripts all run.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Db } from 'mongodb';
import { ApiKeysService } from '../auth/api-keys.service.js';
import { AuthService } from '../auth/auth.service.js';
import { LastUsedRecorder } from '../auth/last-used.js';
import { MerchantsRepository } from '../auth/merchants.repository.js';
import { BulkDispatcher } from '../bulk/bulk.dispatcher.js';
import { BulkQueue, chunksQueued, oldestChunkAt } from '../bulk/bulk.queue.js';
import { BulkRepository } from '../bulk/bulk.repository.js';
import { BulkService } from '../bulk/bulk.service.js';
import { BulkStatusService } from '../bulk/bulk.status.js';
import { BulkUndoService } from '../bulk/bulk.undo.js';
import { BulkWorker, type CompletionHook } from '../bulk/bulk.worker.js';
import type { Config, DbWorkarounds } from '../config.js';
import type { Capabilities, Database } from '../db/mongo.js';
import { RetentionSweeper } from '../db/retention.js';
import { describeWorkarounds, switchedOff, switchOff, workaroundsFor, type Workarounds } from '../db/workarounds.js';
import { eventHandlers } from '../events/events.handlers.js';
import { EventsRelay } from '../events/events.relay.js';
import { TestClocksRepository } from '../test-mode/test-clocks.repository.js';
import { testModeHandlers } from '../test-mode/test-mode.handlers.js';
import { clockOfMerchants, TestModeService, timeOfMerchants, type RelayNow } from '../test-mode/test-mode.service.js';
import { TriggersService } from '../test-mode/triggers.js';
import { EventsRepository } from '../events/events.repository.js';
import { EventsService } from '../events/events.service.js';
import { createApp } from '../http/app.js';
import { createHttpServer, type HttpLimits } from '../http/http-server.js';
import { RateLimiter } from '../http/rate-limit.js';
import { IdempotencyRepository } from '../idempotency/idempotency.repository.js';
import { KeyedMutex, UNQUEUED, type PerKeyQueue } from '../lib/keyed-mutex.js';
import { createLogger, type Logger } from '../logger.js';
import { PausePolicyRepository } from '../pause-policy/pause-policy.repository.js';
import { PausePolicyService } from '../pause-policy/pause-policy.service.js';
import { ScheduleWorker } from '../schedules/schedules.worker.js';
import { ScheduleClock } from '../subscriptions/schedule.clock.js';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository.js';
import { SubscriptionSeeder } from '../subscriptions/subscriptions.seed.js';
import { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import { DeliveriesRepository } from '../webhooks/deliveries.repository.js';
import { DeliveryQueue } from '../webhooks/delivery.queue.js';
import { EndpointsRepository } from '../webhooks/endpoints.repository.js';
import { EndpointsService } from '../webhooks/endpoints.service.js';
import { webhookHandlers } from '../webhooks/webhooks.handlers.js';
import { WebhooksWorker } from '../webhooks/webhooks.worker.js';
import { ReplayService } from '../webhooks/replay.js';
import { DELIVERY_TIMEOUT_MS } from '../webhooks/sender.js';
import {
  DEFAULT_HEARTBEAT_MS,
  expiredHeartbeats,
  Heartbeat,
  liveProcesses,
  type LiveProcess,
  type ProcessRole,
} from '../fleet/heartbeat.js';
import { readFleetStatus, type FleetStatus } from '../fleet/status.js';
import { serviceVersion } from '../lib/project-root.js';
import { readinessState } from '../http/health.routes.js';
import { enableMetrics, metrics, startMetricsServer, type Metrics } from '../observability/metrics.js';

export type ServiceConfig = Pick<
  Config,
  | 'authCacheTtlMs'
  | 'bulkConcurrency'
  | 'bulkLockLifetimeMs'
  | 'bulkPollIntervalMs'
  | 'schedulePollMs'
  | 'bulkRetentionDays'
  | 'dbTimeoutMs'
  | 'rateLimitBurst'
  | 'rateLimitPerSecond'
  | 'authFailuresPerMinute'
  | 'webhooksAllowPrivateUrls'
  | 'webhookRetryDelaysMs'
> &
  Partial<Pick<Config, 'metrics' | 'metricsPort' | 'heartbeatIntervalMs' | 'shutdownReadyDelayMs' | 'trustedProxies' | 'dbWorkarounds'>>;

/** What a worker process runs: bulk chunks, due schedules, the events outbox sweep, webhook deliveries and the retention sweep. */
export interface Workers {
  start(): Promise<void>;
  stop(deadlineMs: number): Promise<void>;
  readonly running: boolean;
  /** Bulk chunks this process applies at once: BULK_CONCURRENCY, or 1 where the server has one writer. */
  readonly concurrency: number;
}

/** Repositories and domain services: what the admin commands need. */
export interface Domain {
  readonly merchants: MerchantsRepository;
  readonly subscriptionsRepository: SubscriptionsRepository;
  readonly auth: AuthService;
  /** A merchant's API keys: list, make, roll, revoke (the API and `subsvc keys`). */
  readonly apiKeys: ApiKeysService;
  readonly subscriptions: SubscriptionsService;
  /** Each merchant's pause policy, cached for every service of the process that pauses (docs/design.md §11). */
  readonly pausePolicies: PausePolicyService;
  /** Creates subscriptions directly (admin command, demo, tests). */
  readonly seeder: SubscriptionSeeder;
}

/** The domain plus the workers and the HTTP app: what `serve`, `worker` and the tests need. */
export interface Service extends Domain {
  /**
   * Bulk, schedule and webhook workers, on the background client (see db/mongo.ts): start() takes
   * jobs and polls due schedules (unless BULK_CONCURRENCY=0), stop() drains them.
   */
  readonly workers: Workers;
  /** Bulk requests and their outcomes as stored. */
  readonly bulkRequests: BulkRepository;
  readonly idempotency: IdempotencyRepository;
  /** The sweep that deletes expired documents where the server has no TTL indexes (src/db/retention.ts); undefined where it has them. */
  readonly retention: RetentionSweeper | undefined;
  /** Marks the process as stopping: /readyz answers 503 from now on (src/http/health.routes.ts). */
  beginStopping(): void;
  /** The fleet as the last heartbeat read it: the per-merchant limit takes this process's share (src/fleet/heartbeat.ts). */
  fleetChanged(live: readonly LiveProcess[]): void;
  app(): Promise<Koa>;
}

/**
 * What the composition builds for the server's capabilities: each workaround only where the
 * capability whose absence turns it on is missing (src/db/workarounds.ts). On a server that has
 * them all, none: no per-subscription queue, no parts, no clock, no pauses, no sweeper.
 */
export interface Engine {
  readonly workarounds: Workarounds;
  /** The per-document queue (subscriptions and GUARDED, lib/keyed-mutex.ts) shared by every service and store of this process. */
  readonly mutex: PerKeyQueue;
  /** Bulk chunks (and webhook batches) one process runs at once. */
  readonly concurrency: (requested: number) => number;
  /** Whether the events relay waits for this process's bulk chunks and due schedules. */
  readonly relayPauses: boolean;
}

export function engineFor(capabilities: Capabilities, setting: DbWorkarounds = 'auto'): Engine {
  const workarounds = switchOff(workaroundsFor(capabilities), setting);
  return {
    workarounds,
    mutex: workarounds.keyedMutex ? new KeyedMutex() : UNQUEUED,
    concurrency: (requested) => (workarounds.oneJobAtATime ? Math.min(requested, 1) : requested),
    relayPauses: workarounds.relayPauses,
  };
}

/** Every repository over one database client. */
interface Stores {
  readonly merchants: MerchantsRepository;
  readonly subscriptions: SubscriptionsRepository;
  /** Undefined where the due query is served by an index. */
  readonly clock: ScheduleClock | undefined;
  readonly bulk: BulkRepository;
  readonly idempotency: IdempotencyRepository;
  readonly events: EventsRepository;
  readonly endpoints: EndpointsRepository;
  readonly deliveries: DeliveriesRepository;
  readonly pausePolicies: PausePolicyRepository;
  readonly testClocks: TestClocksRepository;
}

/** `guard`: the engine's per-document queue (Engine.mutex), shared by both clients' stores. */
function storesOn(db: Db, workarounds: Workarounds, retentionMs: number, guard: PerKeyQueue): Stores {
  const clock = workarounds.scheduleClock ? new ScheduleClock(db, guard) : undefined;
  const { statementsPerCommand, wholeDocumentAnswers, documentsPerDelete } = workarounds;
  return {
    merchants: new MerchantsRepository(db, guard),
    subscriptions: new SubscriptionsRepository(db, {
      clock,
      statementsPerCommand,
      updateProjection: !wholeDocumentAnswers,
      documentsPerDelete,
    }),
    clock,
    bulk: new BulkRepository(db, retentionMs, documentsPerDelete, guard),
    idempotency: new IdempotencyRepository(db, documentsPerDelete),
    events: new EventsRepository(db, documentsPerDelete),
    endpoints: new EndpointsRepository(db, guard),
    deliveries: new DeliveriesRepository(db, statementsPerCommand, documentsPerDelete),
    pausePolicies: new PausePolicyRepository(db, guard),
    testClocks: new TestClocksRepository(db, guard),
  };
}

async function ensureIndexes(stores: Stores, ttlIndexes: boolean): Promise<void> {
  await Promise.all([
    stores.merchants.ensureIndexes(),
    stores.subscriptions.ensureIndexes(),
    stores.bulk.ensureIndexes(ttlIndexes),
    stores.idempotency.ensureIndexes(ttlIndexes),
    stores.events.ensureIndexes(ttlIndexes),
    stores.endpoints.ensureIndexes(),
    stores.deliveries.ensureIndexes(ttlIndexes),
  ]);
}

/** The admin commands' domain, on one client (src/main/cli.ts). */
export async function composeDomain(
  database: Pick<Database, 'db' | 'capabilities'>,
  config: Pick<Config, 'authCacheTtlMs' | 'bulkRetentionDays'> & Partial<Pick<Config, 'dbWorkarounds'>>,
  log: Logger = createLogger('silent'),
): Promise<Domain> {
  const engine = engineFor(database.capabilities, config.dbWorkarounds);
  const stores = storesOn(database.db, engine.workarounds, config.bulkRetentionDays * 24 * 60 * 60 * 1000, engine.mutex);
  await Promise.all([stores.merchants.ensureIndexes(), stores.subscriptions.ensureIndexes()]);
  return domainOn(stores, engine.mutex, config, log);
}

function domainOn(stores: Stores, mutex: PerKeyQueue, config: Pick<Config, 'authCacheTtlMs'>, log: Logger): Domain {
  const auth = new AuthService(
    stores.merchants,
    config.authCacheTtlMs,
    new LastUsedRecorder(stores.merchants, log.child({ component: 'auth' })),
  );
  const pausePolicies = new PausePolicyService(stores.pausePolicies);
  return {
    merchants: stores.merchants,
    subscriptionsRepository: stores.subscriptions,
    auth,
    apiKeys: new ApiKeysService(stores.merchants, auth),
    subscriptions: new SubscriptionsService(stores.subscriptions, mutex, pausePolicies, clockOfMerchants(stores.testClocks)),
    pausePolicies,
    seeder: new SubscriptionSeeder(stores.subscriptions),
  };
}

/**
 * What the whole fleet is doing (src/fleet/status.ts), each figure read by the store that owns its
 * collection, on `db`: `subsvc status` and the fleet gauges of /metrics.
 */
export function fleetStatusOn(
  db: Db,
  heartbeatIntervalMs: number,
  { subscriptions, endpoints }: Pick<Stores, 'subscriptions' | 'endpoints'> = {
    subscriptions: new SubscriptionsRepository(db),
    endpoints: new EndpointsRepository(db),
  },
): () => Promise<FleetStatus> {
  return () =>
    readFleetStatus({
      live: (now) => liveProcesses(db, heartbeatIntervalMs, now),
      chunksQueued: (cap) => chunksQueued(db, cap),
      oldestChunkAt: () => oldestChunkAt(db),
      countDue: (now, cap) => subscriptions.countDue(now, cap),
      countOutboxes: (cap) => subscriptions.countOutboxes(cap),
      oldestOutboxEntry: (sample) => subscriptions.oldestOutboxEntry(sample),
      countDisabledEndpoints: (cap) => endpoints.countDisabled(cap),
    });
}

/** The process's metrics unless METRICS=off, listening to the connection pools of both clients (src/observability/metrics.ts). */
function metricsFor(database: Pick<Database, 'clients'>, config: Pick<ServiceConfig, 'metrics'>): Metrics | undefined {
  if (config.metrics === false) return undefined;
  const registry = enableMetrics();
  // Instrumented once each, however many services share the clients.
  registry.instrumentClient(database.clients.request, 'request');
  registry.instrumentClient(database.clients.background, 'background');
  return registry;
}

/**
 * Requests use `database.db`; everything that runs in the background (the dispatch after a 202,
 * the workers, Agenda, the events relay) uses `database.background`, so that its writes get the
 * longer BULK_DB_TIMEOUT_MS: one set of repositories on each (one set when they are the same
 * client, as in a worker process). Every subscriptions service of the process shares one
 * per-subscription queue, where the server needs one.
 */
export async function composeService(
  database: Database,
  config: ServiceConfig,
  log: Logger,
  healthy: () => boolean = () => true,
): Promise<Service> {
  const { db, background, capabilities } = database;
  const engine = engineFor(capabilities, config.dbWorkarounds);
  const { workarounds, mutex } = engine;
  const turnedOn = describeWorkarounds(workarounds);
  const turnedOff = describeWorkarounds(workaroundsFor(capabilities)).filter((w) =>
    switchedOff(config.dbWorkarounds ?? 'auto').includes(w.workaround),
  );
  if (turnedOff.length > 0)
    log.warn(
      { workarounds: turnedOff },
      `engine workarounds this server needs, switched off by DB_WORKAROUNDS: ${turnedOff.map((w) => w.workaround).join(', ')}`,
    );
  // Names only, in one line: docs/design.md §8 is the one place that says what each changes and why.
  if (turnedOn.length > 0)
    log.warn(`engine workarounds turned on: ${turnedOn.map((w) => w.workaround).join(', ')} (why: docs/design.md §8)`);
  else log.info('engine workarounds: none (the server has every capability)');
  const retentionMs = config.bulkRetentionDays * 24 * 60 * 60 * 1000;
  const stores = storesOn(db, workarounds, retentionMs, mutex);
  const backgroundStores = background === db ? stores : storesOn(background, workarounds, retentionMs, mutex);
  await ensureIndexes(stores, capabilities.ttlIndexes);
  const domain = domainOn(stores, mutex, config, log);
  const { auth, apiKeys, subscriptions, pausePolicies } = domain;

  const concurrency = engine.concurrency(config.bulkConcurrency);
  const bulkQueue = new BulkQueue(background, log, {
    concurrency,
    lockLifetimeMs: config.bulkLockLifetimeMs,
    pollIntervalMs: config.bulkPollIntervalMs,
  });
  const dispatcher = new BulkDispatcher(backgroundStores.bulk, bulkQueue, log);
  // The same policy cache as the requests': a policy replaced by this process applies to its workers at once.
  const workerSubscriptions = new SubscriptionsService(
    backgroundStores.subscriptions,
    mutex,
    pausePolicies,
    clockOfMerchants(backgroundStores.testClocks),
  );
  const schedules = new ScheduleWorker(workerSubscriptions, backgroundStores.clock, config.schedulePollMs, log);
  // A pending time written by this process's requests or workers wakes its schedule worker for it.
  for (const store of new Set([stores.subscriptions, backgroundStores.subscriptions])) store.onPendingTimes((at) => schedules.wakeBy(at));

  // Events and webhooks: the relay listens to every service that changes subscriptions, so that each change is relayed right after it (and by the sweep if that fails).
  const allowPrivateUrls = config.webhooksAllowPrivateUrls;
  const deliveryQueue = new DeliveryQueue(background, log.child({ component: 'webhooks' }), {
    concurrency,
    pollIntervalMs: config.bulkPollIntervalMs,
    lockLifetimeMs: config.bulkLockLifetimeMs,
  });
  const webhooks = new WebhooksWorker(
    backgroundStores.endpoints,
    backgroundStores.deliveries,
    backgroundStores.events,
    deliveryQueue,
    { allowPrivateUrls, retryDelaysMs: config.webhookRetryDelaysMs },
    log,
  );
  const busy = engine.relayPauses ? (): boolean => bulkWorker.busy || schedules.busy : (): boolean => false;
  const relay: EventsRelay = new EventsRelay(backgroundStores.events, backgroundStores.subscriptions, webhooks, log, mutex, busy);
  for (const service of [subscriptions, workerSubscriptions])
    service.changes.onChange((merchantId, ids, held) => relay.relaySoon(merchantId, ids, held));
  const backgroundStatus = new BulkStatusService(backgroundStores.bulk);
  const bulkCompleted: CompletionHook = async (merchantId, requestIds, traces) =>
    relay.bulkCompleted(merchantId, await backgroundStatus.getMany(merchantId, requestIds), traces);
  const bulkWorker: BulkWorker = new BulkWorker(backgroundStores.bulk, workerSubscriptions, bulkQueue, dispatcher, log, bulkCompleted);

  const retention = workarounds.expirySweeps
    ? new RetentionSweeper(
        {
          'idempotency keys': stores.idempotency,
          'bulk requests': backgroundStores.bulk,
          events: backgroundStores.events,
          'webhook deliveries': backgroundStores.deliveries,
          heartbeats: expiredHeartbeats(background),
        },
        log,
      )
    : undefined;
  const workers: Workers = {
    start: async () => {
      retention?.start();
      await bulkWorker.start();
      // Where bulk workers run (not in an HTTP-only process), due schedules, the outbox sweep and deliveries run too.
      if (!bulkWorker.running) return;
      relay.start();
      await webhooks.start();
      schedules.start();
    },
    // In order, before the database clients close: what changes subscriptions first (bulk chunks,
    // due schedules), then the relay (it relays what is waiting and takes nothing new), then the
    // deliveries it handed over, each within what is left of the deadline.
    stop: async (deadlineMs) => {
      const deadline = Date.now() + deadlineMs;
      const left = () => Math.max(deadline - Date.now(), 0);
      await Promise.all([bulkWorker.stop(deadlineMs), schedules.stop(), retention?.stop()]);
      await relay.stop(left());
      await webhooks.stop(left());
    },
    get running() {
      return bulkWorker.running;
    },
    concurrency,
  };
  const bulk = new BulkService(
    { subscriptions: stores.subscriptions, requests: stores.bulk },
    // A request by filter reads and stores up to 100,000 ids: bounded by BULK_DB_TIMEOUT_MS (docs/design.md §6a).
    { subscriptions: backgroundStores.subscriptions, requests: backgroundStores.bulk },
    dispatcher,
    log,
    pausePolicies,
    timeOfMerchants(stores.testClocks),
  );
  const endpoints = new EndpointsService(stores.endpoints, allowPrivateUrls);
  /** What a test helper changed: its events recorded and their first deliveries attempted before it answers. */
  const relayNow: RelayNow = (ids) => relay.relay(ids, DELIVERY_TIMEOUT_MS);
  const limiter = config.rateLimitPerSecond > 0 ? new RateLimiter(config.rateLimitBurst, config.rateLimitPerSecond) : undefined;
  /** The live HTTP processes this process's share of the limit was last taken from. */
  let share = 1;
  let stopping = false;
  const readiness = {
    db,
    timeoutMs: config.dbTimeoutMs,
    reachable: () => database.reachable(),
    healthy,
    workersRunning: () => (concurrency === 0 ? undefined : workers.running),
    stopping: () => stopping,
  };
  const registry = metricsFor(database, config);
  registry?.sources(
    fleetStatusOn(background, config.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_MS, backgroundStores),
    async () => (await readinessState(readiness)).ready,
  );
  return {
    ...domain,
    workers,
    bulkRequests: backgroundStores.bulk,
    idempotency: stores.idempotency,
    retention,
    beginStopping: () => {
      stopping = true;
    },
    fleetChanged: (live) => {
      const httpProcesses = Math.max(1, live.filter((p) => p.http).length);
      if (!limiter || httpProcesses === share) return;
      share = httpProcesses;
      limiter.setShare(httpProcesses);
      log.info(
        { httpProcesses, burst: config.rateLimitBurst / httpProcesses, perSecond: config.rateLimitPerSecond / httpProcesses },
        'rate limit share changed',
      );
    },
    app: () =>
      createApp({
        auth,
        apiKeys,
        subscriptions,
        pausePolicies,
        bulk,
        bulkStatus: new BulkStatusService(stores.bulk),
        bulkUndo: new BulkUndoService(stores.bulk, stores.subscriptions, bulk),
        webhooks: {
          ...eventHandlers(new EventsService(stores.events), webhooks),
          ...webhookHandlers(endpoints, stores.deliveries, new ReplayService(endpoints, stores.events, webhooks)),
        },
        testHelpers: testModeHandlers(
          new TestModeService(stores.testClocks, subscriptions, stores.subscriptions, domain.seeder, relayNow),
          new TriggersService(subscriptions, bulk, domain.seeder, stores.events, relayNow),
        ),
        log,
        idempotency: stores.idempotency,
        limiter,
        authFailures:
          config.authFailuresPerMinute > 0
            ? new RateLimiter(config.authFailuresPerMinute, config.authFailuresPerMinute / 60, { scope: 'address' })
            : undefined,
        trustedProxies: config.trustedProxies ?? [],
        readiness,
        metrics: registry && { registry, route: config.metricsPort === undefined },
      }),
  };
}

export interface RunningService {
  readonly service: Service;
  readonly server: Server;
  readonly url: string;
  /** GET /metrics on its own listener (METRICS_PORT); undefined: on `url`, or metrics off. */
  readonly metricsUrl: string | undefined;
  /** Stops accepting requests, drains the workers within the deadline, closes the server (not the database). */
  stop(deadlineMs: number): Promise<void>;
}

export interface ListenOptions {
  readonly port: number;
  readonly host: string;
  /** What /healthz reports (db/connection-watch.ts); always healthy without one. */
  readonly healthy?: () => boolean;
  /** false: the caller starts the workers itself, with service.workers.start() (default true). */
  readonly startWorkers?: boolean;
}

function listen(server: Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const { port: actual } = server.address() as AddressInfo;
      resolve(`http://${host.includes(':') ? `[${host}]` : host}:${actual}`);
    });
  });
}

/** The process's heartbeat (src/fleet/heartbeat.ts); what it reads of the fleet goes to the service (the rate limit's share). */
export function startHeartbeat(database: Database, config: ServiceConfig, log: Logger, service: Service, role: ProcessRole): Heartbeat {
  const version = serviceVersion();
  metrics()?.identify(version, role);
  return new Heartbeat(
    database.background,
    {
      role,
      http: role === 'serve',
      version,
      intervalMs: config.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_MS,
      ttlIndexes: database.capabilities.ttlIndexes,
      onFleet: (live) => service.fleetChanged(live),
    },
    log,
  );
}

/** METRICS_PORT: /metrics on a listener of its own (src/observability/metrics.ts). */
export async function startMetricsListener(
  config: ServiceConfig,
  host: string,
  log: Logger,
): Promise<{ url: string; close(): Promise<void> } | undefined> {
  const registry = metrics();
  if (!registry || config.metricsPort === undefined) return undefined;
  const listening = await startMetricsServer(registry, config.metricsPort, host);
  log.info({ url: listening.url }, 'metrics listening');
  return listening;
}

/** The service listening, with its workers started: the one assembly everything runs. */
export async function startService(
  database: Database,
  config: ServiceConfig & HttpLimits,
  log: Logger,
  options: ListenOptions,
): Promise<RunningService> {
  const service = await composeService(database, config, log, options.healthy);
  const handle = (await service.app()).callback();
  // Koa answers a request's error itself (ctx.onerror): the promise a request's handling returns never rejects.
  const server = createHttpServer(config, (req, res) => void handle(req, res));
  // Counted among the HTTP processes before the first request, so that the rate limit's share is right from the start.
  const heartbeat = startHeartbeat(database, config, log, service, 'serve');
  await heartbeat.start();
  let url: string;
  let metricsServer: Awaited<ReturnType<typeof startMetricsListener>>;
  try {
    url = await listen(server, options.port, options.host);
    metricsServer = await startMetricsListener(config, options.host, log);
  } catch (error) {
    server.close();
    await heartbeat.stop();
    throw error;
  }
  if (options.startWorkers !== false) await service.workers.start();
  return {
    service,
    server,
    url,
    metricsUrl: metricsServer?.url,
    async stop(deadlineMs) {
      // Not ready first, still serving: a load balancer probing /readyz stops sending before the listener closes.
      service.beginStopping();
      if (config.shutdownReadyDelayMs) await new Promise((resolve) => setTimeout(resolve, config.shutdownReadyDelayMs));
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const deadline = Date.now() + deadlineMs;
      // Background work stops in its order before the clients close (Workers.stop).
      await service.workers.stop(deadlineMs);
      // Requests in flight finish (the server closes once their connections end), within the deadline; only then are the rest cut.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([closed, new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))))]);
      clearTimeout(timer);
      server.closeAllConnections();
      await closed;
      await Promise.all([service.auth.flush(), heartbeat.stop(), metricsServer?.close()]);
    },
  };
}
