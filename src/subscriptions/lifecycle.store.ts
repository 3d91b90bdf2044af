/**
 * The lifecycle's writes to the `subscriptions` collection (create, update, cancel), and the
 * claims that keep an `externalId` unique per merchant and mode: one document per claimed id in
 * `subscriptionExternalIds`, keyed by merchant and externalId, so that the `_id` index enforces it
 * on every engine (no partial unique index is needed, which not every engine has).
 */
import { MongoBulkWriteError, type Collection, type Db, type Filter, type UpdateFilter } from 'mongodb';
import { insertNew } from '../db/mongo-helpers.js';
import { isDuplicateKeyError } from '../db/mongo.js';
import { writeGroups, writeOne, type GroupedWritten, type WriteGroup } from './grouped-write.js';
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

/** One subscription's conditional update in a grouped write: applied only if it still matches `expected`. */
export interface ExpectedUpdate {
  readonly expected: Filter<SubscriptionDocument>;
  readonly update: UpdateFilter<SubscriptionDocument>;
}

export class LifecycleStore {
  private readonly subscriptions: Collection<SubscriptionDocument>;
  private readonly claims: Collection<ClaimDocument>;

  constructor(
    db: Db,
    /** At most this many statements per write command (db/workarounds.ts); absent: one command. */
    private readonly statementsPerCommand?: number,
  ) {
    this.subscriptions = subscriptionsIn(db);
    this.claims = db.collection<ClaimDocument>(CLAIMS_COLLECTION);
  }

  /**
   * Claims each externalId that no claim holds yet, with one insert: true for those it claimed. The
   * others are held, by a subscription that has the externalId or by one whose create stopped
   * midway (a run cut short, ours): claim() settles each of those.
   */
  async claimFree(merchantId: string, wanted: readonly { readonly externalId: string; readonly id: string }[]): Promise<boolean[]> {
    const claimedAt = new Date();
    const docs = wanted.map(({ externalId, id }) => ({
      _id: claimKey(merchantId, externalId),
      merchantId,
      externalId,
      subscriptionId: id,
      claimedAt,
    }));
    const held = new Set<number>();
    try {
      if (docs.length > 0) await this.claims.insertMany(docs, { ordered: false });
    } catch (error) {
      if (!(error instanceof MongoBulkWriteError) || !isDuplicateKeyError(error)) throw error;
      for (const e of [error.writeErrors].flat()) held.add(e.index);
    }
    return wanted.map((_, i) => !held.has(i));
  }

  /** Inserts new subscriptions with their outboxes, in one command; one whose id exists already is left as it is (a repeated create). */
  async insertAll(docs: readonly SubscriptionDocument[]): Promise<void> {
    await insertNew(this.subscriptions, docs);
  }

  /** Each group's conditional update, in the engine's parts (grouped-write.ts): how many matched. */
  updateGroups(merchantId: string, groups: readonly WriteGroup<ExpectedUpdate>[]): Promise<GroupedWritten> {
    return writeGroups({ collection: this.subscriptions, statementsPerCommand: this.statementsPerCommand }, groups, ({ ids, value }) => ({
      updateMany: { filter: { ...value.expected, merchantId, _id: { $in: ids } }, update: value.update },
    }));
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

  /**
   * The merchant's subscriptions with these externalIds, by externalId: read through their claims,
   * by `_id` both, which every engine serves from its `_id` index (docs/engine.md); a subscription
   * with an externalId always holds its claim, and a claim whose subscription does not have it is
   * passed over.
   */
  async findByExternalIds(merchantId: string, externalIds: readonly string[]): Promise<Map<string, Subscription>> {
    if (externalIds.length === 0) return new Map();
    const claims = await this.claims
      .find({ merchantId, _id: { $in: externalIds.map((e) => claimKey(merchantId, e)) } }, { projection: { subscriptionId: 1 } })
      .toArray();
    if (claims.length === 0) return new Map();
    const docs = await this.subscriptions
      .find({ merchantId, _id: { $in: [...new Set(claims.map((c) => c.subscriptionId))] } }, { projection: VIEW_PROJECTION })
      .toArray();
    const wanted = new Set(externalIds);
    return new Map(
      docs.filter((d) => d.externalId !== undefined && wanted.has(d.externalId)).map((d) => [d.externalId!, toHeldSubscription(d)]),
    );
  }

  /**
   * One conditional update: applied only if the subscription still matches `expected`, with its
   * event pushed to its outbox by the same update (src/subscriptions/outbox.ts).
   */
  async changeWhere(
    merchantId: string,
    id: string,
    { expected, update }: ExpectedUpdate,
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
