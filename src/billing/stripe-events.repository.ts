/**
 * Every MongoDB call about the Stripe events a connection applied: one document per event applied
 * (`stripeEvents`, named by the connection and the event id, so a second delivery finds it), and,
 * per Stripe subscription, the time of the newest event applied to it (`stripeEventMarks`), so that
 * an older event, delivered late, does not overwrite newer state. An applied event is kept 30 days
 * (Stripe retries a delivery for 3), then removed as every expiring document is (src/db/retention.ts).
 */
import type { Collection, Db } from 'mongodb';
import { deleteInParts } from '../db/mongo-helpers.js';
import { isDuplicateKeyError } from '../db/mongo.js';
import { ensureTtlIndex, type Expiring } from '../db/retention.js';

/** How long an applied event's id is kept: far longer than Stripe retries a delivery. */
const KEPT_MS = 30 * 24 * 60 * 60_000;

interface AppliedEvent {
  /** `<connectionId>:<eventId>`. */
  _id: string;
  merchantId: string;
  appliedAt: Date;
  expiresAt: Date;
}

interface EventMark {
  /** `<merchantId>:<Stripe subscription id>`. */
  _id: string;
  merchantId: string;
  /** Stripe's `created` (Unix seconds) of the newest event applied. */
  created: number;
}

export class StripeEventsRepository implements Expiring {
  private readonly applied: Collection<AppliedEvent>;
  private readonly marks: Collection<EventMark>;

  constructor(
    db: Db,
    /** At most this many documents per delete (src/db/workarounds.ts); undefined: one statement. */
    private readonly documentsPerDelete?: number,
  ) {
    this.applied = db.collection<AppliedEvent>('stripeEvents');
    this.marks = db.collection<EventMark>('stripeEventMarks');
  }

  /** A TTL index on the applied events where the server has them; the retention sweeper calls `deleteExpired` where it does not. */
  async ensureIndexes(ttlIndexes: boolean): Promise<void> {
    await this.marks.createIndex({ merchantId: 1, _id: 1 }, { name: 'merchant_marks' });
    await ensureTtlIndex(this.applied, ttlIndexes);
  }

  async deleteExpired(now = new Date()): Promise<number> {
    return deleteInParts(this.applied, { expiresAt: { $lte: now } }, this.documentsPerDelete);
  }

  async wasApplied(connectionId: string, eventId: string): Promise<boolean> {
    return (await this.applied.countDocuments({ _id: `${connectionId}:${eventId}` }, { limit: 1 })) > 0;
  }

  /** Whether a newer event than `created` was applied to this Stripe subscription. */
  async newerApplied(merchantId: string, stripeSubscriptionId: string, created: number): Promise<boolean> {
    const mark = await this.marks.findOne({ _id: `${merchantId}:${stripeSubscriptionId}`, merchantId });
    return mark !== null && mark.created > created;
  }

  /** Records the event as applied, and its time as the subscription's newest unless a newer one is there. */
  async recordApplied(
    { connectionId, merchantId }: { readonly connectionId: string; readonly merchantId: string },
    eventId: string,
    stripeSubscriptionId: string | undefined,
    created: number,
  ): Promise<void> {
    try {
      const appliedAt = new Date();
      await this.applied.insertOne({
        _id: `${connectionId}:${eventId}`,
        merchantId,
        appliedAt,
        expiresAt: new Date(appliedAt.getTime() + KEPT_MS),
      });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
    if (stripeSubscriptionId === undefined) return;
    await this.marks.updateOne({ _id: `${merchantId}:${stripeSubscriptionId}`, merchantId }, { $max: { created } }, { upsert: true });
  }
}
