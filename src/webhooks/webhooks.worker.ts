/**
 * From stored events to receivers: the fan-out (one delivery document per event and subscribed
 * enabled endpoint, inserted together, and one job per batch of them) and the sending of a batch
 * (POSTs SEND_CONCURRENCY at a time, results recorded in one round trip, the failed ones
 * rescheduled together as one job at their next attempt). Deliveries are at least once and
 * unordered: a worker killed mid-batch leaves its deliveries to another once its lease ends,
 * which sends again with the same `webhook-id`. A sweep in worker processes queues deliveries
 * that are long overdue (their job was lost).
 *
 * Disabling rule: an endpoint whose deliveries fail for good (every retry spent, about a day)
 * DISABLE_AFTER times in a row, with no success between, is disabled, with the reason recorded.
 */
import { nowTimestamp } from '../lib/clock.js';
import { uuidv7 } from '../lib/ids.js';
import { Periodic } from '../lib/periodic.js';
import { RETRY } from '../retry-policies.js';
import type { Logger } from '../logger.js';
import { metrics } from '../observability/metrics.js';
import { failActiveSpan, inSpan } from '../observability/tracing.js';
import type { Event } from '../events/event.payload.js';
import type { EventsRepository } from '../events/events.repository.js';
import { byMerchantOf } from '../merchants/by-merchant.js';
import type { EventSink } from '../events/events.relay.js';
import type { Resender } from '../events/events.handlers.js';
import type { EventType } from '../subscriptions/outbox.js';
import type { DeliveriesRepository, Delivery, DeliveryUpdate } from './deliveries.repository.js';
import { DELIVERY_BATCH, type DeliveryQueue } from './delivery.queue.js';
import type { DeliveryTarget, EndpointsRepository } from './endpoints.repository.js';
import { attemptDelivery, DELIVERY_TIMEOUT_MS } from './sender.js';

export const DISABLE_AFTER = 5;
/** POSTs one batch has in flight at once. */
const SEND_CONCURRENCY = 16;
const SWEEP_EVERY_MS = 30_000;
/** A pending delivery this long past due has no job that will take it. */
const OVERDUE_AFTER_MS = RETRY.overdueDelivery.delayMs;

/** A delivery of one event to one endpoint, due at once, not yet attempted. */
function pendingDelivery(
  id: string,
  merchantId: string,
  endpointId: string,
  event: { readonly id: string; readonly type: EventType },
  createdAt: string,
  marks: Pick<Delivery, 'trace' | 'replay'>,
): Delivery {
  const { id: eventId, type: eventType } = event;
  return { id, merchantId, endpointId, eventId, eventType, status: 'pending', attempts: [], nextAttemptAt: createdAt, createdAt, ...marks };
}

export class WebhooksWorker implements EventSink, Resender {
  private readonly log: Logger;
  /** The sweep of overdue deliveries, which stop() waits for (the database clients close next). */
  private readonly sweeps: Periodic;

  constructor(
    private readonly endpoints: EndpointsRepository,
    private readonly deliveries: DeliveriesRepository,
    private readonly events: EventsRepository,
    private readonly queue: DeliveryQueue,
    private readonly options: { readonly allowPrivateUrls: boolean; readonly retryDelaysMs: readonly number[] },
    log: Logger,
  ) {
    this.log = log.child({ component: 'webhooks' });
    this.sweeps = new Periodic(() => this.sweep(), {
      everyMs: SWEEP_EVERY_MS,
      failed: (error) => this.log.warn({ err: error }, 'webhook delivery sweep failed'),
    });
  }

  /** One delivery per event and subscribed endpoint; repeated, it creates no new delivery. `held`: not queued (the caller sends them: sendFirst). */
  async fanOut(
    merchantId: string,
    events: readonly Event[],
    traces?: ReadonlyMap<string, string>,
    held = false,
  ): Promise<readonly string[]> {
    return this.queueDeliveries(merchantId, events, (event, endpointId) => `${event.id}.${endpointId}`, traces, held);
  }

  /**
   * The first attempts of held deliveries, made by the caller (a test clock's advance) the way a
   * worker makes them: claimed first, so that no worker (a sweep of overdue deliveries, a fan-out
   * of the same events repeated by another relay) sends the same attempt; then sent, recorded,
   * and the failed ones queued for their retries. Attempts not started within `withinMs` are
   * handed back to the workers' queue unattempted.
   */
  async sendFirst(merchantId: string, deliveryIds: readonly string[], withinMs: number): Promise<void> {
    await this.sendBatch(deliveryIds, merchantId, Date.now() + withinMs);
  }

  /** Another delivery of the event (same webhook-id) to each subscribed enabled endpoint. */
  async resend(merchantId: string, event: Event): Promise<number> {
    const resend = uuidv7();
    return (await this.queueDeliveries(merchantId, [event], (e, endpointId) => `${e.id}.${endpointId}.${resend}`)).length;
  }

  /**
   * Another delivery of each of these events to this endpoint alone, marked as a replay, sent one
   * at a time in the order given (DeliveryQueue.enqueueInOrder). Each keeps its event's
   * `webhook-id`, as a resend does, so a receiver that deduplicates sees each event once.
   */
  async replay(
    merchantId: string,
    endpointId: string,
    events: readonly { readonly id: string; readonly type: EventType }[],
  ): Promise<number> {
    const replay = uuidv7();
    const createdAt = nowTimestamp();
    const deliveries = events.map((event) =>
      pendingDelivery(`${event.id}.${endpointId}.${replay}`, merchantId, endpointId, event, createdAt, { replay: true }),
    );
    if (deliveries.length === 0) return 0;
    await this.deliveries.insert(deliveries);
    await this.queue.enqueueInOrder(
      merchantId,
      deliveries.map((d) => d.id),
    );
    return deliveries.length;
  }

  private async queueDeliveries(
    merchantId: string,
    events: readonly Event[],
    idOf: (event: Event, endpointId: string) => string,
    traces?: ReadonlyMap<string, string>,
    held = false,
  ): Promise<string[]> {
    const subscribed = new Map<string, string[]>();
    const deliveries: Delivery[] = [];
    const createdAt = nowTimestamp();
    for (const event of events) {
      if (!subscribed.has(event.type)) subscribed.set(event.type, await this.endpoints.subscribedTo(merchantId, event.type));
      for (const endpointId of subscribed.get(event.type)!) {
        const trace = traces?.get(event.id);
        deliveries.push(pendingDelivery(idOf(event, endpointId), merchantId, endpointId, event, createdAt, trace ? { trace } : {}));
      }
    }
    const ids = deliveries.map((d) => d.id);
    if (ids.length === 0) return ids;
    await this.deliveries.insert(deliveries);
    if (!held) await this.queue.enqueue(merchantId, ids);
    return ids;
  }

  async start(): Promise<void> {
    await this.queue.consume((ids, merchantId, inOrder) => this.sendBatch(ids, merchantId, Infinity, inOrder));
    this.sweeps.start();
  }

  async stop(deadlineMs: number): Promise<void> {
    await Promise.all([this.sweeps.stop(), this.queue.stop(deadlineMs)]);
  }

  /** Queues again the deliveries long overdue: their job was lost. */
  private async sweep(): Promise<void> {
    const overdue = await this.deliveries.overdue(new Date(Date.now() - OVERDUE_AFTER_MS), DELIVERY_BATCH);
    if (overdue.length === 0) return;
    this.log.warn({ deliveries: overdue.length }, 'overdue webhook deliveries queued again');
    for (const [merchantId, ids] of byMerchantOf(new Map(overdue.map((d) => [d.id, d.merchantId]))))
      await this.queue.enqueue(merchantId, ids);
  }

  /**
   * Sends the deliveries of one job (all the merchant's) that are still due and held by no other worker; those not started by `startBy` are
   * queued again unattempted. `inOrder`: one at a time, in the order of `ids` (a replay).
   */
  async sendBatch(ids: readonly string[], merchantId: string, startBy = Infinity, inOrder = false): Promise<void> {
    const concurrency = inOrder ? 1 : SEND_CONCURRENCY;
    const rounds = Math.ceil(ids.length / concurrency);
    // Held while its attempts may still start, and for the last one's time after that.
    const leaseUntil = Math.min(Date.now() + rounds * (DELIVERY_TIMEOUT_MS + 5_000), startBy + DELIVERY_TIMEOUT_MS + 5_000) + 30_000;
    const claimed = await this.deliveries.claim(merchantId, ids, new Date(leaseUntil));
    if (claimed.length === 0) return;
    if (inOrder) {
      const position = new Map(ids.map((id, i) => [id, i]));
      claimed.sort((a, b) => position.get(a.id)! - position.get(b.id)!);
    }
    const [events, targets] = await Promise.all([
      this.events.findMany(merchantId, [...new Set(claimed.map((d) => d.eventId))]),
      this.endpoints.forDelivery(merchantId, [...new Set(claimed.map((d) => d.endpointId))]),
    ]);
    const updates: DeliveryUpdate[] = [];
    let next = 0;
    const sendNext = async (): Promise<void> => {
      while (next < claimed.length) {
        const delivery = claimed[next++]!;
        if (Date.now() > startBy) {
          updates.push({ id: delivery.id, attempt: undefined, status: 'pending', retryAt: new Date() });
          continue;
        }
        // A child of the change that caused it, when traced; the POST carries the delivery span's traceparent.
        const attributes = { 'subsvc.event_type': delivery.eventType, 'subsvc.attempt': delivery.attempts.length + 1 };
        updates.push(
          await inSpan('webhook delivery', delivery.trace, attributes, () =>
            this.attempt(delivery, targets.get(delivery.endpointId), events.get(delivery.eventId)),
          ),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, claimed.length) }, sendNext));
    await this.deliveries.record(merchantId, updates);
    await this.afterRecorded(merchantId, claimed, updates, targets);
  }

  /** One attempt, or none when the endpoint or the event is gone or the endpoint is disabled. */
  private async attempt(delivery: Delivery, target: DeliveryTarget | undefined, event: Event | undefined): Promise<DeliveryUpdate> {
    const line = { eventId: delivery.eventId, endpointId: delivery.endpointId, deliveryId: delivery.id };
    if (!target?.enabled || !event) {
      this.log.info(
        line,
        target ? (event ? 'webhook not sent: endpoint disabled' : 'webhook not sent: event expired') : 'webhook not sent: endpoint removed',
      );
      return { id: delivery.id, attempt: undefined, status: 'failed' };
    }
    const attempt = await attemptDelivery(target, event, this.options.allowPrivateUrls);
    const outcome = { ...line, statusCode: attempt.statusCode, error: attempt.error, durationMs: attempt.durationMs };
    metrics()?.deliveryDuration.observe(attempt.durationMs / 1000);
    const delivered = attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode < 300;
    const retryDelay = this.options.retryDelaysMs[delivery.attempts.length];
    metrics()
      ?.deliveries.labels(delivered ? 'delivered' : retryDelay === undefined ? 'failed' : 'retrying')
      .inc();
    if (!delivered) failActiveSpan(attempt.error ?? `HTTP ${attempt.statusCode}`);
    if (delivered) {
      this.log.info(outcome, 'webhook delivered');
      return { id: delivery.id, attempt, status: 'succeeded' };
    }
    const delay = this.options.retryDelaysMs[delivery.attempts.length];
    if (delay === undefined) {
      this.log.warn(outcome, 'webhook delivery failed for good');
      return { id: delivery.id, attempt, status: 'failed' };
    }
    this.log.info({ ...outcome, retryInMs: delay }, 'webhook attempt failed; will retry');
    return { id: delivery.id, attempt, status: 'pending', retryAt: new Date(Date.now() + delay) };
  }

  /** Endpoint bookkeeping (the disabling rule) and one job per retry time for the failed ones. */
  private async afterRecorded(
    merchantId: string,
    claimed: readonly Delivery[],
    updates: readonly DeliveryUpdate[],
    targets: Map<string, DeliveryTarget>,
  ): Promise<void> {
    const endpointOf = new Map(claimed.map((d) => [d.id, d.endpointId]));
    const succeeded = new Set(updates.filter((u) => u.status === 'succeeded').map((u) => endpointOf.get(u.id)!));
    await Promise.all([...succeeded].map((id) => this.endpoints.succeeded(merchantId, id)));
    for (const update of updates) {
      if (update.status !== 'failed' || !update.attempt) continue;
      const endpointId = endpointOf.get(update.id)!;
      const reason = `${DISABLE_AFTER} deliveries in a row failed after every retry (last: ${update.attempt.error ?? `HTTP ${update.attempt.statusCode}`})`;
      if (targets.has(endpointId) && (await this.endpoints.failed(merchantId, endpointId, DISABLE_AFTER, reason))) {
        this.log.warn({ endpointId, reason }, 'webhook endpoint disabled');
      }
    }
    const retries = new Map<number, string[]>();
    for (const update of updates) {
      if (!update.retryAt) continue;
      // Retries due within a second of each other share a job, at the latest of their times.
      const second = Math.ceil(update.retryAt.getTime() / 1000) * 1000;
      const ids = retries.get(second) ?? [];
      ids.push(update.id);
      retries.set(second, ids);
    }
    for (const [at, ids] of retries) await this.queue.enqueue(merchantId, ids, new Date(at));
  }
}
