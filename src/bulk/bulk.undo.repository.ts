/**
 * The MongoDB calls of an undo (src/bulk/bulk.undo.ts) beside bulk.repository.ts: the one write
 * that marks a request undone, and the read of where its subscriptions stand now.
 */
import type { Collection, Db } from 'mongodb';
import { GUARDED, type PerKeyQueue } from '../lib/keyed-mutex.js';
import type { SubscriptionDocument } from '../subscriptions/subscriptions.repository.js';

interface UndoneDocument {
  _id: string;
  merchantId: string;
  undoneBy?: string;
}

/** Where a subscription stands now: what an undo compares with what the original request left. */
export interface CurrentState {
  readonly status: SubscriptionDocument['status'];
  readonly modifiedAt: string;
}

export class BulkUndoRepository {
  private readonly requests: Collection<UndoneDocument>;
  private readonly subscriptions: Collection<SubscriptionDocument>;

  /** `guard`: where the server's conditional update is not atomic, a claim queues on it (GUARDED.bulkRequest); UNQUEUED on MongoDB. */
  constructor(
    db: Db,
    private readonly guard: PerKeyQueue,
  ) {
    this.requests = db.collection<UndoneDocument>('bulkRequests');
    this.subscriptions = db.collection<SubscriptionDocument>('subscriptions');
  }

  /**
   * Marks the request undone by `undoneBy`, in one update conditional on its having no undo yet:
   * of two undos at once, one sets it and the other finds it set. Whether this call set it.
   */
  claim(merchantId: string, requestId: string, undoneBy: string): Promise<boolean> {
    return this.guard.run(GUARDED.bulkRequest(requestId), async () => {
      const result = await this.requests.updateOne({ _id: requestId, merchantId, undoneBy: { $exists: false } }, { $set: { undoneBy } });
      return result.modifiedCount === 1;
    });
  }

  /** Takes back a claim whose undo could not be stored, so that the request may be undone again. */
  async release(merchantId: string, requestId: string, undoneBy: string): Promise<void> {
    await this.guard.run(GUARDED.bulkRequest(requestId), () =>
      this.requests.updateOne({ _id: requestId, merchantId, undoneBy }, { $unset: { undoneBy: '' } }),
    );
  }

  /** The undo that claimed the request, if any. */
  async undoneBy(merchantId: string, requestId: string): Promise<string | undefined> {
    const doc = await this.requests.findOne({ _id: requestId, merchantId }, { projection: { undoneBy: 1 } });
    return doc?.undoneBy;
  }

  /** The status and modifiedAt of each of these ids that is a subscription of the merchant (others are absent): one query. */
  async currentStates(merchantId: string, ids: readonly string[]): Promise<Map<string, CurrentState>> {
    if (ids.length === 0) return new Map();
    const docs = await this.subscriptions
      .find({ _id: { $in: [...ids] }, merchantId }, { projection: { _id: 1, status: 1, modifiedAt: 1 } })
      .toArray();
    return new Map(docs.map((d) => [d._id, { status: d.status, modifiedAt: d.modifiedAt }]));
  }
}
