/**
 * Every MongoDB call about where each subscription stands with the billing system: one document per
 * subscription whose changes were pushed, in a collection of its own rather than in the
 * subscription's document, so that the pushers never write beside the changes they push (on an
 * engine whose conditional update is not atomic, such a write could undo a change: docs/design.md §8).
 */
import type { Collection, Db } from 'mongodb';
import { bulkWriteInParts } from '../db/mongo-helpers.js';

export type SyncState = 'synced' | 'pending' | 'failed';

export interface BillingSync {
  readonly system: 'stripe';
  readonly state: SyncState;
  readonly syncedAt: string | null;
  readonly error?: string;
}

interface SyncDocument {
  /** The subscription's id. */
  _id: string;
  merchantId: string;
  system: 'stripe';
  state: SyncState;
  syncedAt: string | null;
  error?: string;
}

export interface SyncChange {
  readonly merchantId: string;
  readonly subscriptionId: string;
  readonly state: SyncState;
  /** Set with `synced`. */
  readonly at?: string;
  /** Set with `failed`. */
  readonly error?: string;
}

export class BillingSyncRepository {
  private readonly collection: Collection<SyncDocument>;

  constructor(
    db: Db,
    /** At most this many statements per write command (src/db/workarounds.ts); undefined: one command. */
    private readonly statementsPerCommand?: number,
  ) {
    this.collection = db.collection<SyncDocument>('billingSync');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ merchantId: 1, _id: 1 }, { name: 'merchant_sync' });
  }

  /** Writes where each subscription stands now; `syncedAt` is kept unless it is synced again. */
  async set(changes: readonly SyncChange[]): Promise<void> {
    await bulkWriteInParts(
      this.collection,
      changes.map(({ merchantId, subscriptionId, state, at, error }) => ({
        updateOne: {
          filter: { _id: subscriptionId, merchantId },
          update: {
            $set: { system: 'stripe' as const, state, ...(at ? { syncedAt: at } : {}), ...(error !== undefined ? { error } : {}) },
            ...(error === undefined ? { $unset: { error: '' as const } } : {}),
            ...(at ? {} : { $setOnInsert: { syncedAt: null } }),
          },
          upsert: true,
        },
      })),
      this.statementsPerCommand,
    );
  }

  /** The merchant's subscriptions among `ids` that have a state. */
  async of(merchantId: string, ids: readonly string[]): Promise<Map<string, BillingSync>> {
    if (ids.length === 0) return new Map();
    const docs = await this.collection.find({ merchantId, _id: { $in: [...ids] } }).toArray();
    return new Map(
      docs.map(({ _id, state, syncedAt, error }) => [
        _id,
        { system: 'stripe', state, syncedAt: syncedAt ?? null, ...(error ? { error } : {}) },
      ]),
    );
  }
}
