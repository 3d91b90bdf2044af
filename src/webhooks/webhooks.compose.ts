/**
 * Events and webhooks, built once beside the rest (src/composition.ts): the outbox relay listening
 * to subscription changes, the bulk completion hook, the HTTP handlers, and the worker side (the
 * outbox sweep and the delivery jobs) that runs where bulk workers run.
 */
import type { Config } from '../config.js';
import type { Database } from '../db/mongo.js';
import type { Logger } from '../logger.js';
import type { BulkStatusService } from '../bulk/bulk.status.js';
import type { CompletionHook } from '../bulk/bulk.worker.js';
import { eventHandlers } from '../events/events.handlers.js';
import { EventsRelay } from '../events/events.relay.js';
import { EventsRepository } from '../events/events.repository.js';
import { EventsService } from '../events/events.service.js';
import type { OperationHandlers } from '../operations/operation-context.js';
import type { KeyedMutex } from '../lib/keyed-mutex.js';
import type { ChangeNotifier } from '../lib/change-notifier.js';
import { DeliveriesRepository } from './deliveries.repository.js';
import { DeliveryQueue } from './delivery.queue.js';
import { EndpointsRepository } from './endpoints.repository.js';
import { EndpointsService } from './endpoints.service.js';
import { webhookHandlers } from './webhooks.handlers.js';
import { WebhooksWorker } from './webhooks.worker.js';

export type WebhooksConfig = Pick<Config, 'webhooksAllowPrivateUrls' | 'webhookRetryDelaysMs' | 'bulkPollIntervalMs' | 'bulkLockLifetimeMs'>;

type EventOperations = 'listEvents' | 'getEvent' | 'resendEvent' | 'createWebhookEndpoint' | 'listWebhookEndpoints'
  | 'getWebhookEndpoint' | 'updateWebhookEndpoint' | 'deleteWebhookEndpoint' | 'listWebhookDeliveries';

export interface EventsAndWebhooks {
  readonly handlers: Pick<OperationHandlers, EventOperations>;
  readonly bulkCompleted: CompletionHook;
  /** Worker side: the outbox sweep and the delivery jobs (when `concurrency` > 0). */
  start(): Promise<void>;
  stop(deadlineMs: number): Promise<void>;
}

/**
 * Requests read on `database.db`; the relay and the deliveries, which run after the answer, on
 * `database.background`. Every service that changes subscriptions is listened to, so that each
 * change is relayed right after it (and by the sweep if that fails).
 */
export async function composeEventsAndWebhooks(
  database: Pick<Database, 'db' | 'background' | 'capabilities'>,
  config: WebhooksConfig,
  concurrency: number,
  deps: { readonly changes: readonly ChangeNotifier[]; readonly bulkStatus: BulkStatusService; readonly mutex: KeyedMutex; readonly busy: () => boolean },
  log: Logger,
): Promise<EventsAndWebhooks> {
  const { db, background, capabilities } = database;
  const events = new EventsRepository(db);
  const endpointsRepository = new EndpointsRepository(db);
  const deliveries = new DeliveriesRepository(db);
  await Promise.all([
    events.ensureIndexes(capabilities.ttlIndexes, log),
    endpointsRepository.ensureIndexes(),
    deliveries.ensureIndexes(capabilities.ttlIndexes, log),
  ]);
  const backgroundEvents = new EventsRepository(background);
  const queue = new DeliveryQueue(background, log.child({ component: 'webhooks' }), {
    concurrency,
    pollIntervalMs: config.bulkPollIntervalMs,
    lockLifetimeMs: config.bulkLockLifetimeMs,
  });
  const allowPrivateUrls = config.webhooksAllowPrivateUrls;
  const worker = new WebhooksWorker(
    new EndpointsRepository(background),
    new DeliveriesRepository(background),
    backgroundEvents,
    queue,
    { allowPrivateUrls, retryDelaysMs: config.webhookRetryDelaysMs },
    log,
  );
  const relay = new EventsRelay(backgroundEvents, worker, log, deps.mutex, deps.busy);
  for (const changes of deps.changes) changes.onChange((merchantId, ids) => relay.relaySoon(merchantId, ids));
  const endpoints = new EndpointsService(endpointsRepository, allowPrivateUrls);
  return {
    handlers: { ...eventHandlers(new EventsService(events), worker), ...webhookHandlers(endpoints, deliveries) },
    bulkCompleted: async (merchantId, requestId) => relay.bulkCompleted(merchantId, await deps.bulkStatus.get(merchantId, requestId)),
    async start() {
      if (concurrency === 0) return;
      relay.start();
      await worker.start();
    },
    async stop(deadlineMs) {
      await Promise.all([relay.stop(), worker.stop(deadlineMs)]);
    },
  };
}
