/**
 * The composition's first part: the engine workarounds decided from the server's capabilities
 * (src/db/workarounds.ts) and logged at start, and every repository built once per database client.
 */
import { ImportsStore } from '../imports/imports.store.js';
import type { Db } from 'mongodb';
import { MerchantsRepository } from '../auth/merchants.repository.js';
import { BulkRepository } from '../bulk/bulk.repository.js';
import type { DbWorkarounds } from '../config.js';
import type { Capabilities } from '../db/capabilities.js';
import type { Database } from '../db/mongo.js';
import { describeWorkarounds, switchedOff, switchOff, workaroundsFor, type Workarounds } from '../db/workarounds.js';
import { EventsRepository } from '../events/events.repository.js';
import { HoldsRepository } from '../holds/holds.repository.js';
import { IdempotencyRepository } from '../idempotency/idempotency.repository.js';
import { KeyedMutex, UNQUEUED, type PerKeyQueue } from '../lib/keyed-mutex.js';
import type { Logger } from '../logger.js';
import { PausePolicyRepository } from '../pause-policy/pause-policy.repository.js';
import { PlansRepository } from '../plans/plans.repository.js';
import { StripeConnectionsRepository } from '../billing/stripe-connections.repository.js';
import { BillingPushesRepository } from '../billing/billing-pushes.repository.js';
import { BillingSyncRepository } from '../billing/billing-sync.repository.js';
import { StripeEventsRepository } from '../billing/stripe-events.repository.js';
import { PauseHistoryRepository } from '../analytics/pause-history.repository.js';
import { PortalLinksRepository } from '../portal/portal-links.repository.js';
import { ScheduleClock } from '../clocks/schedule.clock.js';
import { subscriptionStoresOn, type SubscriptionStores } from '../subscriptions/subscription.stores.js';
import { TestClocksRepository } from '../clocks/test-clocks.repository.js';
import { TestOutcomesRepository } from '../test-mode/test-outcomes.repository.js';
import { TestModeResetRepository } from '../test-mode/test-mode-reset.repository.js';
import { DeliveriesRepository } from '../webhooks/deliveries.repository.js';
import { EndpointsRepository } from '../webhooks/endpoints.repository.js';
import { DestinationsRepository } from '../event-destinations/destinations.repository.js';

/**
 * What the composition builds for the server's capabilities: each workaround only where the
 * capability whose absence turns it on is missing (src/db/workarounds.ts). On a server that has
 * them all, none: no per-subscription queue, no parts, no clock, no pauses, no sweeper.
 */
export interface Engine {
  readonly workarounds: Workarounds;
  /** The per-document queue (subscriptions and GUARDED, db/guarded.ts) shared by every service and store of this process. */
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

/** Logs the workarounds turned on, and those the server needs that DB_WORKAROUNDS switched off. */
export function announceWorkarounds(engine: Engine, capabilities: Capabilities, setting: DbWorkarounds | undefined, log: Logger): void {
  const turnedOn = describeWorkarounds(engine.workarounds);
  const turnedOff = describeWorkarounds(workaroundsFor(capabilities)).filter((w) => switchedOff(setting ?? 'auto').includes(w.workaround));
  if (turnedOff.length > 0)
    log.warn(
      { workarounds: turnedOff },
      `engine workarounds this server needs, switched off by DB_WORKAROUNDS: ${turnedOff.map((w) => w.workaround).join(', ')}`,
    );
  // Names only, in one line: docs/design.md §8 is the one place that says what each changes and why.
  if (turnedOn.length > 0)
    log.warn(`engine workarounds turned on: ${turnedOn.map((w) => w.workaround).join(', ')} (why: docs/design.md §8)`);
  else log.info('engine workarounds: none (the server has every capability)');
}

/** Every repository over one database client. */
export interface Stores extends SubscriptionStores {
  readonly merchants: MerchantsRepository;
  /** Undefined where the due query is served by an index. */
  readonly clock: ScheduleClock | undefined;
  readonly bulk: BulkRepository;
  readonly idempotency: IdempotencyRepository;
  readonly events: EventsRepository;
  readonly endpoints: EndpointsRepository;
  readonly deliveries: DeliveriesRepository;
  readonly pausePolicies: PausePolicyRepository;
  readonly testClocks: TestClocksRepository;
  readonly testOutcomes: TestOutcomesRepository;
  readonly testModeReset: TestModeResetRepository;
  readonly holds: HoldsRepository;
  readonly portalLinks: PortalLinksRepository;
  readonly plans: PlansRepository;
  readonly billingConnections: StripeConnectionsRepository;
  readonly billingPushes: BillingPushesRepository;
  readonly billingSync: BillingSyncRepository;
  /** The Stripe events each connection applied (src/billing/stripe-events.service.ts). */
  readonly stripeEvents: StripeEventsRepository;
  readonly pauseHistory: PauseHistoryRepository;
  readonly destinations: DestinationsRepository;
  /** Imports of subscriptions from a file: the files, the imports and their rows (src/imports/). */
  readonly imports: ImportsStore;
}

/** `guard`: the engine's per-document queue (Engine.mutex), shared by both clients' stores. */
export function storesOn(db: Db, workarounds: Workarounds, retentionMs: number, guard: PerKeyQueue): Stores {
  const clock = workarounds.scheduleClock ? new ScheduleClock(db, guard) : undefined;
  const { statementsPerCommand, wholeDocumentAnswers, documentsPerDelete } = workarounds;
  return {
    merchants: new MerchantsRepository(db, guard, statementsPerCommand),
    ...subscriptionStoresOn(db, { clock, statementsPerCommand, updateProjection: !wholeDocumentAnswers, documentsPerDelete }),
    clock,
    bulk: new BulkRepository(db, retentionMs, { documentsPerDelete, statementsPerCommand, guard }),
    idempotency: new IdempotencyRepository(db, documentsPerDelete),
    events: new EventsRepository(db, documentsPerDelete),
    endpoints: new EndpointsRepository(db, guard),
    deliveries: new DeliveriesRepository(db, statementsPerCommand, documentsPerDelete),
    pausePolicies: new PausePolicyRepository(db, guard),
    testClocks: new TestClocksRepository(db, guard),
    testOutcomes: new TestOutcomesRepository(db, documentsPerDelete),
    testModeReset: new TestModeResetRepository(db, documentsPerDelete),
    holds: new HoldsRepository(db, guard),
    portalLinks: new PortalLinksRepository(db, documentsPerDelete),
    plans: new PlansRepository(db, guard),
    billingConnections: new StripeConnectionsRepository(db, guard),
    billingPushes: new BillingPushesRepository(db, statementsPerCommand),
    billingSync: new BillingSyncRepository(db, statementsPerCommand),
    stripeEvents: new StripeEventsRepository(db, documentsPerDelete),
    pauseHistory: new PauseHistoryRepository(db, statementsPerCommand, guard),
    destinations: new DestinationsRepository(db),
    imports: new ImportsStore(db, guard),
  };
}

async function ensureIndexes(stores: Stores, ttlIndexes: boolean): Promise<void> {
  await Promise.all([
    stores.merchants.ensureIndexes(),
    stores.subscriptions.ensureIndexes(),
    stores.bulk.ensureIndexes(ttlIndexes),
    stores.idempotency.ensureIndexes(ttlIndexes),
    stores.testOutcomes.ensureIndexes(ttlIndexes),
    stores.events.ensureIndexes(ttlIndexes),
    stores.endpoints.ensureIndexes(),
    stores.deliveries.ensureIndexes(ttlIndexes),
    stores.holds.ensureIndexes(),
    stores.portalLinks.ensureIndexes(ttlIndexes),
    stores.plans.ensureIndexes(),
    stores.billingConnections.ensureIndexes(),
    stores.billingPushes.ensureIndexes(),
    stores.billingSync.ensureIndexes(),
    stores.stripeEvents.ensureIndexes(ttlIndexes),
    stores.destinations.ensureIndexes(),
    stores.imports.ensureIndexes(),
  ]);
}

export const DAY_MS = 24 * 60 * 60 * 1000;

/** The stores of both clients: requests' on `db`, the background's on `background` (the same set when they are one client). */
export interface BothStores {
  readonly stores: Stores;
  readonly backgroundStores: Stores;
}

/** Both clients' stores, with the indexes ensured. */
export async function storesOf(
  database: Pick<Database, 'db' | 'background' | 'capabilities'>,
  engine: Engine,
  bulkRetentionDays: number,
): Promise<BothStores> {
  const { db, background, capabilities } = database;
  const retentionMs = bulkRetentionDays * DAY_MS;
  const stores = storesOn(db, engine.workarounds, retentionMs, engine.mutex);
  const backgroundStores = background === db ? stores : storesOn(background, engine.workarounds, retentionMs, engine.mutex);
  await ensureIndexes(stores, capabilities.ttlIndexes);
  return { stores, backgroundStores };
}
