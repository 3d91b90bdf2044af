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
import { ImportApplier } from '../imports/imports.apply.js';
import { ImportSeeder } from '../imports/imports.seed.js';
import { ImportsService } from '../imports/imports.service.js';
import { ImportsWorker } from '../imports/imports.worker.js';
import type { ClockOf } from '../subscriptions/subscriptions.service.js';

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
  /** Creates subscriptions directly (test mode's fixtures and triggers, the sandbox, tests). */
  readonly seeder: SubscriptionSeeder;
  /** Creates generated subscriptions as an import of generated rows, applied at once (`subsvc subscriptions seed`, the demo). */
  readonly importSeeder: ImportSeeder;
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

/** How long a seed waits for its import, when another process's worker took it first. */
const SEED_WAIT_MS = 30 * 60_000;
/** The seed's runner polls and leases as the workers do by default (BULK_POLL_INTERVAL_MS, BULK_LOCK_LIFETIME_MS). */
const IMPORT_RUNNER = { pollMs: 200, leaseMs: 10_000 } as const;

/**
 * The seed's import is applied by a runner of its own in this process (the admin commands run no
 * workers), with the workers' defaults for its lease and its wait for another worker's.
 */
function importSeederOn(stores: Stores, lifecycle: LifecycleService, clockOf: ClockOf, log: Logger): ImportSeeder {
  const imports = new ImportsService(stores.imports, clockOf);
  const runner = new ImportsWorker(
    stores.imports,
    new ImportApplier(lifecycle),
    async () => undefined,
    { pollMs: IMPORT_RUNNER.pollMs, leaseMs: IMPORT_RUNNER.leaseMs },
    log.child({ component: 'imports' }),
  );
  return new ImportSeeder(imports, stores.imports, (doc) => runner.applyNow(doc, SEED_WAIT_MS));
}

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
  const lifecycle = new LifecycleService({
    store: stores.lifecycle,
    subscriptions: stores.subscriptions,
    mutex,
    clockOf,
    changes: subscriptions.changes,
  });
  return {
    merchants: stores.merchants,
    subscriptionStores: stores,
    auth,
    apiKeys: new ApiKeysService(stores.merchants, auth),
    subscriptions,
    lifecycle,
    importSeeder: importSeederOn(stores, lifecycle, clockOf, log),
    pausePolicies,
    seeder: new SubscriptionSeeder(stores.subscriptions),
    billing: new StripeConnectionsService(
      stores.billingConnections,
      secretBoxFrom({ secretsKey: config.secretsKey, embeddedKeyFile: config.embeddedSecretsKeyFile }),
      config.publicUrl,
    ),
  };
}
