/** How due schedules are ruled together (SubscriptionsService.fireDue): one ruling and one conditional update per group. */
import type { DueSubscription, FiringGroup } from './due.store.js';
import type { PausePolicy } from '../pause-policy/pause-policy.rules.js';
import { decide } from './subscriptions.rules.js';

/**
 * Due subscriptions read in the same state, and ruled alike under their merchant's pause policy,
 * share one ruling and one conditional update.
 */
export function firingGroups(due: readonly DueSubscription[], now: string, policies: ReadonlyMap<string, PausePolicy>): FiringGroup[] {
  const groups = new Map<string, { merchantId: string; state: DueSubscription; ruling: FiringGroup['ruling']; ids: string[] }>();
  for (const subscription of due) {
    const { merchantId, status, pauseAt, resumeAt, pauseReason, nextScheduledAt, noticeAt, held, heldOnly } = subscription;
    const ruling = decide(subscription, { kind: 'FIRE', now, policy: policies.get(merchantId), history: subscription });
    // One merchant per group: each update names the merchant that owns its subscriptions (docs/sharding.md).
    const key = JSON.stringify([
      merchantId,
      status,
      pauseAt,
      resumeAt,
      pauseReason,
      nextScheduledAt,
      noticeAt,
      // A notice's event shows the subscription as it stands: one group per modifiedAt.
      ruling.due === 'notice' ? subscription.modifiedAt : null,
      held,
      heldOnly,
      ruling.outcome,
      ruling.breach?.detail,
    ]);
    const group = groups.get(key) ?? { merchantId, state: subscription, ruling, ids: [] };
    group.ids.push(subscription.id);
    groups.set(key, group);
  }
  return [...groups.values()];
}
