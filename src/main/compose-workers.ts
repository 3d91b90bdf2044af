/**
 * The composition's background part, on the background client: bulk chunks, due schedules, the
 * events relay, webhook deliveries and the retention sweep, and the Workers that start and stop
 * them in order.
 */
import { ImportApplier } from '../imports/imports.apply.js';
import { importView } from '../imports/imports.service.js';
import { ImportsWorker } from '../imports/imports.worker.js';
import { LifecycleService } from '../subscriptions/lifecycle.js';
import type { Db } from 'mongodb';
import { BulkDispatcher } from '../bulk/bulk.dispatcher.js';
import { BulkQueue } from '../bulk/bulk.queue.js';
import { BulkService } from '../bulk/bulk.service.js';
import { HoldsService, type HoldNotices } from '../holds/holds.service.js';
import { BulkStatusService } from '../bulk/bulk.status.js';
import { BulkWorker, type CompletionHook } from '../bulk/bulk.worker.js';
import { STRIPE_API_BASE, type Config } from '../config.js';
import { RetentionSweeper } from '../db/retention.js';
import { EventsRelay, type EventSink, type WorkToWaitOut } from '../events/events.relay.js';
import { BillingPushRecorder } from '../billing/billing.pushes.js';
import { BillingPusher } from '../billing/billing.pusher.js';
import { BillingSyncFailures } from '../billing/billing-sync-failed.js';
import { StripeApi } from '../billing/stripe.client.js';
import type { StripeConnectionsService } from '../billing/stripe-connections.service.js';
import { PauseHistoryRecorder } from '../analytics/analytics.service.js';
import { expiredHeartbeats } from '../fleet/heartbeat.js';
import type { Logger } from '../logger.js';
import type { PausePolicyService } from '../pause-policy/pause-policy.service.js';
import { ScheduleWorker } from '../schedules/schedules.worker.js';
import { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import { clockOfMerchants } from '../clocks/merchant-clocks.js';
import { DeliveryQueue } from '../webhooks/delivery.queue.js';
import { WebhooksWorker } from '../webhooks/webhooks.worker.js';
import { DestinationsService } from '../event-destinations/destinations.service.js';
import { KafkaPublisher } from '../event-destinations/kafka.publisher.js';
import { secretBoxFrom } from '../secrets/secret-box.js';
import type { BothStores, Engine, Stores } from './compose-stores.js';

/** What a worker process runs: bulk chunks, due schedules, the events outbox sweep, webhook deliveries and the retention sweep. */
export interface Workers {
  start(): Promise<void>;
  stop(deadlineMs: number): Promise<void>;
  readonly running: boolean;
  /** Bulk chunks this process applies at once: BULK_CONCURRENCY, or 1 where the server has one writer. */
  readonly concurrency: number;
}

export type WorkersConfig = Pick<
  Config,
  'bulkConcurrency' | 'bulkLockLifetimeMs' | 'bulkPollIntervalMs' | 'schedulePollMs' | 'webhooksAllowPrivateUrls' | 'webhookRetryDelaysMs'
> &
  Partial<Pick<Config, 'stripeApiBase' | 'secretsKey' | 'kafkaTrustedCa' | 'kafkaAllowedBrokers'>> & {
    readonly embeddedSecretsKeyFile?: string | undefined;
  };

/** What the requests' side uses of the background work. */
export interface BackgroundWork {
  readonly workers: Workers;
  readonly dispatcher: BulkDispatcher;
  readonly relay: EventsRelay;
  readonly webhooks: WebhooksWorker;
  /** Event destinations (Kafka): made and read by requests, fed by the relay, published by worker processes. */
  readonly destinations: DestinationsService;
  /** The sweep that deletes expired documents where the server has no TTL indexes; undefined where it has them. */
  readonly retention: RetentionSweeper | undefined;
  /** Holds, placed and released by requests and released by the schedule workers at their resumeAt (src/holds/). */
  readonly holds: HoldsService;
  /** Imports applied by the workers; `applyNow` for a test mode's trigger (src/imports/). */
  readonly imports: ImportsWorker;
  /** The subscriptions service on the background client: what a request by filter reads through (docs/design.md §6a). */
  readonly subscriptions: SubscriptionsService;
}

/** What the composition hands the background part: the requests' services it shares. */
export interface RequestSide {
  /** The requests' subscriptions service: the relay listens to its changes too. */
  readonly subscriptions: SubscriptionsService;
  /** The same policy cache as the requests': a policy replaced by this process applies to its workers at once. */
  readonly pausePolicies: PausePolicyService;
  /** Merchants' Stripe connections: whose changes are pushed, with which key. */
  readonly billing: StripeConnectionsService;
}

/**
 * Work whose writes the events relay waits out, where the engine needs it (Engine.relayPauses):
 * each joins once built, so that the relay can be built before the bulk worker that reports to it.
 */
class RelayPauses implements WorkToWaitOut {
  private readonly sources: PauseSource[] = [];
  private readonly listeners: (() => void)[] = [];

  add(source: PauseSource): void {
    this.sources.push(source);
    source.onIdle(() => this.listeners.forEach((listener) => listener()));
  }

  busy(): boolean {
    return this.sources.some((source) => source.busy);
  }

  onIdle(listener: () => void): void {
    this.listeners.push(listener);
  }
}

interface PauseSource {
  readonly busy: boolean;
  onIdle(listener: () => void): void;
}

function schedulesOn(
  subscriptions: SubscriptionsService,
  holds: HoldsService,
  both: BothStores,
  config: WorkersConfig,
  log: Logger,
): ScheduleWorker {
  const schedules = new ScheduleWorker(subscriptions, both.backgroundStores.clock, config.schedulePollMs, log, holds);
  // A pending time written by this process's requests or workers wakes its schedule worker for it.
  for (const pending of new Set([both.stores.pendingTimes, both.backgroundStores.pendingTimes]))
    pending.onPendingTimes((at) => schedules.wakeBy(at));
  return schedules;
}

function webhooksOn(background: Db, stores: Stores, concurrency: number, config: WorkersConfig, log: Logger): WebhooksWorker {
  const deliveryQueue = new DeliveryQueue(background, log.child({ component: 'webhooks' }), {
    concurrency,
    pollIntervalMs: config.bulkPollIntervalMs,
    lockLifetimeMs: config.bulkLockLifetimeMs,
  });
  const options = { allowPrivateUrls: config.webhooksAllowPrivateUrls, retryDelaysMs: config.webhookRetryDelaysMs };
  return new WebhooksWorker(stores.endpoints, stores.deliveries, stores.events, deliveryQueue, options, log);
}

function retentionOn(background: Db, both: BothStores, log: Logger): RetentionSweeper {
  const { stores, backgroundStores } = both;
  return new RetentionSweeper(
    {
      'idempotency keys': stores.idempotency,
      'forced failures': stores.testOutcomes,
      'bulk requests': backgroundStores.bulk,
      events: backgroundStores.events,
      'webhook deliveries': backgroundStores.deliveries,
      'portal links': backgroundStores.portalLinks,
      'Stripe events applied': backgroundStores.stripeEvents,
      heartbeats: expiredHeartbeats(background),
    },
    log,
  );
}

interface Running {
  readonly pusher: BillingPusher;
  readonly bulkWorker: BulkWorker;
  readonly schedules: ScheduleWorker;
  readonly relay: EventsRelay;
  readonly webhooks: WebhooksWorker;
  readonly publisher: KafkaPublisher;
  readonly retention: RetentionSweeper | undefined;
  readonly imports: ImportsWorker;
}

function workersOf(
  { bulkWorker, schedules, relay, webhooks, retention, pusher, publisher, imports }: Running,
  concurrency: number,
): Workers {
  return {
    start: async () => {
      retention?.start();
      await bulkWorker.start();
      // Where bulk workers run (not in an HTTP-only process), due schedules, the outbox sweep and deliveries run too.
      if (!bulkWorker.running) return;
      relay.start();
      await webhooks.start();
      publisher.start();
      schedules.start();
      pusher.start();
      imports.start();
    },
    // In order, before the database clients close: what changes subscriptions first (bulk chunks,
    // due schedules), then the relay (it relays what is waiting and takes nothing new), then the
    // deliveries it handed over, each within what is left of the deadline.
    stop: async (deadlineMs) => {
      const deadline = Date.now() + deadlineMs;
      const left = () => Math.max(deadline - Date.now(), 0);
      await Promise.all([bulkWorker.stop(deadlineMs), schedules.stop(), retention?.stop(), imports.stop()]);
      await relay.stop(left());
      await Promise.all([webhooks.stop(left()), pusher.stop(), publisher.stop()]);
    },
    get running() {
      return bulkWorker.running;
    },
    concurrency,
  };
}

/**
 * The events relay: it listens to every service that changes subscriptions, so that each change is
 * relayed right after it (and by the sweep if that fails), and waits out `pauses` where the engine needs it.
 */
function relayOn(
  stores: Stores,
  webhooks: EventSink,
  engine: Engine,
  pauses: RelayPauses,
  /** The requests' and the workers' services: the relay hears both change, and reads outboxes through the workers' (background client). */
  subscriptions: { readonly requests: SubscriptionsService; readonly workers: SubscriptionsService },
  log: Logger,
): EventsRelay {
  const relay = new EventsRelay(
    stores.events,
    subscriptions.workers,
    webhooks,
    log,
    engine.mutex,
    engine.relayPauses ? pauses : undefined,
    [new PauseHistoryRecorder(stores.pauseHistory)],
  );
  for (const service of [subscriptions.requests, subscriptions.workers])
    service.changes.onChange((merchantId, ids, held) => relay.relaySoon(merchantId, ids, held));
  return relay;
}

/** Applies bulk chunks; a completed request's event goes through the relay. */
function bulkWorkerOn(
  stores: Stores,
  subscriptions: SubscriptionsService,
  queue: BulkQueue,
  dispatcher: BulkDispatcher,
  relay: EventsRelay,
  log: Logger,
  holds: Pick<HoldsService, 'covered'>,
): BulkWorker {
  const status = new BulkStatusService(stores.bulk);
  // A hold's pause completed covers all it will: its notice may go (holds.service.ts).
  const bulkCompleted: CompletionHook = async (merchantId, requestIds, traces) => {
    await holds.covered(merchantId, requestIds);
    await relay.bulkCompleted(merchantId, await status.getMany(merchantId, requestIds), traces);
  };
  return new BulkWorker(stores.bulk, subscriptions, queue, dispatcher, log, bulkCompleted);
}

/** The background work over both clients' stores; `requests` is the requests' side it shares with. */
export function composeWorkers(
  background: Db,
  engine: Engine,
  both: BothStores,
  requests: RequestSide,
  config: WorkersConfig,
  log: Logger,
): BackgroundWork {
  const { backgroundStores } = both;
  const concurrency = engine.concurrency(config.bulkConcurrency);
  const lock = { lockLifetimeMs: config.bulkLockLifetimeMs, pollIntervalMs: config.bulkPollIntervalMs };
  const bulkQueue = new BulkQueue(background, log, { concurrency, ...lock });
  const dispatcher = new BulkDispatcher(backgroundStores.bulk, bulkQueue, log);
  const { mutex } = engine;
  const clock = clockOfMerchants(backgroundStores.testClocks);
  const workerSubscriptions = new SubscriptionsService(backgroundStores, mutex, requests.pausePolicies, clock);
  const holds = holdsOn({ stores: backgroundStores, subscriptions: workerSubscriptions }, dispatcher, engine, log, {
    hoursOf: async (merchantId) => (await requests.pausePolicies.policyOf(merchantId)).resumeNoticeHours,
    notify: (merchantId, ids) => workerSubscriptions.changes.notify(merchantId, ids),
    timeOf: async (merchantId) => (await clock(merchantId)).timestamp(),
  });
  const schedules = schedulesOn(workerSubscriptions, holds, both, config, log);
  const webhooks = webhooksOn(background, backgroundStores, concurrency, config, log);
  const pushes = new BillingPushRecorder(backgroundStores.billingPushes, requests.billing, backgroundStores.billingSync);
  const pusher = new BillingPusher(
    backgroundStores.billingPushes,
    (merchantId) => requests.billing.credentials(merchantId),
    new StripeApi(config.stripeApiBase ?? STRIPE_API_BASE),
    backgroundStores.billingSync,
    log,
    // The relay is made below: read when a push fails.
    new BillingSyncFailures(
      workerSubscriptions,
      backgroundStores.billingSync,
      async (merchantId) => (await clock(merchantId)).timestamp(),
      () => relay,
      backgroundStores.events,
    ),
  );
  pushes.onRecorded(() => pusher.wake());
  const { destinations, publisher } = destinationsOn(backgroundStores, config, log);
  const pauses = new RelayPauses();
  const sink = bothSinks(pushes.around(webhooks), destinations);
  const relay = relayOn(backgroundStores, sink, engine, pauses, { requests: requests.subscriptions, workers: workerSubscriptions }, log);
  const bulkWorker = bulkWorkerOn(backgroundStores, workerSubscriptions, bulkQueue, dispatcher, relay, log, holds);
  pauses.add(bulkWorker);
  pauses.add(schedules);
  const retention = engine.workarounds.expirySweeps ? retentionOn(background, both, log) : undefined;
  const lifecycle = new LifecycleService({
    store: backgroundStores.lifecycle,
    subscriptions: backgroundStores.subscriptions,
    mutex,
    clockOf: clock,
    changes: workerSubscriptions.changes,
  });
  const imports = new ImportsWorker(
    backgroundStores.imports,
    new ImportApplier(lifecycle),
    (doc) => relay.importCompleted(doc.merchantId, importView(doc)),
    { pollMs: config.bulkPollIntervalMs, leaseMs: config.bulkLockLifetimeMs },
    log.child({ component: 'imports' }),
  );
  const workers = workersOf({ bulkWorker, schedules, relay, webhooks, retention, pusher, publisher, imports }, concurrency);
  return { workers, dispatcher, relay, webhooks, destinations, retention, holds, imports, subscriptions: workerSubscriptions };
}

/** Holds over the background client's stores: a hold's cover and its requests read and write up to a whole store. */
function holdsOn(
  { stores, subscriptions }: { readonly stores: Stores; readonly subscriptions: SubscriptionsService },
  dispatcher: BulkDispatcher,
  engine: Engine,
  log: Logger,
  notices: HoldNotices,
): HoldsService {
  const background = { subscriptions, requests: stores.bulk };
  const bulk = new BulkService(background, background, dispatcher, log);
  return new HoldsService(stores.holds, subscriptions, bulk, (ids, task) => engine.mutex.runAll(ids, task), notices);
}

/** Event destinations and their publisher; the password's box from SECRETS_KEY (src/secrets/secret-box.ts). */
function destinationsOn(
  stores: Stores,
  config: WorkersConfig,
  log: Logger,
): { destinations: DestinationsService; publisher: KafkaPublisher } {
  const secrets = secretBoxFrom({ secretsKey: config.secretsKey, embeddedKeyFile: config.embeddedSecretsKeyFile });
  const brokers = { allowPrivate: config.webhooksAllowPrivateUrls, allowedBrokers: config.kafkaAllowedBrokers ?? [] };
  const publisher = new KafkaPublisher(stores.destinations, { brokers, secrets, trustedCa: config.kafkaTrustedCa }, log);
  const destinations = new DestinationsService(stores.destinations, secrets, brokers, () => publisher.wake());
  return { destinations, publisher };
}

/** The relay's sink: each event queued for the event destinations that take it, then for the webhook endpoints (both idempotent). */
function bothSinks(webhooks: EventSink, destinations: DestinationsService): EventSink {
  return {
    async fanOut(merchantId, events, traces, held) {
      await destinations.enqueue(merchantId, events);
      return webhooks.fanOut(merchantId, events, traces, held);
    },
    sendFirst: (merchantId, deliveryIds, withinMs) => webhooks.sendFirst(merchantId, deliveryIds, withinMs),
  };
}
