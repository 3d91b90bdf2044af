/**
 * The lifecycle's writes to the `subscriptions` collection (create, update, cancel), and the
 * claims that keep an `externalId` unique per merchant and mode: one document per claimed id in
 * `subscriptionExternalIds`, keyed by merchant and externalId, so that the `_id` index enforces it
 * on every engine (no partial unique index is needed, which not every engine has).
 */
import type { Collection, Db, Filter, UpdateFilter } from 'mongodb';
import { isDuplicateKeyError } from '../db/mongo.js';
import { writeOne } from './grouped-write.js';
import type { OutboxEntry } from './outbox.js';
import { inModeOf, pendingEventsOf, subscriptionsIn, toHeldSubscription, VIEW_PROJECTION, withEvents } from './subscription.document.js';
import type { SubscriptionDocument } from './subscription.document.js';
import type { Changed } from './subscriptions.store.js';
import type { Subscription } from './subscriptions.rules.js';

const CLAIMS_COLLECTION = 'subscriptionExternalIds';

/** A claim older than this whose subscription does not exist was left by a create that stopped midway: another may take it. */
export const CLAIM_ABANDONED_MS = 60_000;

interface ClaimDocument {
  _id: string;
  merchantId: string;
  externalId: string;
  subscriptionId: string;
  claimedAt: Date;
}

const claimKey = (merchantId: string, externalId: string) => `${merchantId}:${externalId}`;

/** What claim() found: the id is ours now (`claimed`), or another subscription's (`heldBy`). */
export type Claim = { readonly claimed: true } | { readonly claimed: false; readonly heldBy: string };

export class LifecycleStore {
  private readonly subscriptions: Collection<SubscriptionDocument>;
  private readonly claims: Collection<ClaimDocument>;

  constructor(db: Db) {
    this.subscriptions = subscriptionsIn(db);
    this.claims = db.collection<ClaimDocument>(CLAIMS_COLLECTION);
  }

  /**
   * Claims `externalId` for `subscriptionId`. A claim already held for the same subscription is
   * ours (a create or an import's chunk run again); one whose subscription is gone for longer
   * than CLAIM_ABANDONED_MS is taken over.
   */
  async claim(merchantId: string, externalId: string, subscriptionId: string): Promise<Claim> {
    const _id = claimKey(merchantId, externalId);
    for (;;) {
      try {
        await this.claims.insertOne({ _id, merchantId, externalId, subscriptionId, claimedAt: new Date() });
        return { claimed: true };
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
      const held = await this.claims.findOne({ _id, merchantId });
      if (!held) continue;
      if (held.subscriptionId === subscriptionId) return { claimed: true };
      const holder = await this.subscriptions.findOne({ _id: held.subscriptionId, merchantId }, { projection: { externalId: 1 } });
      const abandoned = !holder || holder.externalId !== externalId;
      if (!abandoned || Date.now() - held.claimedAt.getTime() < CLAIM_ABANDONED_MS) return { claimed: false, heldBy: held.subscriptionId };
      const taken = await this.claims.updateOne(
        { _id, merchantId, subscriptionId: held.subscriptionId },
        { $set: { subscriptionId, claimedAt: new Date() } },
      );
      if (taken.modifiedCount === 1) return { claimed: true };
    }
  }

  /** Gives up a claim, if `subscriptionId` still holds it. */
  async release(merchantId: string, externalId: string, subscriptionId: string): Promise<void> {
    await this.claims.deleteOne({ _id: claimKey(merchantId, externalId), merchantId, subscriptionId });
  }

  /** Inserts a new subscription with its outbox; false if one with its id exists already (a repeated create of the same id). */
  async insert(doc: SubscriptionDocument): Promise<boolean> {
    try {
      await this.subscriptions.insertOne(doc);
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  async findByExternalId(merchantId: string, externalId: string): Promise<Subscription | undefined> {
    const doc = await this.subscriptions.findOne({ merchantId, externalId }, { projection: VIEW_PROJECTION });
    return doc ? toHeldSubscription(doc) : undefined;
  }

  async findByExternalIds(merchantId: string, externalIds: readonly string[]): Promise<Map<string, Subscription>> {
    if (externalIds.length === 0) return new Map();
    const docs = await this.subscriptions
      .find({ merchantId, externalId: { $in: [...externalIds] } }, { projection: VIEW_PROJECTION })
      .toArray();
    return new Map(docs.map((d) => [d.externalId!, toHeldSubscription(d)]));
  }

  /**
   * One conditional update: applied only if the subscription still matches `expected`, with its
   * event pushed to its outbox by the same update (src/subscriptions/outbox.ts).
   */
  async changeWhere(
    merchantId: string,
    id: string,
    expected: Filter<SubscriptionDocument>,
    update: UpdateFilter<SubscriptionDocument>,
    entries: readonly OutboxEntry[],
  ): Promise<Changed | undefined> {
    // A group of one (grouped-write.ts), answered with the whole document: not every engine takes a projection there.
    const statement = { filter: { ...expected, merchantId }, update: inModeOf(merchantId, withEvents(update, entries)) };
    const doc = await writeOne({ collection: this.subscriptions }, { ids: [id], value: statement });
    if (!doc) return undefined;
    const held = pendingEventsOf(doc, entries);
    return { subscription: held.subscription, held };
  }
}
