/**
 * From the events waiting for each Kafka destination to its brokers, in worker processes: one
 * publisher at a time per destination (a lease), its events in order (a subscription's events keep
 * their order in one partition, keyed by the subscription's id), through an idempotent producer
 * with every in-sync replica's acknowledgement; an event leaves the queue only once acknowledged.
 * A destination whose brokers are down or refuse is `failing` and tried again with backoff; the
 * others go on. A worker killed mid-publish leaves its lease to run out, and the next publisher
 * sends what was not acknowledged again, with the same CloudEvent `id`.
 */
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import type { MessageToProduce } from '@platformatic/kafka';
import { formatTimestamp } from '../lib/clock.js';
import { EVENT_RETENTION_MS } from '../events/events.repository.js';
import { Periodic } from '../lib/periodic.js';
import type { Logger } from '../logger.js';
import { metrics } from '../observability/metrics.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { checkBrokers, type BrokerPolicy } from './broker-guard.js';
import { ConnectionFailures, describe, producerOf, type DestinationProducer } from './kafka.producer.js';
import { CLOUDEVENTS_CONTENT_TYPE, toCloudEvent, type EventLike } from '../events/cloudevent.js';
import type { DestinationsRepository, PublishTarget, WaitingEvent } from './destinations.repository.js';

/** How often a worker looks for waiting events when nothing wakes it (events queued by another process). */
const POLL_MS = 250;
/** Messages per produce request. */
const BATCH = 500;
/** A publisher's hold on a destination. */
const LEASE_MS = 15_000;
/** The hold is renewed between batches once this old: a batch's publication (ACK_DEADLINE_MS) then ends well within it. */
const RENEW_AFTER_MS = 2_000;
/** Backoff after failures in a row: doubling from the first, up to the last. */
const BACKOFF_FIRST_MS = 250;
const BACKOFF_MAX_MS = 10_000;
/** How often the pending gauges are read from the database. */
const GAUGE_EVERY_MS = 5_000;
/** The expired gauge counts up to this: enough to act on, without counting a whole backlog. */
const EXPIRED_CAP = 1_000;
/**
 * How long a batch may wait for its acknowledgement: the client waits on, without an error, for a
 * broker that is down or a topic that does not exist, so the publisher gives up on it here.
 */
const ACK_DEADLINE_MS = 8_000;

export interface PublisherOptions {
  readonly brokers: BrokerPolicy;
  readonly secrets: SecretBox;
  /** PEM certificates trusted besides the system's (KAFKA_CA_FILE). */
  readonly trustedCa?: string | undefined;
}

/** The message of one waiting event: a CloudEvent (structured mode) or the event itself. */
function messageOf(target: PublishTarget, waiting: WaitingEvent, topic: string): MessageToProduce<string, string, string, string> {
  const cloud = target.format === 'cloudevents';
  const value = cloud ? toCloudEvent(waiting.event as EventLike) : waiting.event;
  return {
    topic,
    key: waiting.key,
    value: JSON.stringify(value),
    headers: { 'content-type': cloud ? CLOUDEVENTS_CONTENT_TYPE : 'application/json' },
  };
}

const accepts = (address: string) =>
  new Promise<boolean>((resolve) => {
    const at = address.lastIndexOf(':');
    const socket = connect({ host: address.slice(0, at), port: Number(address.slice(at + 1)), timeout: 2_000 });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });

/**
 * Why a batch got no acknowledgement in time: no broker took the connection, a connection failed
 * (`lastFailure`, as the client last told it), or they answered and still did not acknowledge.
 */
async function unacknowledged(target: PublishTarget, lastFailure: unknown): Promise<Error> {
  const reachable = await Promise.all(target.bootstrapServers.map(accepts));
  const seconds = ACK_DEADLINE_MS / 1000;
  if (!reachable.some(Boolean)) return new Error(`brokers unreachable: no connection to ${target.bootstrapServers.join(', ')}`);
  if (lastFailure !== undefined) return new Error(`no acknowledgement within ${seconds} s: ${describe(lastFailure)}`);
  return new Error(`no acknowledgement within ${seconds} s: check that topic ${target.topic} exists and that this user may write to it`);
}

export class KafkaPublisher {
  private readonly log: Logger;
  private readonly rounds: Periodic;
  private readonly owner = randomUUID();
  private readonly producers = new Map<string, DestinationProducer>();
  private readonly failures = new ConnectionFailures();
  private wokenDuringRound = false;
  private gaugeReadAt = 0;

  constructor(
    private readonly repository: DestinationsRepository,
    private readonly options: PublisherOptions,
    log: Logger,
  ) {
    this.log = log.child({ component: 'event-destinations' });
    this.rounds = new Periodic(() => this.round(), {
      everyMs: POLL_MS,
      atStart: true,
      failed: (error) => this.log.warn({ err: error }, 'event destinations round failed'),
    });
  }

  start(): void {
    this.failures.start();
    this.rounds.start();
  }

  /** Events were queued by this process: published now rather than at the next poll. */
  wake(): void {
    if (!this.rounds.running) return;
    this.wokenDuringRound = true;
    void this.rounds.runNow();
  }

  async stop(): Promise<void> {
    await this.rounds.stop();
    await Promise.all([...this.producers.values()].map((p) => p.close(true).catch(() => undefined)));
    this.producers.clear();
    this.failures.stop();
  }

  private async round(): Promise<void> {
    do {
      this.wokenDuringRound = false;
      const due = await this.repository.due(new Date(), this.owner);
      await Promise.all(due.map((id) => this.drain(id)));
    } while (this.wokenDuringRound && this.rounds.running);
    if (Date.now() - this.gaugeReadAt > GAUGE_EVERY_MS) {
      this.gaugeReadAt = Date.now();
      const gauge = metrics()?.destinationsPending;
      if (gauge) gauge.set(await this.repository.pendingCount());
      // Kept past the events' retention rather than dropped: said and counted, so that an operator can act.
      const expired = await this.repository.countOlderThan(formatTimestamp(BigInt(Date.now() - EVENT_RETENTION_MS) * 1000n), EXPIRED_CAP);
      metrics()?.destinationsExpired.set(expired);
      if (expired > 0) this.log.warn({ events: expired }, 'events older than the event retention still wait for an event destination');
    }
  }

  /** Publishes what waits for one destination, batch after batch, while it holds the lease. */
  private async drain(id: string): Promise<void> {
    const lease = () => this.repository.lease(id, this.owner, new Date(), new Date(Date.now() + LEASE_MS));
    let target = await lease();
    if (!target) return;
    let leasedAt = Date.now();
    const { failures } = target;
    let healthy = target.status === 'active' && failures === 0;
    try {
      for (let batch = await this.repository.next(id, BATCH); this.rounds.running;) {
        if (batch.length > 0) {
          await this.publish(target, batch);
          await this.repository.published(
            id,
            batch.map((w) => w.id),
            !healthy,
          );
          healthy = true;
          metrics()?.destinationMessages.labels('published').inc(batch.length);
        }
        // A batch short of full was all that waited: done, unless more came meanwhile.
        if (batch.length < BATCH && (await this.repository.nothingWaiting(id))) break;
        if (Date.now() - leasedAt > RENEW_AFTER_MS) {
          target = await lease();
          if (!target) return;
          leasedAt = Date.now();
        }
        batch = await this.repository.next(id, BATCH);
      }
    } catch (error) {
      const message = describe(error);
      const delay = Math.min(BACKOFF_FIRST_MS * 2 ** failures, BACKOFF_MAX_MS);
      metrics()?.destinationMessages.labels('failed').inc();
      this.log.warn({ destinationId: id, error: message, retryInMs: delay }, 'event destination failing; its events wait');
      await this.dropProducer(id);
      await this.repository.failed(id, message, new Date(Date.now() + delay));
    } finally {
      await this.repository.release(id, this.owner);
    }
  }

  private async publish(target: PublishTarget, batch: readonly WaitingEvent[]): Promise<void> {
    const producer = await this.producerFor(target);
    const send = producer.send({ messages: batch.map((w) => messageOf(target, w, target.topic)) });
    await this.failures.bound(producer, send, ACK_DEADLINE_MS, (last) => unacknowledged(target, last));
  }

  private async producerFor(target: PublishTarget): Promise<DestinationProducer> {
    const existing = this.producers.get(target.id);
    if (existing) return existing;
    // Checked before each new connection: a host's addresses may have changed since creation.
    await checkBrokers(target.bootstrapServers, this.options.brokers);
    const { brokers, secrets, trustedCa } = this.options;
    const producer = producerOf(target, { brokers, secrets, trustedCa });
    this.failures.watch(producer);
    this.producers.set(target.id, producer);
    return producer;
  }

  /** A producer that failed is closed: the next attempt connects afresh (a restarted broker, a fixed topic). */
  private async dropProducer(id: string): Promise<void> {
    const producer = this.producers.get(id);
    this.producers.delete(id);
    if (!producer) return;
    this.failures.forget(producer);
    await producer.close(true).catch(() => undefined);
  }
}
