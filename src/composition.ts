/**
 * The composition root: every repository, service and entry point built once, dependencies
 * passed in; and startService(), the one assembly of HTTP server and bulk workers that `serve`,
 * the tests and the scripts all run.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Db } from 'mongodb';
import { AuthService } from './auth/auth.service.js';
import { MerchantsRepository } from './auth/merchants.repository.js';
import { BulkQueue } from './bulk/bulk.jobs.js';
import { BulkService } from './bulk/bulk.service.js';
import type { Config } from './config.js';
import type { Database } from './db/mongo.js';
import { createApp } from './http/app.js';
import { createHttpServer, type HttpLimits } from './http/http-server.js';
import { RateLimiter } from './http/rate-limit.js';
import { IdempotencyRepository } from './idempotency/idempotency.repository.js';
import type { Logger } from './logger.js';
import { SubscriptionsRepository } from './subscriptions/subscriptions.repository.js';
import { SubscriptionsService } from './subscriptions/subscriptions.service.js';

export type ServiceConfig = Pick<
  Config,
  'authCacheTtlMs' | 'bulkConcurrency' | 'bulkLockLifetimeMs' | 'bulkPollIntervalMs' | 'dbTimeoutMs' | 'rateLimitBurst' | 'rateLimitPerSecond'
>;

/** Repositories and domain services: what the admin commands need. */
export interface Domain {
  readonly merchants: MerchantsRepository;
  readonly subscriptionsRepository: SubscriptionsRepository;
  readonly auth: AuthService;
  readonly subscriptions: SubscriptionsService;
}

/** The domain plus the bulk queue and the HTTP app: what `serve`, `worker` and the tests need. */
export interface Service extends Domain {
  /** The workers' queue, on the background client (see db/mongo.ts). */
  readonly queue: BulkQueue;
  readonly idempotency: IdempotencyRepository;
  app(): Promise<Koa>;
}

export async function composeDomain(db: Db, config: Pick<Config, 'authCacheTtlMs'>): Promise<Domain> {
  const merchants = new MerchantsRepository(db);
  const subscriptionsRepository = new SubscriptionsRepository(db);
  await Promise.all([merchants.ensureIndexes(), subscriptionsRepository.ensureIndexes()]);
  return {
    merchants,
    subscriptionsRepository,
    auth: new AuthService(merchants, config.authCacheTtlMs),
    subscriptions: new SubscriptionsService(subscriptionsRepository),
  };
}

/**
 * Requests use `database.db`; the workers use `database.background`, with their own
 * SubscriptionsService over it, so that their writes get the longer BULK_DB_TIMEOUT_MS. The
 * request side queues through a producer of its own on `database.db`, which runs no worker.
 */
export async function composeService(database: Database, config: ServiceConfig, log: Logger, healthy: () => boolean = () => true): Promise<Service> {
  const { db, background, capabilities } = database;
  const domain = await composeDomain(db, config);
  const { auth, subscriptions, subscriptionsRepository } = domain;
  // FerretDB's SQLite backend has one writer per database: chunks applied in parallel only
  // contend for it (and fail with "database is locked"), so there they run one at a time.
  const concurrency = capabilities.parallelWriters ? config.bulkConcurrency : Math.min(config.bulkConcurrency, 1);
  if (concurrency !== config.bulkConcurrency) {
    log.warn({ requested: config.bulkConcurrency, concurrency }, 'one writer at a time on this server: bulk chunks are applied one at a time per process');
  }
  const queueOptions = { lockLifetimeMs: config.bulkLockLifetimeMs, pollIntervalMs: config.bulkPollIntervalMs };
  const workerSubscriptions = new SubscriptionsService(new SubscriptionsRepository(background));
  const queue = new BulkQueue(background, workerSubscriptions, log, { ...queueOptions, concurrency });
  const producer = new BulkQueue(db, subscriptions, log, { ...queueOptions, concurrency: 0 });
  await producer.startWorkers();
  const bulk = new BulkService(subscriptionsRepository, producer);
  const idempotency = new IdempotencyRepository(db);
  await idempotency.ensureIndexes(capabilities.ttlIndexes, log);
  return {
    ...domain,
    queue,
    idempotency,
    app: () =>
      createApp({
        auth,
        subscriptions,
        bulk,
        log,
        idempotency,
        limiter: config.rateLimitPerSecond > 0 ? new RateLimiter(config.rateLimitBurst, config.rateLimitPerSecond) : undefined,
        readiness: {
          db,
          timeoutMs: config.dbTimeoutMs,
          healthy,
          workersRunning: () => (concurrency === 0 ? undefined : queue.workersRunning),
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
  /** false: the caller starts the workers itself, with service.queue.startWorkers() (default true). */
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
  if (options.startWorkers !== false) await service.queue.startWorkers();
  return {
    service,
    server,
    url,
    async stop(deadlineMs) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await service.queue.stop(deadlineMs);
      server.closeAllConnections();
      await closed;
    },
  };
}
