/**
 * Every MongoDB call about merchants and their API keys. Only SHA-256 hashes of keys are stored.
 *
 * A merchant's keys live in its own document (`keys`, with `keysVersion`), so that a change to
 * the set (make, roll, revoke: "never revoke the last key") is one conditional update of one
 * document, atomic on MongoDB. Last-used times are a map beside it (`keysLastUsedAt`), written
 * with `$max` and never by a change of the set, so the two never overwrite each other.
 */
import type { Collection, Db } from 'mongodb';
import { bulkWriteInParts } from '../db/mongo-helpers.js';
import { isDuplicateKeyError } from '../db/mongo.js';
import { GUARDED } from '../db/guarded.js';
import type { PerKeyQueue } from '../lib/keyed-mutex.js';
import type { StoredKey } from './credentials.js';

interface MerchantDocument {
  _id: string;
  name: string;
  createdAt: Date;
  keys: StoredKey[];
  keysVersion: number;
  keysLastUsedAt?: Record<string, string>;
  /** A test mode's document (src/merchants/livemode.ts): the live merchant it belongs to. */
  liveMerchantId?: string;
}

/** A merchant's keys as read, with the version a change must find to be written. */
export interface KeySet {
  readonly merchantId: string;
  readonly keys: readonly StoredKey[];
  readonly version: number;
  readonly lastUsedAt: Readonly<Record<string, string>>;
}

/** The merchant a key hash belongs to, and that key. */
export interface KeyOwner {
  readonly merchantId: string;
  readonly key: StoredKey;
}

export class MerchantsRepository {
  private readonly collection: Collection<MerchantDocument>;

  /**
   * `guard`: where the server's conditional update is not atomic, every write to a merchant's
   * document queues on it (GUARDED.merchant), so that a write of last-used times cannot put back
   * a key set read before a change (the engine writes whole documents); UNQUEUED on MongoDB.
   */
  constructor(
    db: Db,
    private readonly guard: PerKeyQueue,
    /** Statements per bulk write command, where the engine needs parts (db/workarounds.ts statementsPerCommand). */
    private readonly statementsPerCommand?: number,
  ) {
    this.collection = db.collection<MerchantDocument>('merchants');
  }

  /** Not unique: hashes of 32 random bytes do not collide; the index is for finding them. */
  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ 'keys.hash': 1 }, { name: 'api_key_hashes' });
  }

  async insert(merchant: { id: string; name: string; key: StoredKey }): Promise<void> {
    await this.collection.insertOne({ _id: merchant.id, name: merchant.name, createdAt: new Date(), keys: [merchant.key], keysVersion: 1 });
  }

  /**
   * The merchant's test mode, made on first need with the keys given (none: `subsvc keys create
   * --mode test` adds one). Its document sits beside the live one, under its own id, so a test key
   * resolves to the test mode like any merchant's key to its merchant. false: it was there already.
   */
  async insertTestMode(liveMerchantId: string, testModeId: string, name: string, keys: readonly StoredKey[]): Promise<boolean> {
    // An insert, not an upsert's $setOnInsert: the embedded engine drops an empty array there, and
    // the document must hold its (empty) key set like every merchant's.
    const document = {
      _id: testModeId,
      name: `${name} (test mode)`,
      createdAt: new Date(),
      keys: [...keys],
      keysVersion: 1,
      liveMerchantId,
    };
    try {
      await this.guard.run(GUARDED.merchant(testModeId), () => this.collection.insertOne(document));
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  /** The name the merchant goes by with its customers: a test mode's is its live merchant's; undefined for no such merchant. */
  async displayName(id: string): Promise<string | undefined> {
    const doc = await this.collection.findOne({ _id: id }, { projection: { name: 1, liveMerchantId: 1 } });
    if (doc?.liveMerchantId === undefined) return doc?.name;
    return (await this.displayName(doc.liveMerchantId)) ?? doc.name;
  }

  async exists(id: string): Promise<boolean> {
    return (await this.collection.countDocuments({ _id: id }, { limit: 1 })) > 0;
  }

  /** The key with this hash (active or not) and its merchant. */
  async findByKeyHash(hash: string): Promise<KeyOwner | undefined> {
    const doc = await this.collection.findOne({ 'keys.hash': hash }, { projection: { keys: 1 } });
    if (!doc) return undefined;
    const key = doc.keys.find((k) => k.hash === hash);
    return key ? { merchantId: doc._id, key } : undefined;
  }

  async keySet(merchantId: string): Promise<KeySet | undefined> {
    const doc = await this.collection.findOne({ _id: merchantId }, { projection: { keys: 1, keysVersion: 1, keysLastUsedAt: 1 } });
    if (!doc) return undefined;
    return { merchantId, keys: doc.keys, version: doc.keysVersion, lastUsedAt: doc.keysLastUsedAt ?? {} };
  }

  /** Writes the set if it is still the one read (its version); false when another change came first. */
  async replaceKeys(read: KeySet, keys: readonly StoredKey[]): Promise<boolean> {
    const kept = new Set(keys.map((key) => key.id));
    const gone = Object.keys(read.lastUsedAt).filter((id) => !kept.has(id));
    const result = await this.guard.run(GUARDED.merchant(read.merchantId), () =>
      this.collection.updateOne(
        { _id: read.merchantId, keysVersion: read.version },
        {
          $set: { keys: [...keys], keysVersion: read.version + 1 },
          ...(gone.length > 0 ? { $unset: Object.fromEntries(gone.map((id) => [`keysLastUsedAt.${id}`, ''])) } : {}),
        },
      ),
    );
    return result.matchedCount === 1;
  }

  /**
   * Moves each key's last-used time forward (never back: another process may have written a later
   * one): one statement per merchant, in commands of the engine's size.
   */
  async recordLastUsed(uses: readonly { merchantId: string; keyId: string; at: string }[]): Promise<void> {
    const byMerchant = new Map<string, Record<string, string>>();
    for (const { merchantId, keyId, at } of uses) {
      const times = byMerchant.get(merchantId) ?? {};
      const field = `keysLastUsedAt.${keyId}`;
      if ((times[field] ?? '') < at) times[field] = at;
      byMerchant.set(merchantId, times);
    }
    const writes = [...byMerchant].map(([merchantId, times]) => ({ updateOne: { filter: { _id: merchantId }, update: { $max: times } } }));
    await this.guard.runAll(
      [...byMerchant.keys()].map((merchantId) => GUARDED.merchant(merchantId)),
      () => bulkWriteInParts(this.collection, writes, this.statementsPerCommand),
    );
  }
}
