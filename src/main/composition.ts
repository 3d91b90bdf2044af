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
import { BulkQueue } from '../bulk/bulk.queue.js';
import { BulkRepository } from '../bulk/bulk.repository.js';
import { BulkService } from '../bulk/bulk.service.js';
import { BulkStatusService } from '../bulk/bulk.status.js';
import { BulkWorker } from '../bulk/bulk.worker.js';
import type { Config } from '../config.js';
import type { Capabilities, Database } from '../db/mongo.js';
import { RetentionSweeper } from '../db/retention.js';
import { describeWorkarounds, workaroundsFor, type Workarounds } from '../db/workarounds.js';
import { eventHandlers } from '../events/events.handlers.js';
import { EventsRelay } from '../events/events.relay.js';
import { EventsRepository } from '../events/events.repository.js';
import { EventsService } from '../events/events.service.js';
import { createApp } from '../http/app.js';
import { createHttpServer, type HttpLimits } from '../http/http-server.js';
import { RateLimiter } from '../http/rate-limit.js';
import { IdempotencyRepository } from '../idempotency/idempotency.repository.js';
import { KeyedMutex, UNQUEUED, type PerKeyQueue } from '../lib/keyed-mutex.js';
import { createLogger, type Logger } from '../logger.js';
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
>;

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
  app(): Promise<Koa>;
}

/**
 * What the composition builds for the server's capabilities: each workaround only where the
 * capability whose absence turns it on is missing (src/db/workarounds.ts). On a server that has
 * them all, none: no per-subscription queue, no parts, no clock, no pauses, no sweeper.
 */
export interface Engine {
  readonly workarounds: Workarounds;
  /** The per-subscription queue shared by every service of this process that changes subscriptions. */
  readonly mutex: PerKeyQueue;
  /** Bulk chunks (and webhook batches) one process runs at once. */
  readonly concurrency: (requested: number) => number;
  /** Whether the events relay waits for this process's bulk chunks and due schedules. */
  readonly relayPauses: boolean;
}

export function engineFor(capabilities: Capabilities): Engine {
  const workarounds = workaroundsFor(capabilities);
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
}

function storesOn(db: Db, workarounds: Workarounds, retentionMs: number): Stores {
  const clock = workarounds.scheduleClock ? new ScheduleClock(db) : undefined;
  const { statementsPerCommand } = workarounds;
  return {
    merchants: new MerchantsRepository(db),
    subscriptions: new SubscriptionsRepository(db, { clock, statementsPerCommand }),
    clock,
    bulk: new BulkRepository(db, retentionMs),
    idempotency: new IdempotencyRepository(db),
    events: new EventsRepository(db),
    endpoints: new EndpointsRepository(db),
    deliveries: new DeliveriesRepository(db, statementsPerCommand),
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
  config: Pick<Config, 'authCacheTtlMs' | 'bulkRetentionDays'>,
  log: Logger = createLogger('silent'),
): Promise<Domain> {
  const engine = engineFor(database.capabilities);
  const stores = storesOn(database.db, engine.workarounds, config.bulkRetentionDays * 24 * 60 * 60 * 1000);
  await Promise.all([stores.merchants.ensureIndexes(), stores.subscriptions.ensureIndexes()]);
  return domainOn(stores, engine.mutex, config, log);
}

function domainOn(stores: Stores, mutex: PerKeyQueue, config: Pick<Config, 'authCacheTtlMs'>, log: Logger): Domain {
  const auth = new AuthService(stores.merchants, config.authCacheTtlMs, new LastUsedRecorder(stores.merchants, log.child({ component: 'auth' })));
  return {
    merchants: stores.merchants,
    subscriptionsRepository: stores.subscriptions,
    auth,
    apiKeys: new ApiKeysService(stores.merchants, auth),
    subscriptions: new SubscriptionsService(stores.subscriptions, mutex),
    seeder: new SubscriptionSeeder(stores.subscriptions),
  };
}

/**
 * Requests use `database.db`; everything that runs in the background (the dispatch after a 202,
 * the workers, Agenda, the events relay) uses `database.background`, so that its writes get the
 * longer BULK_DB_TIMEOUT_MS: one set of repositories on each (one set when they are the same
 * client, as in a worker process). Every subscriptions service of the process shares one
 * per-subscription queue, where the server needs one.
 */
export async function composeService(database: Database, config: ServiceConfig, log: Logger, healthy: () => boolean = () => true): Promise<Service> {
  const { db, background, capabilities } = database;
  const engine = engineFor(capabilities);
  const { workarounds, mutex } = engine;
  const turnedOn = describeWorkarounds(workarounds);
  if (turnedOn.length > 0) log.warn({ workarounds: turnedOn }, `engine workarounds turned on: ${turnedOn.map((w) => w.workaround).join(', ')}`);
  else log.info('engine workarounds: none (the server has every capability)');
  const retentionMs = config.bulkRetentionDays * 24 * 60 * 60 * 1000;
  const stores = storesOn(db, workarounds, retentionMs);
  const backgroundStores = background === db ? stores : storesOn(background, workarounds, retentionMs);
  await ensureIndexes(stores, capabilities.ttlIndexes);
  const domain = domainOn(stores, mutex, config, log);
  const { auth, apiKeys, subscriptions } = domain;

  const concurrency = engine.concurrency(config.bulkConcurrency);
  const bulkQueue = new BulkQueue(background, log, { concurrency, lockLifetimeMs: config.bulkLockLifetimeMs, pollIntervalMs: config.bulkPollIntervalMs });
  const dispatcher = new BulkDispatcher(backgroundStores.bulk, bulkQueue, log);
  const workerSubscriptions = new SubscriptionsService(backgroundStores.subscriptions, mutex);
  const schedules = new ScheduleWorker(workerSubscriptions, backgroundStores.clock, config.schedulePollMs, log);

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
  for (const service of [subscriptions, workerSubscriptions]) service.changes.onChange((ids) => relay.relaySoon(ids));
  const backgroundStatus = new BulkStatusService(backgroundStores.bulk);
  const bulkCompleted = async (merchantId: string, requestId: string): Promise<void> => relay.bulkCompleted(merchantId, await backgroundStatus.get(merchantId, requestId));
  const bulkWorker: BulkWorker = new BulkWorker(backgroundStores.bulk, workerSubscriptions, bulkQueue, dispatcher, log, bulkCompleted);

  const retention = workarounds.expirySweeps
    ? new RetentionSweeper({ 'idempotency keys': stores.idempotency, 'bulk requests': backgroundStores.bulk, events: backgroundStores.events, 'webhook deliveries': backgroundStores.deliveries }, log)
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
  const bulk = new BulkService(stores.subscriptions, stores.bulk, dispatcher, log);
  const endpoints = new EndpointsService(stores.endpoints, allowPrivateUrls);
  return {
    ...domain,
    workers,
    bulkRequests: backgroundStores.bulk,
    idempotency: stores.idempotency,
    app: () =>
      createApp({
        auth,
        apiKeys,
        subscriptions,
        bulk,
        bulkStatus: new BulkStatusService(stores.bulk),
        webhooks: { ...eventHandlers(new EventsService(stores.events), webhooks), ...webhookHandlers(endpoints, stores.deliveries) },
        log,
        idempotency: stores.idempotency,
        limiter: config.rateLimitPerSecond > 0 ? new RateLimiter(config.rateLimitBurst, config.rateLimitPerSecond) : undefined,
        authFailures: config.authFailuresPerMinute > 0
          ? new RateLimiter(config.authFailuresPerMinute, config.authFailuresPerMinute / 60, { scope: 'address' })
          : undefined,
        readiness: {
          db,
          timeoutMs: config.dbTimeoutMs,
          healthy,
          workersRunning: () => (concurrency === 0 ? undefined : workers.running),
        },
      }),
  };
}

export interface RunningService {
  readonly service: Service;
  readonly server: Server;
  readonly url: string;
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

/** The service listening, with its workers started: the one assembly everything runs. */
export async function startService(database: Database, config: ServiceConfig & HttpLimits, log: Logger, options: ListenOptions): Promise<RunningService> {
  const service = await composeService(database, config, log, options.healthy);
  const server = createHttpServer(config, (await service.app()).callback());
  const url = await listen(server, options.port, options.host);
  if (options.startWorkers !== false) await service.workers.start();
  return {
    service,
    server,
    url,
    async stop(deadlineMs) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await service.workers.stop(deadlineMs);
      server.closeAllConnections();
      await closed;
      await service.auth.flush();
    },
  };
}
