/**
 * The domain: the repositories and services the admin commands need, built once per process on
 * the stores (compose-stores.ts). The service (composition.ts) and what requests use
 * (compose-http.ts, compose-portal.ts) build on it.
 */
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { AuthService } from '../auth/auth.service.js';
import { LastUsedRecorder } from '../auth/last-used.js';
import type { MerchantsRepository } from '../auth/merchants.repository.js';
import { clockOfMerchants } from '../clocks/merchant-clocks.js';
import type { Config } from '../config.js';
import type { Database } from '../db/mongo.js';
import type { PerKeyQueue } from '../lib/keyed-mutex.js';
import { createLogger, type Logger } from '../logger.js';
import { PausePolicyService } from '../pause-policy/pause-policy.service.js';
import { ResumeNotices } from '../subscriptions/resume-notices.js';
import type { SubscriptionStores } from '../subscriptions/subscription.stores.js';
import { SubscriptionSeeder } from '../subscriptions/subscriptions.seed.js';
import { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import { LifecycleService } from '../subscriptions/lifecycle.js';
import { StripeConnectionsService } from '../billing/stripe-connections.service.js';
import { secretBoxFrom } from '../secrets/secret-box.js';
import { DAY_MS, engineFor, storesOn, type Stores } from './compose-stores.js';

/** Repositories and domain services: what the admin commands need. */
export interface Domain {
  readonly merchants: MerchantsRepository;
  readonly subscriptionStores: SubscriptionStores;
  readonly auth: AuthService;
  /** A merchant's API keys: list, make, roll, revoke (the API and `subsvc keys`). */
  readonly apiKeys: ApiKeysService;
  readonly subscriptions: SubscriptionsService;
  /** Each merchant's pause policy, cached for every service of the process that pauses (docs/design.md §11). */
  readonly pausePolicies: PausePolicyService;
  /** Creates subscriptions directly (admin command, demo, tests). */
  readonly seeder: SubscriptionSeeder;
  /** Each merchant's Stripe connection, its secrets sealed (src/billing/). */
  readonly billing: StripeConnectionsService;
  /** Subscriptions created, updated and cancelled (src/subscriptions/lifecycle.ts). */
  readonly lifecycle: LifecycleService;
}

/** The admin commands' domain, on one client (src/main/cli.ts). */
export async function composeDomain(
  database: Pick<Database, 'db' | 'capabilities'>,
  config: Pick<Config, 'authCacheTtlMs' | 'bulkRetentionDays'> & Partial<Pick<Config, 'dbWorkarounds'>>,
  log: Logger = createLogger('silent'),
): Promise<Domain> {
  const engine = engineFor(database.capabilities, config.dbWorkarounds);
  const stores = storesOn(database.db, engine.workarounds, config.bulkRetentionDays * DAY_MS, engine.mutex);
  await Promise.all([stores.merchants.ensureIndexes(), stores.subscriptions.ensureIndexes()]);
  return domainOn(stores, engine.mutex, config, log);
}

/** What the domain reads of the configuration: on the embedded database, where the key for its secrets is kept when SECRETS_KEY is unset. */
export type DomainConfig = Pick<Config, 'authCacheTtlMs'> &
  Partial<Pick<Config, 'secretsKey' | 'publicUrl'>> & { readonly embeddedSecretsKeyFile?: string | undefined };

export function domainOn(stores: Stores, mutex: PerKeyQueue, config: DomainConfig, log: Logger): Domain {
  const auth = new AuthService(
    stores.merchants,
    config.authCacheTtlMs,
    new LastUsedRecorder(stores.merchants, log.child({ component: 'auth' })),
  );
  const pausePolicies = new PausePolicyService(stores.pausePolicies);
  const clockOf = clockOfMerchants(stores.testClocks);
  const notices = new ResumeNotices(stores.due, stores.holds, mutex, clockOf);
  pausePolicies.onNoticeHoursChanged((merchantId, hours) => notices.renotice(merchantId, hours));
  const subscriptions = new SubscriptionsService(stores, mutex, pausePolicies, clockOf);
  return {
    merchants: stores.merchants,
    subscriptionStores: stores,
    auth,
    apiKeys: new ApiKeysService(stores.merchants, auth),
    subscriptions,
    lifecycle: new LifecycleService(stores.lifecycle, stores.subscriptions, mutex, clockOf, subscriptions.changes),
    pausePolicies,
    seeder: new SubscriptionSeeder(stores.subscriptions),
    billing: new StripeConnectionsService(
      stores.billingConnections,
      secretBoxFrom({ secretsKey: config.secretsKey, embeddedKeyFile: config.embeddedSecretsKeyFile }),
      config.publicUrl,
    ),
  };
}
