/**
 * The one store of the `plans` collection: a merchant's names for its plan ids, one document per
 * merchant (or test mode) and plan. Plan ids are the merchant's own, so two merchants, or a
 * merchant's two modes, may use the same one: the `_id` joins the owner and the plan id.
 */
import type { Collection, Db } from 'mongodb';
import { pageAlongIds } from '../db/mongo-helpers.js';
import { GUARDED } from '../db/guarded.js';
import type { PerKeyQueue } from '../lib/keyed-mutex.js';
import type { Page, PageRequest } from '../lib/pagination.js';

const PLANS_COLLECTION = 'plans';

interface PlanDocument {
  /** `<merchantId>:<planId>`: within one merchant, in plan id order. */
  _id: string;
  merchantId: string;
  planId: string;
  name: string;
  modifiedAt: string;
}

/** A plan's name as stored; the caller adds the mode. */
export interface StoredPlan {
  readonly planId: string;
  readonly name: string;
}

const keyOf = (merchantId: string, planId: string) => `${merchantId}:${planId}`;
const PLAN_PROJECTION = { planId: 1, name: 1 } as const;
const planOf = ({ planId, name }: Pick<PlanDocument, 'planId' | 'name'>): StoredPlan => ({ planId, name });

export class PlansRepository {
  private readonly collection: Collection<PlanDocument>;

  /**
   * `guard`: where the server's conditional update is not atomic, each upsert queues on it
   * (GUARDED.plan): there two first upserts of one plan at once both insert, and one fails on the
   * duplicate `_id`; UNQUEUED on MongoDB.
   */
  constructor(
    db: Db,
    private readonly guard: PerKeyQueue,
  ) {
    this.collection = db.collection<PlanDocument>(PLANS_COLLECTION);
  }

  /** Every filter carries `merchantId` (the shard key's prefix, docs/sharding.md): this index serves them. */
  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ merchantId: 1, _id: 1 }, { name: 'merchant_plans' });
  }

  /** Names the plan, or renames it (one upsert). */
  async put(merchantId: string, planId: string, name: string, at: string): Promise<StoredPlan> {
    const _id = keyOf(merchantId, planId);
    await this.guard.run(GUARDED.plan(_id), () =>
      this.collection.updateOne({ _id, merchantId }, { $set: { name, modifiedAt: at }, $setOnInsert: { planId } }, { upsert: true }),
    );
    return { planId, name };
  }

  async find(merchantId: string, planId: string): Promise<StoredPlan | undefined> {
    const doc = await this.collection.findOne({ _id: keyOf(merchantId, planId), merchantId }, { projection: PLAN_PROJECTION });
    return doc ? planOf(doc) : undefined;
  }

  /** In plan id order; the cursor is the last plan id of the page. */
  async page(merchantId: string, { limit, startingAfter }: PageRequest): Promise<Page<StoredPlan>> {
    const after = startingAfter === undefined ? undefined : keyOf(merchantId, startingAfter);
    const found = await pageAlongIds(this.collection, { merchantId }, { limit, startingAfter: after }, false, planOf, PLAN_PROJECTION);
    return { ...found, nextCursor: found.hasMore ? found.data[found.data.length - 1]!.planId : null };
  }
}
