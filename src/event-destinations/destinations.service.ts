/**
 * Event destinations (Kafka topics) of a merchant, at most MAX_DESTINATIONS, and the queueing of
 * events for them: each event once per destination that takes its type, kept until the brokers
 * acknowledge it (src/event-destinations/kafka.publisher.ts).
 */
import type { components } from '../../generated/openapi.js';
import { InvalidRequestError } from '../errors.js';
import { nowTimestamp } from '../lib/clock.js';
import { uuidv7 } from '../lib/ids.js';
import { livemodeOf } from '../merchants/livemode.js';
import type { Page, PageRequest } from '../lib/pagination.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { checkBrokers, type BrokerPolicy } from './broker-guard.js';
import { subjectOf, type EventLike } from '../events/cloudevent.js';
import { CredentialsNeedTlsError, EventDestinationNotFoundError } from './destinations.errors.js';
import type { DestinationSettings, DestinationsRepository, EventDestination, WaitingEvent } from './destinations.repository.js';

export const MAX_DESTINATIONS = 16;

export type NewDestination = components['schemas']['EventDestinationCreate'];
export type DestinationPing = components['schemas']['EventDestinationPing'];

export class DestinationsService {
  constructor(
    private readonly repository: DestinationsRepository,
    private readonly secrets: SecretBox,
    private readonly brokers: BrokerPolicy,
    /** Told when events were queued, so that this process's publisher takes them at once. */
    private readonly queued: () => void = () => undefined,
  ) {}

  async create(merchantId: string, input: NewDestination): Promise<EventDestination> {
    const tls = input.tls ?? true;
    if (input.auth && !tls) throw new CredentialsNeedTlsError('auth needs tls; a password is never sent in clear.');
    await checkBrokers(input.bootstrapServers, this.brokers);
    // A check, then an insert: two concurrent creations may pass the limit by one; a guard, not a quota.
    if ((await this.repository.count(merchantId)) >= MAX_DESTINATIONS)
      throw new InvalidRequestError(`A merchant has at most ${MAX_DESTINATIONS} event destinations; remove one first.`);
    const { auth } = input;
    const settings: DestinationSettings = {
      type: input.type,
      bootstrapServers: input.bootstrapServers,
      topic: input.topic,
      format: input.format ?? 'cloudevents',
      types: input.types ?? ['*'],
      tls,
      ...(auth ? { auth: { mechanism: auth.mechanism, username: auth.username, sealedPassword: this.secrets.seal(auth.password) } } : {}),
      status: 'active',
      lastError: null,
      createdAt: nowTimestamp(),
    };
    const id = uuidv7();
    await this.repository.insert(merchantId, id, settings);
    return this.get(merchantId, id);
  }

  list(merchantId: string, page: PageRequest): Promise<Page<EventDestination>> {
    return this.repository.page(merchantId, { ...page, startingAfter: page.startingAfter?.toLowerCase() });
  }

  async get(merchantId: string, id: string): Promise<EventDestination> {
    const found = await this.repository.find(merchantId, id.toLowerCase());
    if (!found) throw new EventDestinationNotFoundError(`Event destination ${id} not found`);
    return found;
  }

  async delete(merchantId: string, id: string): Promise<void> {
    if (!(await this.repository.delete(merchantId, id.toLowerCase())))
      throw new EventDestinationNotFoundError(`Event destination ${id} not found`);
  }

  /** One `ping` behind what waits for the destination, keyed by the destination's id. */
  async ping(merchantId: string, id: string): Promise<DestinationPing> {
    const destination = await this.get(merchantId, id);
    const at = nowTimestamp();
    const pingId = uuidv7();
    const event = { id: pingId, type: 'ping', createdAt: at, data: { destinationId: destination.id }, livemode: livemodeOf(merchantId) };
    await this.repository.enqueue([
      {
        id: `${pingId}.${destination.id}`,
        destinationId: destination.id,
        merchantId,
        eventId: pingId,
        key: destination.id,
        at,
        type: 'ping',
        event,
      },
    ]);
    this.queued();
    return { id: pingId, destinationId: destination.id, livemode: livemodeOf(merchantId) };
  }

  /** Queues each event once per destination that takes its type; repeated, it queues nothing new. */
  async enqueue(merchantId: string, events: readonly (EventLike & { readonly livemode?: boolean })[]): Promise<void> {
    const subscribed = new Map<string, string[]>();
    const waiting: WaitingEvent[] = [];
    for (const event of events) {
      if (!subscribed.has(event.type)) subscribed.set(event.type, await this.repository.subscribedTo(merchantId, event.type));
      for (const destinationId of subscribed.get(event.type)!)
        waiting.push({
          id: `${event.id}.${destinationId}`,
          destinationId,
          merchantId,
          eventId: event.id,
          key: subjectOf(event) ?? event.id,
          at: event.createdAt,
          type: event.type,
          event,
        });
    }
    if (waiting.length === 0) return;
    await this.repository.enqueue(waiting);
    this.queued();
  }
}
