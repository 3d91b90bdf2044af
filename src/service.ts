/** The composition root: every repository, service and entry point built once, dependencies passed in. */
import type Koa from 'koa';
import type { Db } from 'mongodb';
import { AuthService } from './auth/auth.service.js';
import { MerchantsRepository } from './auth/merchants.repository.js';
import { BulkQueue } from './bulk/bulk.jobs.js';
import { BulkService } from './bulk/bulk.service.js';
import type { Config } from './config.js';
import { createApp } from './http/app.js';
import type { Logger } from './logger.js';
import { SubscriptionsRepository } from './subscriptions/subscriptions.repository.js';
import { SubscriptionsService } from './subscriptions/subscriptions.service.js';

export type ServiceConfig = Pick<Config, 'authCacheTtlMs' | 'workers' | 'bulkLockLifetimeMs' | 'bulkPollIntervalMs'>;

export interface Service {
  readonly merchants: MerchantsRepository;
  readonly auth: AuthService;
  readonly subscriptions: SubscriptionsService;
  readonly queue: BulkQueue;
  app(): Promise<Koa>;
}

export async function composeService(db: Db, config: ServiceConfig, log: Logger): Promise<Service> {
  const merchants = new MerchantsRepository(db);
  const subscriptionsRepository = new SubscriptionsRepository(db);
  await Promise.all([merchants.ensureIndexes(), subscriptionsRepository.ensureIndexes()]);
  const auth = new AuthService(merchants, config.authCacheTtlMs);
  const subscriptions = new SubscriptionsService(subscriptionsRepository);
  const queue = new BulkQueue(db, subscriptions, log, {
    concurrency: config.workers,
    lockLifetimeMs: config.bulkLockLifetimeMs,
    pollIntervalMs: config.bulkPollIntervalMs,
  });
  const bulk = new BulkService(subscriptionsRepository, queue);
  return {
    merchants,
    auth,
    subscriptions,
    queue,
    app: () => createApp({ auth, subscriptions, bulk, log }),
  };
}
