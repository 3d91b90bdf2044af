/** The composition root: every repository, service and entry point built once, dependencies passed in. */
import type Koa from 'koa';
import type { Db } from 'mongodb';
import { AuthService } from './auth/auth.service.js';
import { MerchantsRepository } from './auth/merchants.repository.js';
import { BulkDispatcher } from './bulk/bulk.dispatcher.js';
import { BulkQueue } from './bulk/bulk.queue.js';
import { BulkRepository } from './bulk/bulk.repository.js';
import { BulkService } from './bulk/bulk.service.js';
import { BulkStatusService } from './bulk/bulk.status.js';
import { BulkWorker } from './bulk/bulk.worker.js';
import type { Config } from './config.js';
import { detectEngine } from './db/mongo.js';
import { createApp } from './http/app.js';
import { RateLimiter } from './http/rate-limit.js';
import { IdempotencyRepository } from './idempotency/idempotency.repository.js';
import type { Logger } from './logger.js';
import { SubscriptionsRepository } from './subscriptions/subscriptions.repository.js';
import { SubscriptionsService } from './subscriptions/subscriptions.service.js';

export type ServiceConfig = Pick<
  Config,
  | 'authCacheTtlMs'
  | 'workers'
  | 'bulkLockLifetimeMs'
  | 'bulkPollIntervalMs'
  | 'dbTimeoutMs'
  | 'rateLimitBurst'
  | 'rateLimitPerSecond'
  | 'bulkRetentionDays'
  | 'authFailuresPerMinute'
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
  /** Bulk workers: start() takes chunk jobs (unless WORKERS=0), stop() drains them. */
  readonly workers: BulkWorker;
  /** Bulk requests and their outcomes as stored (the retention sweep is here). */
  readonly bulkRequests: BulkRepository;
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

export async function composeService(db: Db, config: ServiceConfig, log: Logger): Promise<Service> {
  const domain = await composeDomain(db, config);
  const { auth, subscriptions, subscriptionsRepository } = domain;
  const { engine } = await detectEngine(db);
  // FerretDB's SQLite backend has one writer per database: chunks applied in parallel only
  // contend for it (and fail with "database is locked"), so there they run one at a time.
  const concurrency = engine === 'ferretdb' ? Math.min(config.workers, 1) : config.workers;
  if (concurrency !== config.workers) {
    log.warn({ requested: config.workers, concurrency }, 'FerretDB: bulk chunks are applied one at a time per process');
  }
  const queue = new BulkQueue(db, log, {
    concurrency,
    lockLifetimeMs: config.bulkLockLifetimeMs,
    pollIntervalMs: config.bulkPollIntervalMs,
  });
  const bulkRepository = new BulkRepository(db, config.bulkRetentionDays * 24 * 60 * 60 * 1000);
  await bulkRepository.ensureIndexes();
  const dispatcher = new BulkDispatcher(bulkRepository, queue, log);
  const workers = new BulkWorker(bulkRepository, subscriptions, queue, dispatcher, log);
  const bulk = new BulkService(subscriptionsRepository, bulkRepository, dispatcher, log);
  const idempotency = new IdempotencyRepository(db);
  await idempotency.ensureIndexes(log);
  return {
    ...domain,
    workers,
    bulkRequests: bulkRepository,
    idempotency,
    app: () =>
      createApp({
        auth,
        subscriptions,
        bulk,
        bulkStatus: new BulkStatusService(bulkRepository),
        log,
        idempotency,
        limiter: config.rateLimitPerSecond > 0 ? new RateLimiter(config.rateLimitBurst, config.rateLimitPerSecond) : undefined,
        authFailures: config.authFailuresPerMinute > 0
          ? new RateLimiter(config.authFailuresPerMinute, config.authFailuresPerMinute / 60, { scope: 'address' })
          : undefined,
        readiness: {
          db,
          timeoutMs: config.dbTimeoutMs,
          workersRunning: () => (concurrency === 0 ? undefined : workers.running),
        },
      }),
  };
}
