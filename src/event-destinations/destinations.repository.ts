/**
 * Every MongoDB call about event destinations: the destinations (with their sealed password and
 * their delivery state) and the events waiting for each one (`destinationEvents`, one document per
 * event and destination, holding the event as shown, so that an event expired from `events` still
 * goes out). A waiting event leaves once the brokers acknowledged it.
 */
import type { Collection, Db } from 'mongodb';
import type { components } from '../../generated/openapi.js';
import { insertNew, pageAlongIds } from '../db/mongo-helpers.js';
import { livemodeOf } from '../merchants/livemode.js';
import type { Page, PageRequest } from '../lib/pagination.js';

export type EventDestination = components['schemas']['EventDestination'];
type Auth = NonNullable<components['schemas']['EventDestinationCreate']['auth']>;

/** What is stored of a destination; the password sealed (src/secrets/secret-box.ts). */
export interface DestinationSettings extends Omit<EventDestination, 'id' | 'livemode' | 'pendingCount' | 'auth'> {
  readonly auth?: Omit<Auth, 'password'> & { readonly sealedPassword: string };
}

interface DestinationDocument extends DestinationSettings {
  _id: string;
  merchantId: string;
  /** Failed publications in a row, for the backoff. */
  failures: number;
  /** Not tried again before this (backoff). */
  retryAt: Date | null;
  /** Set after events are queued for it, cleared by a publisher that found none: what the publishers look for. */
  hasWaiting: boolean;
  /** The worker publishing to it, until `leaseUntil`: one publisher at a time keeps the order. */
  leaseOwner: string | null;
  leaseUntil: Date | null;
}

/** A destination as a publisher needs it. */
export interface PublishTarget extends DestinationSettings {
  readonly id: string;
  readonly merchantId: string;
  readonly failures: number;
}

/** An event waiting for a destination. `key` orders it: the messages of one key go out in `at` order. */
export interface WaitingEvent {
  readonly id: string;
  readonly destinationId: string;
  readonly merchantId: string;
  readonly eventId: string;
  readonly key: string;
  /** The event's time (six fractional digits), then its id: the order it is published in. */
  readonly at: string;
  readonly type: string;
  readonly event: object;
}

interface WaitingDocument extends Omit<WaitingEvent, 'id'> {
  _id: string;
}

function toDestination({
  _id,
  merchantId,
  failures: _f,
  retryAt: _r,
  hasWaiting: _w,
  leaseOwner: _o,
  leaseUntil: _u,
  auth,
  ...rest
}: DestinationDocument) {
  const shownAuth = auth ? { auth: { mechanism: auth.mechanism, username: auth.username } } : {};
  return { id: _id, ...rest, ...shownAuth, livemode: livemodeOf(merchantId) };
}

export class DestinationsRepository {
  private readonly destinations: Collection<DestinationDocument>;
  private readonly waiting: Collection<WaitingDocument>;

  constructor(db: Db) {
    this.destinations = db.collection<DestinationDocument>('eventDestinations');
    this.waiting = db.collection<WaitingDocument>('destinationEvents');
  }

  async ensureIndexes(): Promise<void> {
    await this.destinations.createIndex({ merchantId: 1, _id: 1 }, { name: 'merchant_destinations' });
    await this.destinations.createIndex({ hasWaiting: 1 }, { name: 'destinations_waiting' });
    await this.waiting.createIndex({ destinationId: 1, at: 1, _id: 1 }, { name: 'waiting_in_order' });
  }

  async insert(merchantId: string, id: string, settings: DestinationSettings): Promise<void> {
    await this.destinations.insertOne({
      _id: id,
      merchantId,
      ...settings,
      failures: 0,
      retryAt: null,
      hasWaiting: false,
      leaseOwner: null,
      leaseUntil: null,
    });
  }

  count(merchantId: string): Promise<number> {
    return this.destinations.countDocuments({ merchantId });
  }

  async find(merchantId: string, id: string): Promise<EventDestination | undefined> {
    const doc = await this.destinations.findOne({ _id: id, merchantId });
    return doc ? { ...toDestination(doc), pendingCount: await this.pendingCount(id) } : undefined;
  }

  async page(merchantId: string, page: PageRequest): Promise<Page<EventDestination>> {
    const found = await pageAlongIds(this.destinations, { merchantId }, page, false, toDestination);
    const data = await Promise.all(found.data.map(async (d) => ({ ...d, pendingCount: await this.pendingCount(d.id) })));
    return { ...found, data };
  }

  /** Removes it and what waits for it. */
  async delete(merchantId: string, id: string): Promise<boolean> {
    const { deletedCount } = await this.destinations.deleteOne({ _id: id, merchantId });
    if (deletedCount === 1) await this.waiting.deleteMany({ destinationId: id });
    return deletedCount === 1;
  }

  pendingCount(destinationId?: string): Promise<number> {
    return this.waiting.countDocuments(destinationId ? { destinationId } : {});
  }

  /** The merchant's destinations that take this event type. */
  async subscribedTo(merchantId: string, type: string): Promise<string[]> {
    const docs = await this.destinations
      .find({ merchantId, types: { $in: ['*' as const, type as never] } }, { projection: { _id: 1 } })
      .toArray();
    return docs.map((d) => d._id);
  }

  /**
   * Queues these events (one queued already is left as it is: a repeated relay), then marks their
   * destinations: in that order, so that a publisher clearing the mark (`nothingWaiting`) either
   * sees these events or is followed by this mark.
   */
  async enqueue(events: readonly WaitingEvent[]): Promise<void> {
    await insertNew(
      this.waiting,
      events.map(({ id, ...rest }) => ({ _id: id, ...rest })),
    );
    const ids = [...new Set(events.map((e) => e.destinationId))];
    await this.destinations.updateMany({ _id: { $in: ids }, hasWaiting: { $ne: true } }, { $set: { hasWaiting: true } });
  }

  /** A publisher found nothing waiting: the mark is cleared, and true unless events came meanwhile (then it is set again). */
  async nothingWaiting(id: string): Promise<boolean> {
    await this.destinations.updateOne({ _id: id }, { $set: { hasWaiting: false } });
    if ((await this.next(id, 1)).length === 0) return true;
    await this.destinations.updateOne({ _id: id }, { $set: { hasWaiting: true } });
    return false;
  }

  /** Destinations with events waiting (every merchant's) whose backoff is over and whose lease is free or this owner's. */
  async due(now: Date, owner: string): Promise<string[]> {
    // One equality, which an index serves on every engine; the few marked are sorted out here.
    const docs = await this.destinations
      .find({ hasWaiting: true }, { projection: { _id: 1, retryAt: 1, leaseUntil: 1, leaseOwner: 1 } })
      .toArray();
    const free = (d: (typeof docs)[number]) => d.leaseUntil === null || d.leaseUntil <= now || d.leaseOwner === owner;
    return docs.filter((d) => (d.retryAt === null || d.retryAt <= now) && free(d)).map((d) => d._id);
  }

  /**
   * Takes the destination for `owner` until `until`, unless another owner holds it: one publisher
   * at a time, so that its events go out in order. Undefined when another holds it or it is gone.
   */
  async lease(id: string, owner: string, now: Date, until: Date): Promise<PublishTarget | undefined> {
    const doc = await this.destinations.findOneAndUpdate(
      { _id: id, $or: [{ leaseUntil: null }, { leaseUntil: { $lte: now } }, { leaseOwner: owner }] },
      { $set: { leaseOwner: owner, leaseUntil: until } },
      { returnDocument: 'after' },
    );
    if (!doc) return undefined;
    const { _id, leaseOwner: _o, leaseUntil: _u, retryAt: _r, ...rest } = doc;
    return { id: _id, ...rest };
  }

  async release(id: string, owner: string): Promise<void> {
    await this.destinations.updateOne({ _id: id, leaseOwner: owner }, { $set: { leaseOwner: null, leaseUntil: null } });
  }

  /** The next events waiting for the destination, in the order they are published in. */
  async next(destinationId: string, limit: number): Promise<WaitingEvent[]> {
    const docs = await this.waiting.find({ destinationId }).sort({ at: 1, _id: 1 }).limit(limit).toArray();
    return docs.map(({ _id, ...rest }) => ({ id: _id, ...rest }));
  }

  /** What the brokers acknowledged leaves the queue, and a destination that was failing is active again. */
  async published(destinationId: string, ids: readonly string[], wasFailing: boolean): Promise<void> {
    await this.waiting.deleteMany({ _id: { $in: [...ids] } });
    if (!wasFailing) return;
    await this.destinations.updateOne(
      { _id: destinationId, $or: [{ status: { $ne: 'active' } }, { failures: { $ne: 0 } }] },
      { $set: { status: 'active', lastError: null, failures: 0, retryAt: null } },
    );
  }

  /** A publication that failed: the destination is failing, and tried again at `retryAt`. */
  async failed(destinationId: string, error: string, retryAt: Date): Promise<void> {
    await this.destinations.updateOne(
      { _id: destinationId },
      { $set: { status: 'failing', lastError: error, retryAt }, $inc: { failures: 1 } },
    );
  }

  /** Waiting events older than `before`, every destination's, counted up to `cap`: what the retention would have dropped. */
  countOlderThan(before: string, cap: number): Promise<number> {
    return this.waiting.countDocuments({ at: { $lt: before } }, { limit: cap });
  }
}
