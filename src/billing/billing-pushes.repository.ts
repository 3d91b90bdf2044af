/**
 * Every MongoDB call about pushes to the billing system: one document per applied pause or resume
 * of a subscription with an `externalId`, named by its event's id (a UUIDv7, so `_id` order is the
 * order of the changes). `dueAt` is when a pusher may take it: the next attempt's time, or, while
 * one holds it, the end of that pusher's lease; null once it is finished.
 */
import { randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { bulkWriteInParts, insertNew } from '../db/mongo-helpers.js';
import { subscriptionsIn } from '../subscriptions/subscription.document.js';

export type PushAction = 'pause' | 'resume';
export type PushStatus = 'pending' | 'sent' | 'failed' | 'dropped';

export interface Push {
  /** The event's id: the call's Idempotency-Key. */
  readonly id: string;
  readonly merchantId: string;
  readonly subscriptionId: string;
  /** The Stripe subscription id. */
  readonly externalId: string;
  readonly action: PushAction;
  /** A pause's scheduled resume, in Unix seconds (`pause_collection[resumes_at]`). */
  readonly resumesAt?: number;
  readonly createdAt: Date;
  readonly attempts: number;
}

export interface PushUpdate {
  readonly id: string;
  readonly status: PushStatus;
  readonly error?: string;
  /** The next attempt (status pending). */
  readonly retryAt?: Date;
}

interface PushDocument extends Omit<Push, 'id'> {
  _id: string;
  status: PushStatus;
  dueAt: Date | null;
  claim?: string;
  error?: string;
  finishedAt?: Date;
}

const pushOf = ({ _id, merchantId, subscriptionId, externalId, action, resumesAt, createdAt, attempts }: PushDocument): Push => ({
  id: _id,
  merchantId,
  subscriptionId,
  externalId,
  action,
  ...(resumesAt !== undefined ? { resumesAt } : {}),
  createdAt,
  attempts,
});

export class BillingPushesRepository {
  private readonly collection: Collection<PushDocument>;

  constructor(
    private readonly db: Db,
    /** At most this many statements per write command (src/db/workarounds.ts); undefined: one command. */
    private readonly statementsPerCommand?: number,
  ) {
    this.collection = db.collection<PushDocument>('billingPushes');
  }

  /** `pending_pushes`, led by the status: pending pushes are few beside finished ones, read in `_id` order. */
  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ status: 1, _id: 1 }, { name: 'pending_pushes' });
  }

  /** The Stripe subscription ids of these subscriptions, where they have one. */
  async externalIds(merchantId: string, ids: readonly string[]): Promise<Map<string, string>> {
    const docs = await subscriptionsIn(this.db)
      .find({ merchantId, _id: { $in: [...ids] }, externalId: { $exists: true } } as never, { projection: { _id: 1, externalId: 1 } })
      .toArray();
    return new Map(docs.map((d) => [d._id, (d as unknown as { externalId: string }).externalId]));
  }

  /** Creates the pushes, due now; ones that exist already (a fan-out repeated) are left as they are. */
  async insert(pushes: readonly Omit<Push, 'attempts' | 'createdAt'>[]): Promise<void> {
    const now = new Date();
    await insertNew(
      this.collection,
      pushes.map(({ id, ...rest }) => ({ _id: id, ...rest, createdAt: now, attempts: 0, status: 'pending' as const, dueAt: now })),
    );
  }

  /**
   * Takes the oldest pending push of each subscription, where it is due and held by no other
   * pusher, until `leaseUntil`: a subscription's later pushes wait until its earlier ones are
   * finished, so Stripe sees its changes in order. Reads at most `window` pending pushes.
   */
  async claimHeads(window: number, most: number, leaseUntil: Date, now = new Date()): Promise<Push[]> {
    const pending = await this.collection
      .find({ status: 'pending' }, { projection: { _id: 1, subscriptionId: 1, dueAt: 1 } })
      .sort({ _id: 1 })
      .limit(window)
      .toArray();
    const seen = new Set<string>();
    const heads: string[] = [];
    for (const { _id, subscriptionId, dueAt } of pending) {
      if (seen.has(subscriptionId)) continue;
      seen.add(subscriptionId);
      if (dueAt !== null && dueAt <= now) heads.push(_id);
      if (heads.length === most) break;
    }
    if (heads.length === 0) return [];
    const claim = randomUUID();
    await this.collection.updateMany(
      { _id: { $in: heads }, status: 'pending', dueAt: { $lte: now } },
      { $set: { dueAt: leaseUntil, claim }, $inc: { attempts: 1 } },
    );
    return (await this.collection.find({ _id: { $in: heads }, claim }).toArray()).map(pushOf);
  }

  /** Whether the service recorded a push with this id (an event's id): Stripe's events name it as their request's Idempotency-Key. */
  async isOurs(merchantId: string, id: string): Promise<boolean> {
    return (await this.collection.countDocuments({ _id: id, merchantId }, { limit: 1 })) > 0;
  }

  /** Those of these subscriptions that still have a push waiting, other than the pushes `besides` (those being finished). */
  async withPending(ids: readonly string[], besides: readonly string[] = []): Promise<Set<string>> {
    const docs = await this.collection
      .find({ status: 'pending', subscriptionId: { $in: [...ids] }, _id: { $nin: [...besides] } }, { projection: { subscriptionId: 1 } })
      .toArray();
    return new Set(docs.map((d) => d.subscriptionId));
  }

  /** Records where each push of the batch stands now. */
  async record(updates: readonly PushUpdate[], now = new Date()): Promise<void> {
    await bulkWriteInParts(
      this.collection,
      updates.map(({ id, status, error, retryAt }) => ({
        updateOne: {
          filter: { _id: id },
          update: {
            $set: {
              status,
              dueAt: retryAt ?? null,
              ...(error !== undefined ? { error } : {}),
              ...(status !== 'pending' ? { finishedAt: now } : {}),
            },
            $unset: { claim: '' },
          },
        },
      })),
      this.statementsPerCommand,
    );
  }
}
