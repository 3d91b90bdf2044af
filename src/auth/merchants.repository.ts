/** Every MongoDB call about merchants. Only the SHA-256 hash of an API key is ever stored. */
import type { Collection, Db } from 'mongodb';

export interface Merchant {
  readonly id: string;
  readonly name: string;
  readonly apiKeyHash: string;
}

interface MerchantDocument {
  _id: string;
  name: string;
  apiKeyHash: string;
  createdAt: Date;
}

export class MerchantsRepository {
  private readonly collection: Collection<MerchantDocument>;

  constructor(db: Db) {
    this.collection = db.collection<MerchantDocument>('merchants');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ apiKeyHash: 1 }, { unique: true, name: 'api_key_hash' });
  }

  async insert(merchant: Merchant): Promise<void> {
    await this.collection.insertOne({
      _id: merchant.id,
      name: merchant.name,
      apiKeyHash: merchant.apiKeyHash,
      createdAt: new Date(),
    });
  }

  async exists(id: string): Promise<boolean> {
    return (await this.collection.countDocuments({ _id: id }, { limit: 1 })) > 0;
  }

  async findByKeyHash(apiKeyHash: string): Promise<Merchant | undefined> {
    const doc = await this.collection.findOne({ apiKeyHash });
    return doc ? { id: doc._id, name: doc.name, apiKeyHash: doc.apiKeyHash } : undefined;
  }
}
