/**
 * Every MongoDB call about the Stripe events a connection applied: one document per event applied
 * (`stripeEvents`, named by the connection and the event id, so a second delivery finds it), and,
 * per Stripe subscription, the time of the newest event applied to it (`stripeEventMarks`), so that
 * an older event, delivered late, does not overwrite newer state.
 */
import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError } from '../db/mongo.js';

interface AppliedEvent {
  /** `<connectionId>:<eventId>`. */
  _id: string;
  merchantId: string;
  appliedAt: Date;
}

interface EventMark {
  /** `<merchantId>:<Stripe subscription id>`. */
  _id: string;
  merchantId: string;
  /** Stripe's `created` (Unix seconds) of the newest event applied. */
  created: number;
}

export class StripeEventsRepository {
  private readonly applied: Collection<AppliedEvent>;
  private readonly marks: Collection<EventMark>;

  constructor(db: Db) {
    this.applied = db.collection<AppliedEvent>('stripeEvents');
    this.marks = db.collection<EventMark>('stripeEventMarks');
  }

  async ensureIndexes(): Promise<void> {
    await this.marks.createIndex({ merchantId: 1, _id: 1 }, { name: 'merchant_marks' });
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
      await this.applied.insertOne({ _id: `${connectionId}:${eventId}`, merchantId, appliedAt: new Date() });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
    if (stripeSubscriptionId === undefined) return;
    await this.marks.updateOne({ _id: `${merchantId}:${stripeSubscriptionId}`, merchantId }, { $max: { created } }, { upsert: true });
  }
}
