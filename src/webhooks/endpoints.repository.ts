/** Every MongoDB call about webhook endpoints. The secret is stored so that it can sign, and leaves only through `forDelivery`. */
import type { Collection, Db } from 'mongodb';
import type { components } from '../../generated/openapi.js';
import { GUARDED } from '../db/guarded.js';
import { UNQUEUED, type PerKeyQueue } from '../lib/keyed-mutex.js';
import { livemodeOf } from '../merchants/livemode.js';
import { pageAlongIds } from '../db/mongo-helpers.js';
import type { Page, PageRequest } from '../lib/pagination.js';

export type WebhookEndpoint = components['schemas']['WebhookEndpoint'];
export type EndpointChanges = Partial<Pick<WebhookEndpoint, 'url' | 'events' | 'description' | 'status' | 'disabledReason' | 'format'>>;

interface EndpointDocument extends Omit<WebhookEndpoint, 'id' | 'livemode'> {
  _id: string;
  merchantId: string;
  secret: string;
  /** Deliveries failed for good since the last success (the disabling rule, delivery.worker.ts). */
  failuresInARow: number;
}

export interface DeliveryTarget {
  readonly id: string;
  readonly url: string;
  readonly secret: string;
  readonly enabled: boolean;
  /** The body of each delivery: the event (`standard`, also for endpoints made before formats) or a CloudEvent. */
  readonly format: NonNullable<WebhookEndpoint['format']>;
}

function toEndpoint({ _id, merchantId, secret: _s, failuresInARow: _f, ...rest }: EndpointDocument): WebhookEndpoint {
  return { id: _id, ...rest, livemode: livemodeOf(merchantId) };
}

export class EndpointsRepository {
  private readonly collection: Collection<EndpointDocument>;

  /**
   * `guard`: where the server's conditional update is not atomic, every change of an endpoint
   * queues on it (GUARDED.webhookEndpoint), so that a merchant's change and a delivery's failure
   * count cannot undo each other (the engine writes whole documents); UNQUEUED on MongoDB, and
   * for a store that only reads or registers (`subsvc status`, `subsvc webhooks listen`).
   */
  constructor(
    db: Db,
    private readonly guard: PerKeyQueue = UNQUEUED,
  ) {
    this.collection = db.collection<EndpointDocument>('webhookEndpoints');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ merchantId: 1, _id: 1 }, { name: 'merchant_endpoints' });
  }

  async insert(merchantId: string, endpoint: WebhookEndpoint, secret: string): Promise<void> {
    const { id, livemode: _l, ...rest } = endpoint;
    await this.collection.insertOne({ _id: id, merchantId, ...rest, secret, failuresInARow: 0 });
  }

  count(merchantId: string): Promise<number> {
    return this.collection.countDocuments({ merchantId });
  }

  async find(merchantId: string, id: string): Promise<WebhookEndpoint | undefined> {
    const doc = await this.collection.findOne({ _id: id, merchantId });
    return doc ? toEndpoint(doc) : undefined;
  }

  page(merchantId: string, page: PageRequest): Promise<Page<WebhookEndpoint>> {
    return pageAlongIds(this.collection, { merchantId }, page, false, toEndpoint);
  }

  /** Applies the changes; enabling clears the failure count. Undefined when there is no such endpoint. */
  async update(merchantId: string, id: string, changes: EndpointChanges): Promise<WebhookEndpoint | undefined> {
    const reset = changes.status === 'enabled' ? { failuresInARow: 0, disabledReason: null } : {};
    const doc = await this.guard.run(GUARDED.webhookEndpoint(id), () =>
      this.collection.findOneAndUpdate({ _id: id, merchantId }, { $set: { ...changes, ...reset } }, { returnDocument: 'after' }),
    );
    return doc ? toEndpoint(doc) : undefined;
  }

  async delete(merchantId: string, id: string): Promise<boolean> {
    return this.guard.run(
      GUARDED.webhookEndpoint(id),
      async () => (await this.collection.deleteOne({ _id: id, merchantId })).deletedCount === 1,
    );
  }

  /** The merchant's enabled endpoints that take this event type. */
  async subscribedTo(merchantId: string, type: WebhookEndpoint['events'][number]): Promise<string[]> {
    const docs = await this.collection
      .find({ merchantId, status: 'enabled', events: { $in: ['*' as const, type] } }, { projection: { _id: 1 } })
      .toArray();
    return docs.map((d) => d._id);
  }

  /** Endpoints disabled after repeated failures, every merchant's, counted up to `cap` (no index: endpoints are few per merchant): `subsvc status`. */
  async countDisabled(cap: number): Promise<number> {
    return this.collection.countDocuments({ status: 'disabled' }, { limit: cap });
  }

  /** These endpoints as a delivery needs them (with the secret); removed ones are absent. */
  async forDelivery(merchantId: string, ids: readonly string[]): Promise<Map<string, DeliveryTarget>> {
    const docs = await this.collection
      .find({ _id: { $in: [...ids] }, merchantId }, { projection: { url: 1, secret: 1, status: 1, format: 1 } })
      .toArray();
    return new Map(
      docs.map((doc) => [
        doc._id,
        { id: doc._id, url: doc.url, secret: doc.secret, enabled: doc.status === 'enabled', format: doc.format ?? 'standard' },
      ]),
    );
  }

  async succeeded(merchantId: string, id: string): Promise<void> {
    await this.guard.run(GUARDED.webhookEndpoint(id), () =>
      this.collection.updateOne({ _id: id, merchantId, failuresInARow: { $ne: 0 } }, { $set: { failuresInARow: 0 } }),
    );
  }

  /** Counts a delivery failed for good; disables the endpoint at `limit` in a row. True when this disabled it. */
  failed(merchantId: string, id: string, limit: number, reason: string): Promise<boolean> {
    return this.guard.run(GUARDED.webhookEndpoint(id), async () => {
      const doc = await this.collection.findOneAndUpdate(
        { _id: id, merchantId },
        { $inc: { failuresInARow: 1 } },
        { returnDocument: 'after' },
      );
      if (!doc || doc.failuresInARow < limit || doc.status !== 'enabled') return false;
      const result = await this.collection.updateOne(
        { _id: id, merchantId, status: 'enabled' },
        { $set: { status: 'disabled', disabledReason: reason } },
      );
      return result.modifiedCount === 1;
    });
  }
}
