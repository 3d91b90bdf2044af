/**
 * The one store of the `pausePolicies` collection: one document per merchant that set a policy,
 * keyed by the merchant's id (served by the `_id` index). A merchant without one has the default,
 * every rule off (docs/design.md §11).
 */
import type { Collection, Db } from 'mongodb';
import { GUARDED } from '../db/guarded.js';
import type { PerKeyQueue } from '../lib/keyed-mutex.js';
import { completePolicy, NO_PAUSE_POLICY, type PausePolicy } from './pause-policy.rules.js';

const PAUSE_POLICIES_COLLECTION = 'pausePolicies';

/** Every rule is stored, null (or false) when off (completePolicy). */
interface PausePolicyDocument extends PausePolicy {
  _id: string;
  modifiedAt: string;
}

const POLICY_PROJECTION = {
  maxPauseDays: 1,
  maxPausesPerYear: 1,
  requireResumeAt: 1,
  cooldownDays: 1,
  allowedPauseDays: 1,
  resumeNoticeHours: 1,
} as const;

const policyOf = ({
  maxPauseDays,
  maxPausesPerYear,
  requireResumeAt,
  cooldownDays,
  allowedPauseDays,
  resumeNoticeHours,
}: PausePolicyDocument): PausePolicy => ({
  maxPauseDays,
  maxPausesPerYear,
  requireResumeAt,
  cooldownDays,
  allowedPauseDays,
  resumeNoticeHours,
});

export class PausePolicyRepository {
  private readonly collection: Collection<PausePolicyDocument>;

  /**
   * `guard`: where the server's conditional update is not atomic, each replacing upsert queues
   * on it (GUARDED.pausePolicy): there two first upserts at once both insert, and one fails on
   * the duplicate `_id`; UNQUEUED on MongoDB.
   */
  constructor(
    db: Db,
    private readonly guard: PerKeyQueue,
  ) {
    this.collection = db.collection<PausePolicyDocument>(PAUSE_POLICIES_COLLECTION);
  }

  /** The merchant's policy; the default when it never set one. */
  async get(merchantId: string): Promise<PausePolicy> {
    const doc = await this.collection.findOne({ _id: merchantId }, { projection: POLICY_PROJECTION });
    return doc ? policyOf(doc) : NO_PAUSE_POLICY;
  }

  /** The policies of these merchants, in one query (`_id: {$in}`); the default for those that never set one. */
  async getMany(merchantIds: readonly string[]): Promise<Map<string, PausePolicy>> {
    const docs = await this.collection.find({ _id: { $in: [...merchantIds] } }, { projection: POLICY_PROJECTION }).toArray();
    const found = new Map(docs.map((d) => [d._id, policyOf(d)]));
    return new Map(merchantIds.map((m) => [m, found.get(m) ?? NO_PAUSE_POLICY]));
  }

  /** Replaces the merchant's policy (one upsert by `_id`). */
  async put(merchantId: string, policy: PausePolicy, at: string): Promise<void> {
    const rules = completePolicy(policy);
    await this.guard.run(GUARDED.pausePolicy(merchantId), () =>
      this.collection.replaceOne({ _id: merchantId }, { ...rules, modifiedAt: at }, { upsert: true }),
    );
  }
}
