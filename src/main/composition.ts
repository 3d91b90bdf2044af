/**
 * The composition root: every repository, service and entry point built once, dependencies
 * passed in; and startService(), the one assembly of HTTP server and bulk workers that `serve`,
 * the tests and the scripts all run.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Db } from 'mongodb';
import { AuthService } from '../auth/auth.service.js';
import { MerchantsRepository } from '../auth/merchants.repository.js';
import { BulkDispatcher } from '../bulk/bulk.dispatcher.js';
import { BulkQueue } from '../bulk/bulk.queue.js';
import { BulkRepository } from '../bulk/bulk.repository.js';
import { BulkService } from '../bulk/bulk.service.js';
import { BulkStatusService } from '../bulk/bulk.status.js';
import { BulkWorker } from '../bulk/bulk.worker.js';
import type { Config } from '../config.js';
import type { Database } from '../db/mongo.js';
import { createApp } from '../http/app.js';
import { createHttpServer, type HttpLimits } from '../http/http-server.js';
import { RateLimiter } from '../http/rate-limit.js';
import { IdempotencyRepository } from '../idempotency/idempotency.repository.js';
import { KeyedMutex } from '../lib/keyed-mutex.js';
import { SchedulesRepository } from '../schedules/schedules.repository.js';
import { SchedulesService } from '../schedules/schedules.service.js';
import { ScheduleWorker } from '../schedules/schedules.worker.js';
import type { Logger } from '../logger.js';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository.js';
import { SubscriptionSeeder } from '../subscriptions/subscriptions.seed.js';
import { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import { composeEventsAndWebhooks, type WebhooksConfig } from '../webhooks/webhooks.compose.js';

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
> & WebhooksConfig;

/** What a worker process runs: bulk chunks, the events outbox sweep and webhook deliveries. */
export interface Workers {
  start(): Promise<void>;
  stop(deadlineMs: number): Promise<void>;
  readonly running: boolean;
}

/** Repositories and domain services: what the admin commands need. */
export interface Domain {
  readonly merchants: MerchantsRepository;
  readonly subscriptionsRepository: SubscriptionsRepository;
  readonly auth: AuthService;
  readonly subscriptions: SubscriptionsService;
  /** Creates subscriptions directly (admin command, demo, tests). */
  readonly seeder: SubscriptionSeeder;
}

/** The domain plus the bulk workers and the HTTP app: what `serve`, `worker` and the tests need. */
export interface Service extends Domain {
  /**
   * Bulk, webhook and schedule workers, on the background client (see db/mongo.ts): start() takes
   * jobs and polls due schedules (unless BULK_CONCURRENCY=0), stop() drains them.
   */
  readonly workers: Workers;
  /** Bulk requests and their outcomes as stored (the retention sweep is here). */
  readonly bulkRequests: BulkRepository;
  readonly idempotency: IdempotencyRepository;
  app(): Promise<Koa>;
}

export async function composeDomain(db: Db, config: Pick<Config, 'authCacheTtlMs'>, mutex = new KeyedMutex()): Promise<Domain> {
  const merchants = new MerchantsRepository(db);
  const subscriptionsRepository = new SubscriptionsRepository(db);
  await Promise.all([merchants.ensureIndexes(), subscriptionsRepository.ensureIndexes()]);
  return {
    merchants,
    subscriptionsRepository,
    auth: new AuthService(merchants, config.authCacheTtlMs),
    subscriptions: new SubscriptionsService(subscriptionsRepository, mutex),
    seeder: new SubscriptionSeeder(subscriptionsRepository),
  };
}

/**
 * Requests use `database.db`; everything that runs in the background (the dispatch after a 202,
 * the workers, Agenda) uses `database.background`, so that its writes get the longer
 * BULK_DB_TIMEOUT_MS. Both sides' subscription services share one per-subscription mutex, so
 * that single and bulk changes to one subscription are serialised in this process.
 */
export async function composeService(database: Database, config: ServiceConfig, log: Logger, healthy: () => boolean = () => true): Promise<Service> {
  const { db, background, capabilities } = database;
  const mutex = new KeyedMutex();
  const domain = await composeDomain(db, config, mutex);
  const { auth, subscriptions, subscriptionsRepository } = domain;
  // FerretDB's SQLite backend has one writer per database: chunks applied in parallel only
  // contend for it (and fail with "database is locked"), so there they run one at a time.
  const concurrency = capabilities.parallelWriters ? config.bulkConcurrency : Math.min(config.bulkConcurrency, 1);
  if (concurrency !== config.bulkConcurrency) {
    log.warn({ requested: config.bulkConcurrency, concurrency }, 'one writer at a time on this server: bulk chunks are applied one at a time per process');
  }
  const retentionMs = config.bulkRetentionDays * 24 * 60 * 60 * 1000;
  const queue = new BulkQueue(background, log, { concurrency, lockLifetimeMs: config.bulkLockLifetimeMs, pollIntervalMs: config.bulkPollIntervalMs });
  const bulkRepository = new BulkRepository(db, retentionMs);
  const backgroundBulk = new BulkRepository(background, retentionMs);
  await bulkRepository.ensureIndexes();
  const dispatcher = new BulkDispatcher(backgroundBulk, queue, log);
  const backgroundSubscriptions = new SubscriptionsRepository(background);
  const workerSubscriptions = new SubscriptionsService(backgroundSubscriptions, mutex);
  const schedules = new ScheduleWorker(new SchedulesRepository(background), mutex, config.schedulePollMs, log);
  const webhooks = await composeEventsAndWebhooks(database, config, concurrency, {
    changes: [subscriptions.changes, workerSubscriptions.changes, schedules.changes],
    bulkStatus: new BulkStatusService(backgroundBulk),
    mutex,
    busy: () => bulkWorker.busy || schedules.busy,
  }, log);
  const bulkWorker = new BulkWorker(backgroundBulk, workerSubscriptions, queue, dispatcher, log, webhooks.bulkCompleted);
  const workers: Workers = {
    start: async () => {
      await bulkWorker.start();
      await webhooks.start();
      // Where bulk workers run (not in an HTTP-only process), due schedules are applied too.
      if (bulkWorker.running) schedules.start();
    },
    stop: async (deadlineMs) => {
      await Promise.all([bulkWorker.stop(deadlineMs), webhooks.stop(deadlineMs), schedules.stop()]);
    },
    get running() {
      return bulkWorker.running;
    },
  };
  const bulk = new BulkService(
    { subscriptions: subscriptionsRepository, requests: bulkRepository },
    { subscriptions: backgroundSubscriptions, requests: backgroundBulk },
    dispatcher,
    log,
  );
  const idempotency = new IdempotencyRepository(db);
  await idempotency.ensureIndexes(capabilities.ttlIndexes, log);
  return {
    ...domain,
    workers,
    bulkRequests: backgroundBulk,
    idempotency,
    app: () =>
      createApp({
        auth,
        subscriptions,
        schedules: new SchedulesService(subscriptionsRepository, mutex),
        bulk,
        bulkStatus: new BulkStatusService(bulkRepository),
        webhooks: webhooks.handlers,
        log,
        idempotency,
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
    },
  };
}
