/**
 * Every MongoDB call about subscriptions. Documents map to the domain's Subscription here;
 * no _id or driver type leaves this file.
 */
import type { Collection, Db } from 'mongodb';
import type { Subscription, SubscriptionStatus } from './subscriptions.rules.js';

interface SubscriptionDocument {
  _id: string;
  merchantId: string;
  planId: string;
  status: SubscriptionStatus;
  cycle: number;
  createdAt: string;
  modifiedAt: string;
}

function toSubscription(doc: SubscriptionDocument): Subscription {
  return {
    id: doc._id,
    merchantId: doc.merchantId,
    planId: doc.planId,
    status: doc.status,
    cycle: doc.cycle,
    createdAt: doc.createdAt,
    modifiedAt: doc.modifiedAt,
  };
}

export class SubscriptionsRepository {
  private readonly collection: Collection<SubscriptionDocument>;

  constructor(db: Db) {
    this.collection = db.collection<SubscriptionDocument>('subscriptions');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ merchantId: 1, _id: 1 }, { name: 'merchant_subscriptions' });
  }

  async find(merchantId: string, id: string): Promise<Subscription | undefined> {
    const doc = await this.collection.findOne({ _id: id, merchantId });
    return doc ? toSubscription(doc) : undefined;
  }

  /** One conditional atomic update: changes the status only if it is still `from`. */
  async transition(
    merchantId: string,
    id: string,
    from: SubscriptionStatus,
    to: SubscriptionStatus,
    at: string,
  ): Promise<Subscription | undefined> {
    const doc = await this.collection.findOneAndUpdate(
      { _id: id, merchantId, status: from },
      { $set: { status: to, modifiedAt: at } },
      { returnDocument: 'after' },
    );
    return doc ? toSubscription(doc) : undefined;
  }

  /** Which of these ids are subscriptions of the merchant: one query. */
  async ownedIds(merchantId: string, ids: readonly string[]): Promise<Set<string>> {
    const docs = await this.collection
      .find({ _id: { $in: [...ids] }, merchantId }, { projection: { _id: 1 } })
      .toArray();
    return new Set(docs.map((d) => d._id));
  }

  async findMany(merchantId: string, ids: readonly string[]): Promise<Subscription[]> {
    const docs = await this.collection.find({ _id: { $in: [...ids] }, merchantId }).toArray();
    return docs.map(toSubscription);
  }

  /** The conditional update of many subscriptions in one statement; returns how many changed. */
  async transitionMany(
    merchantId: string,
    ids: readonly string[],
    from: SubscriptionStatus,
    to: SubscriptionStatus,
    at: string,
  ): Promise<number> {
    if (ids.length === 0) return 0;
    const result = await this.collection.updateMany(
      { _id: { $in: [...ids] }, merchantId, status: from },
      { $set: { status: to, modifiedAt: at } },
    );
    return result.modifiedCount;
  }

  async insertMany(subscriptions: readonly Subscription[]): Promise<void> {
    if (subscriptions.length === 0) return;
    await this.collection.insertMany(
      subscriptions.map(({ id, ...rest }) => ({ _id: id, ...rest })),
      { ordered: false },
    );
  }
}
