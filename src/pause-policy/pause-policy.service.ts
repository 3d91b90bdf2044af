/**
 * A merchant's pause policy (docs/design.md §11): read and replaced through the API, and read by
 * every pause (single, bulk acceptance and chunks, due schedules) through a short per-process
 * cache, so that a pause under a policy costs no extra round trip for it most of the time. The
 * process that replaces a policy uses the new one at once; the others within POLICY_CACHE_TTL_MS.
 */
import { nowTimestamp } from '../lib/clock.js';
import type { PausePolicy, PausePolicySource } from './pause-policy.rules.js';
import type { PausePolicyRepository } from './pause-policy.repository.js';

/** How long a process keeps a merchant's policy before reading it again (documented in docs/api.md and the spec: 30 s). */
export const POLICY_CACHE_TTL_MS = 30_000;
/** Merchants whose policy one process keeps at most; the oldest entry goes first past it. */
const MAX_CACHED = 10_000;

/** Told when a merchant's resumeNoticeHours changes, before the PUT answers: the scheduled resumes' notices follow it. */
export type NoticeHoursListener = (merchantId: string, hours: number | null) => Promise<unknown>;

export class PausePolicyService implements PausePolicySource {
  private readonly cache = new Map<string, { readonly policy: PausePolicy; readonly until: number }>();
  /** Puts made by this process: a read that began before one is not remembered (it may hold the policy the put replaced). */
  private puts = 0;
  private readonly noticeListeners: NoticeHoursListener[] = [];

  constructor(
    private readonly repository: PausePolicyRepository,
    private readonly ttlMs = POLICY_CACHE_TTL_MS,
  ) {}

  /** The policy as stored now (GET /v2/pause-policy reads through, so that it shows what is set). */
  async get(merchantId: string): Promise<PausePolicy> {
    const putsBefore = this.puts;
    const policy = await this.repository.get(merchantId);
    return putsBefore === this.puts ? this.remember(merchantId, policy) : policy;
  }

  /** The policy a pause is held to: cached up to the TTL. */
  async policyOf(merchantId: string): Promise<PausePolicy> {
    const cached = this.cache.get(merchantId);
    if (cached && cached.until > Date.now()) return cached.policy;
    return this.get(merchantId);
  }

  /** The policies of these merchants: the cached ones, and one read for the others. */
  async policiesOf(merchantIds: readonly string[]): Promise<Map<string, PausePolicy>> {
    const now = Date.now();
    const policies = new Map<string, PausePolicy>();
    for (const merchantId of merchantIds) {
      const cached = this.cache.get(merchantId);
      if (cached && cached.until > now) policies.set(merchantId, cached.policy);
    }
    const missing = merchantIds.filter((m) => !policies.has(m));
    if (missing.length === 0) return policies;
    const putsBefore = this.puts;
    for (const [merchantId, policy] of await this.repository.getMany(missing)) {
      policies.set(merchantId, putsBefore === this.puts ? this.remember(merchantId, policy) : policy);
    }
    return policies;
  }

  onNoticeHoursChanged(listener: NoticeHoursListener): void {
    this.noticeListeners.push(listener);
  }

  /**
   * Replaces the merchant's policy; this process applies it from now on. A change of
   * resumeNoticeHours also moves the notices of the resumes already scheduled (a PUT repeated
   * after a failure moves what the failed one left).
   */
  async put(merchantId: string, policy: PausePolicy): Promise<PausePolicy> {
    this.puts++;
    this.cache.delete(merchantId);
    const before = this.noticeListeners.length > 0 ? await this.repository.get(merchantId) : undefined;
    await this.repository.put(merchantId, policy, nowTimestamp());
    this.puts++;
    const remembered = this.remember(merchantId, policy);
    if (before && before.resumeNoticeHours !== policy.resumeNoticeHours)
      for (const listener of this.noticeListeners) await listener(merchantId, policy.resumeNoticeHours);
    return remembered;
  }

  private remember(merchantId: string, policy: PausePolicy): PausePolicy {
    this.cache.delete(merchantId);
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(merchantId, { policy, until: Date.now() + this.ttlMs });
    return policy;
  }
}
