/**
 * The one store of the `billingConnections` collection: a merchant's (or test mode's) connection to
 * its billing system, one document per owner and system. Its secrets arrive sealed
 * (src/secrets/secret-box.ts) and leave sealed: this store never sees them in clear.
 */
import type { Collection, Db } from 'mongodb';
import { GUARDED } from '../db/guarded.js';
import type { PerKeyQueue } from '../lib/keyed-mutex.js';

const CONNECTIONS_COLLECTION = 'billingConnections';

export type PauseBehavior = 'void' | 'keep_as_draft' | 'mark_uncollectible';

/** A connection as stored; its keys sealed. */
export interface StoredConnection {
  readonly id: string;
  readonly merchantId: string;
  readonly system: 'stripe';
  readonly sealedApiKey: string;
  readonly sealedWebhookSecret: string;
  readonly apiKeyLast4: string;
  readonly pauseBehavior: PauseBehavior;
  readonly createdAt: string;
  readonly lastSyncAt: string | null;
}

interface ConnectionDocument extends StoredConnection {
  /** `<merchantId>:<system>`: one connection per owner and system. */
  _id: string;
  modifiedAt: string;
}

const keyOf = (merchantId: string, system: string) => `${merchantId}:${system}`;

function connectionOf(doc: ConnectionDocument): StoredConnection {
  const { id, merchantId, system, sealedApiKey, sealedWebhookSecret, apiKeyLast4, pauseBehavior, createdAt, lastSyncAt } = doc;
  return {
    id,
    merchantId,
    system,
    sealedApiKey,
    sealedWebhookSecret,
    apiKeyLast4,
    pauseBehavior,
    createdAt,
    lastSyncAt: lastSyncAt ?? null,
  };
}

export class StripeConnectionsRepository {
  private readonly collection: Collection<ConnectionDocument>;

  /** `guard`: where the server's conditional update is not atomic, each upsert queues on it (two first puts at once both insert). */
  constructor(
    db: Db,
    private readonly guard: PerKeyQueue,
  ) {
    this.collection = db.collection<ConnectionDocument>(CONNECTIONS_COLLECTION);
  }

  /** `merchant_connections` serves the API's reads; `connection_id` the inbound webhooks, which name the connection only. */
  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ merchantId: 1, _id: 1 }, { name: 'merchant_connections' });
    await this.collection.createIndex({ id: 1 }, { name: 'connection_id', unique: true });
  }

  /**
   * Connects, or replaces the keys and behaviour of the connection there is (keeping its id,
   * `createdAt` and `lastSyncAt`): one upsert. `fresh` is used only when there is none.
   */
  async put(
    fresh: Pick<StoredConnection, 'id' | 'merchantId' | 'system' | 'createdAt'>,
    set: Pick<StoredConnection, 'sealedApiKey' | 'sealedWebhookSecret' | 'apiKeyLast4' | 'pauseBehavior'>,
  ): Promise<StoredConnection> {
    const _id = keyOf(fresh.merchantId, fresh.system);
    const doc = await this.guard.run(GUARDED.billingConnection(_id), () =>
      this.collection.findOneAndUpdate(
        { _id, merchantId: fresh.merchantId },
        {
          $set: { ...set, modifiedAt: fresh.createdAt },
          $setOnInsert: { id: fresh.id, system: fresh.system, createdAt: fresh.createdAt, lastSyncAt: null },
        },
        { upsert: true, returnDocument: 'after' },
      ),
    );
    return connectionOf(doc!);
  }

  async find(merchantId: string, system: 'stripe'): Promise<StoredConnection | undefined> {
    const doc = await this.collection.findOne({ _id: keyOf(merchantId, system), merchantId });
    return doc ? connectionOf(doc) : undefined;
  }

  async findById(id: string): Promise<StoredConnection | undefined> {
    const doc = await this.collection.findOne({ id });
    return doc ? connectionOf(doc) : undefined;
  }

  /** Records when a backfill last finished reading Stripe. */
  async markSynced(merchantId: string, system: 'stripe', at: string): Promise<void> {
    await this.collection.updateOne({ _id: keyOf(merchantId, system), merchantId }, { $set: { lastSyncAt: at } });
  }

  /** Whether there was one to remove. */
  async remove(merchantId: string, system: 'stripe'): Promise<boolean> {
    const { deletedCount } = await this.collection.deleteOne({ _id: keyOf(merchantId, system), merchantId });
    return deletedCount > 0;
  }
}
