/**
 * Every MongoDB call about stored events (`events`, kept 30 days). The outbox entries waiting in
 * subscription documents are the outbox store's (src/subscriptions/outbox.store.ts); what an event
 * shows is made in event.payload.ts.
 */
import type { Collection, Db, Filter } from 'mongodb';
import { deleteInParts, insertNew, pageAlongIds } from '../db/mongo-helpers.js';
import { ensureTtlIndex } from '../db/retention.js';
import type { Page, PageRequest } from '../lib/pagination.js';
import type { EventType } from '../subscriptions/outbox.js';
import { shownAs, type Event } from './event.payload.js';

interface EventDocument {
  _id: string;
  merchantId: string;
  type: EventType;
  createdAt: string;
  data: Event['data'];
  expiresAt: Date;
}

export const EVENT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** Stored timestamps share one fixed format (six fractional digits, `Z`), so their order is their strings' order. */
const createdBetween = (merchantId: string, from: string, to: string, types: readonly EventType[]) => ({
  merchantId,
  createdAt: { $gte: from, $lte: to },
  type: { $in: [...types] },
});

const toEvent = (doc: EventDocument): Event => shownAs(doc.merchantId, { ...doc, id: doc._id });

/** What a list of events is narrowed to; every filter given must hold. Ids are lower-case. */
export interface EventFilter {
  readonly type?: EventType;
  readonly subscriptionId?: string;
  readonly requestId?: string;
}

/**
 * A bulk request's events: its subscriptions' changes name it in their `cause`, its
 * `bulk_request.completed` carries it as the request's own id. Each branch names the merchant
 * too, so that MongoDB serves each from its own index and merges them in `_id` order.
 */
function byRequest(merchantId: string, requestId: string): Filter<EventDocument>[] {
  return [
    { merchantId, 'data.cause.requestId': requestId },
    { merchantId, 'data.requestId': requestId },
  ];
}

export class EventsRepository {
  private readonly events: Collection<EventDocument>;

  constructor(
    db: Db,
    /** Deletes in parts of at most this many documents (src/db/workarounds.ts); undefined: one statement. */
    private readonly documentsPerDelete?: number,
  ) {
    this.events = db.collection<EventDocument>('events');
  }

  async ensureIndexes(ttlIndexes: boolean): Promise<void> {
    await ensureTtlIndex(this.events, ttlIndexes);
    await Promise.all([
      this.events.createIndex({ merchantId: 1, _id: -1 }, { name: 'merchant_events' }),
      this.events.createIndex({ merchantId: 1, type: 1, _id: -1 }, { name: 'merchant_events_by_type' }),
      this.events.createIndex({ merchantId: 1, createdAt: 1 }, { name: 'merchant_events_by_time' }),
      // Paths into `data`, where every event ever stored carries the ids: no field to backfill.
      this.events.createIndex({ merchantId: 1, 'data.subscription.id': 1, _id: -1 }, { name: 'merchant_events_by_subscription' }),
      this.events.createIndex({ merchantId: 1, 'data.cause.requestId': 1, _id: -1 }, { name: 'merchant_events_by_cause_request' }),
      this.events.createIndex({ merchantId: 1, 'data.requestId': 1, _id: -1 }, { name: 'merchant_events_by_request' }),
    ]);
  }

  /** Stores the events; ones stored already (a relay repeated) are left as they are. */
  async insert(merchantId: string, events: readonly Event[]): Promise<void> {
    const expiresAt = new Date(Date.now() + EVENT_RETENTION_MS);
    await insertNew(
      this.events,
      events.map(({ id, type, createdAt, data }) => ({ _id: id, merchantId, type, createdAt, data, expiresAt })),
    );
  }

  async find(merchantId: string, id: string): Promise<Event | undefined> {
    const doc = await this.events.findOne({ _id: id, merchantId });
    return doc ? toEvent(doc) : undefined;
  }

  /** These events of the merchant, by id: what a batch of deliveries sends. */
  async findMany(merchantId: string, ids: readonly string[]): Promise<Map<string, Event>> {
    const docs = await this.events.find({ _id: { $in: [...ids] }, merchantId }).toArray();
    return new Map(docs.map((doc) => [doc._id, toEvent(doc)]));
  }

  /** The merchant's events of this type about these subscriptions (served by `merchant_events_by_subscription`). */
  async ofSubscriptions(merchantId: string, type: EventType, subscriptionIds: readonly string[]): Promise<Event[]> {
    if (subscriptionIds.length === 0) return [];
    const docs = await this.events.find({ merchantId, 'data.subscription.id': { $in: [...subscriptionIds] }, type }).toArray();
    return docs.map(toEvent);
  }

  /** The merchant's events that pass every filter given, newest first (event ids are UUIDv7, so `_id` order is time order). */
  page(merchantId: string, { type, subscriptionId, requestId }: EventFilter, page: PageRequest): Promise<Page<Event>> {
    const filter: Filter<EventDocument> = {
      merchantId,
      ...(type ? { type } : {}),
      ...(subscriptionId ? { 'data.subscription.id': subscriptionId } : {}),
      ...(requestId ? { $or: byRequest(merchantId, requestId) } : {}),
    };
    return pageAlongIds(this.events, filter, page, true, toEvent);
  }

  /** How many of the merchant's events of these types were created in [from, to] (timestamps in the stored format). */
  countCreatedBetween(merchantId: string, from: string, to: string, types: readonly EventType[]): Promise<number> {
    return this.events.countDocuments(createdBetween(merchantId, from, to, types));
  }

  /** Those events' ids, oldest first: what a replay sends, in order. */
  async idsCreatedBetween(
    merchantId: string,
    from: string,
    to: string,
    types: readonly EventType[],
  ): Promise<{ id: string; type: EventType }[]> {
    const docs = await this.events
      .find(createdBetween(merchantId, from, to, types), { projection: { _id: 1, type: 1 } })
      .sort({ createdAt: 1, _id: 1 })
      .toArray();
    return docs.map((d) => ({ id: d._id, type: d.type }));
  }

  /** Removes events past their retention; where the server has TTL indexes they go by themselves. */
  async deleteExpired(now = new Date()): Promise<number> {
    return deleteInParts(this.events, { expiresAt: { $lte: now } }, this.documentsPerDelete);
  }
}
