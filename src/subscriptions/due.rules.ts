/** How due schedules are ruled together (SubscriptionsService.fireDue): one ruling and one conditional update per group. */
import type { PauseHistory, PausePolicy } from '../pause-policy/pause-policy.rules.js';
import { decide, type RuleState, type Ruling, type SubscriptionStatus } from './subscriptions.rules.js';

/** The fields a due schedule is decided on, exactly as read. */
export interface DueState extends RuleState {
  readonly status: SubscriptionStatus;
  /** Not decided on, but shown by the subscription a firing's event carries. */
  readonly pauseReason: string | null;
  readonly nextScheduledAt: string;
  readonly noticeAt: string | null;
  /** What a notice's event shows: a notice changes no modifiedAt (notice.rules.ts). */
  readonly modifiedAt: string;
  /** Whether an active hold covers it: its own scheduled resume then ends its own pause only. */
  readonly held: boolean;
  /** Whether it is paused by its holds alone: its own pauseAt then starts its own pause. */
  readonly heldOnly: boolean;
}

export interface DueSubscription extends DueState, PauseHistory {
  readonly id: string;
  readonly merchantId: string;
  /** When pauses were last applied to it, and it was last resumed: a due pause's pause policy reads them. */
  readonly recentPauses: readonly string[];
}

/** One ruling for the due subscriptions of one merchant that were read in exactly the same state. */
export interface FiringGroup {
  readonly merchantId: string;
  readonly state: DueState;
  readonly ruling: Ruling;
  readonly ids: readonly string[];
}

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
