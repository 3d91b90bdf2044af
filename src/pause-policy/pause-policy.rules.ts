/**
 * A merchant's pause policy as rules (docs/design.md §11): what it makes of a pause, whatever starts
 * it, apart from HTTP and from MongoDB. `decide` (src/subscriptions/subscriptions.rules.ts) holds a
 * due pause to it; requests and bulk acceptance ask `pauseVerdict` before they write. `now` is
 * always passed in. This module and pause-policy.errors.ts are all that subscriptions/ reads of the
 * policy: the policy's store and cache reach it as a PausePolicySource.
 */
import type { components } from '../../generated/openapi.js';
import { formatTimestamp, parseRfc3339 } from '../lib/clock.js';
import { CorruptPauseTimeError, type PolicyBreach, type PolicyRule } from './pause-policy.errors.js';

export type { PolicyBreach, PolicyRule };

/**
 * A merchant's pause policy (docs/design.md §11): each rule off when null (or false). Decided here,
 * with the status rules, for every pause whatever starts it; `now` is always passed in.
 */
export type PausePolicy = Omit<components['schemas']['PausePolicyWithMode'], 'livemode'>;
/** A pause's schedule fields, as the spec types a pause request's (times already normalised, docs/design.md §5). */
export type PauseSchedule = Readonly<Pick<components['schemas']['PauseRequest'], 'pauseAt' | 'resumeAt' | 'reason'>>;

/** The default: every rule off, so that a pause does exactly what it did before policies. */
export const NO_PAUSE_POLICY: PausePolicy = Object.freeze({
  maxPauseDays: null,
  maxPausesPerYear: null,
  requireResumeAt: false,
  cooldownDays: null,
  allowedPauseDays: null,
  resumeNoticeHours: null,
});

/** A policy as sent or as stored before a rule existed: a rule left out is off. */
export function completePolicy(policy: components['schemas']['PausePolicy']): PausePolicy {
  const {
    maxPauseDays,
    maxPausesPerYear,
    requireResumeAt,
    cooldownDays = null,
    allowedPauseDays = null,
    resumeNoticeHours = null,
  } = policy;
  return { maxPauseDays, maxPausesPerYear, requireResumeAt, cooldownDays, allowedPauseDays, resumeNoticeHours };
}

/** Whether no rule can refuse a pause (resumeNoticeHours refuses none): the pause then reads nothing first. */
export function isPolicyOff(policy: PausePolicy): boolean {
  const { maxPauseDays, maxPausesPerYear, requireResumeAt, cooldownDays, allowedPauseDays } = policy;
  return maxPauseDays === null && maxPausesPerYear === null && !requireResumeAt && cooldownDays === null && allowedPauseDays === null;
}

/** What a pause policy reads of a subscription's past: when pauses were applied to it, and when it was last resumed. */
export interface PauseHistory {
  readonly recentPauses: readonly string[];
  readonly lastResumedAt?: string | undefined;
}

/** Whether the policy reads a subscription's PauseHistory: without, a bulk selection reads ids and statuses from an index alone. */
export function readsHistory(policy: PausePolicy): boolean {
  return policy.maxPausesPerYear !== null || policy.cooldownDays !== null;
}

export const NO_PAUSE_HISTORY: PauseHistory = Object.freeze({ recentPauses: [] });

/** Where a merchant's pause policy is read from (src/pause-policy/, cached there). */
export interface PausePolicySource {
  policyOf(merchantId: string): Promise<PausePolicy>;
  /** The policies of these merchants (due schedules of many merchants: one read for those not cached). */
  policiesOf(merchantIds: readonly string[]): Promise<Map<string, PausePolicy>>;
}

/** No merchant has a policy: where none is given (admin commands, tests of other features). */
export const NO_PAUSE_POLICIES: PausePolicySource = Object.freeze({
  policyOf: async () => NO_PAUSE_POLICY,
  policiesOf: async (merchantIds: readonly string[]) => new Map(merchantIds.map((m) => [m, NO_PAUSE_POLICY])),
});

/** How many pause times a subscription keeps (`recentPauses`): the most `maxPausesPerYear` can ask to count. */
export const KEPT_PAUSE_TIMES = 100;

/** A bulk rejection's reason for each rule (the spec's RejectedSubscription reasons). */
export const POLICY_REJECTIONS = Object.freeze({
  requireResumeAt: 'policy_require_resume_at',
  maxPauseDays: 'policy_max_pause_days',
  maxPausesPerYear: 'policy_max_pauses_per_year',
  cooldownDays: 'policy_cooldown_days',
  allowedPauseDays: 'policy_allowed_pause_days',
} as const satisfies Record<PolicyRule, string>);

const MICROS_PER_DAY = 86_400_000_000n;
const YEAR_DAYS = 365n;

const micros = (timestamp: string): bigint => {
  const parsed = parseRfc3339(timestamp);
  if (parsed === undefined) throw new CorruptPauseTimeError(`not a timestamp: ${JSON.stringify(timestamp)}`);
  return parsed;
};

/** How many of these pause times fall in the 365 days before `now`. */
export function pausesInYearBefore(recentPauses: readonly string[], now: string): number {
  const since = micros(now) - YEAR_DAYS * MICROS_PER_DAY;
  return recentPauses.filter((t) => micros(t) > since).length;
}

/**
 * What the pause policy makes of a pause of a subscription in `status` at `now` (its `pauseAt`, if
 * any, is when it starts): the first rule it breaks, in the order of docs/design.md §11, or the
 * schedule it goes on with (resumeAt filled in by `maxPauseDays` when it has none, which also
 * satisfies `requireResumeAt`). A pause that starts is one of a `fulfilled` subscription: every
 * rule applies; `cooldownDays` counts from `history.lastResumedAt` to the start, and
 * `maxPausesPerYear` counts `history.recentPauses` in the 365 days before `now`. A `paused` one
 * paused again starts nothing: only a `resumeAt` it is sent is held to `maxPauseDays` and
 * `allowedPauseDays`, from now. A cancelled one is left to `decide` (409).
 */
export function pauseVerdict(
  policy: PausePolicy,
  status: string,
  schedule: PauseSchedule | undefined,
  history: PauseHistory,
  now: string,
): { readonly breach: PolicyBreach } | { readonly schedule: PauseSchedule | undefined } {
  if (status === 'cancelled') return { schedule };
  const starts = status === 'fulfilled';
  const start = micros(starts ? (schedule?.pauseAt ?? now) : now);
  const breach = lengthBreach(policy, schedule, start) ?? (starts ? startBreach(policy, schedule, history, start, now) : undefined);
  if (breach) return { breach };
  return { schedule: starts ? withPolicyResumeAt(policy, schedule, now) : schedule };
}

/** `maxPauseDays` and `allowedPauseDays`, of a `resumeAt` sent, counted from the pause's start. */
function lengthBreach(policy: PausePolicy, schedule: PauseSchedule | undefined, start: bigint): PolicyBreach | undefined {
  const { maxPauseDays, allowedPauseDays } = policy;
  if (schedule?.resumeAt === undefined) return undefined;
  const days = Number(micros(schedule.resumeAt) - start) / Number(MICROS_PER_DAY);
  if (maxPauseDays !== null && days > maxPauseDays) {
    return {
      rule: 'maxPauseDays',
      detail: `maxPauseDays is ${maxPauseDays}; this pause would last ${Math.ceil(days)} days (resumeAt ${schedule.resumeAt}).`,
    };
  }
  if (allowedPauseDays !== null && !allowedPauseDays.includes(Math.ceil(days))) {
    return {
      rule: 'allowedPauseDays',
      detail: `allowedPauseDays is [${allowedPauseDays.join(', ')}]; this pause would last ${Math.ceil(days)} days (resumeAt ${schedule.resumeAt}).`,
    };
  }
  return undefined;
}

/** The rules only a pause that starts is held to, after lengthBreach. */
function startBreach(
  policy: PausePolicy,
  schedule: PauseSchedule | undefined,
  history: PauseHistory,
  start: bigint,
  now: string,
): PolicyBreach | undefined {
  const { maxPauseDays, maxPausesPerYear, requireResumeAt, cooldownDays, allowedPauseDays } = policy;
  if (schedule?.resumeAt === undefined) {
    if (requireResumeAt && maxPauseDays === null)
      return { rule: 'requireResumeAt', detail: 'requireResumeAt is true; this pause has no resumeAt.' };
    if (allowedPauseDays !== null && (maxPauseDays === null || !allowedPauseDays.includes(maxPauseDays))) {
      const given = maxPauseDays === null ? '' : `, and maxPauseDays would give it ${maxPauseDays} days`;
      return {
        rule: 'allowedPauseDays',
        detail: `allowedPauseDays is [${allowedPauseDays.join(', ')}]; this pause has no resumeAt${given}.`,
      };
    }
  }
  const { lastResumedAt } = history;
  if (cooldownDays !== null && lastResumedAt !== undefined) {
    const until = micros(lastResumedAt) + BigInt(cooldownDays) * MICROS_PER_DAY;
    if (start < until) {
      return {
        rule: 'cooldownDays',
        detail: `cooldownDays is ${cooldownDays}; this subscription was last resumed at ${lastResumedAt} and can be paused from ${formatTimestamp(until)}.`,
        allowedFrom: formatTimestamp(until),
      };
    }
  }
  if (maxPausesPerYear !== null) {
    const count = pausesInYearBefore(history.recentPauses, now);
    if (count >= maxPausesPerYear) {
      // One more fits once the oldest pauses past the limit leave the 365 days; with a limit of 0, never.
      const counted = history.recentPauses.map(micros).filter((t) => t > micros(now) - YEAR_DAYS * MICROS_PER_DAY);
      const leaving = counted.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))[count - maxPausesPerYear];
      return {
        rule: 'maxPausesPerYear',
        detail: `maxPausesPerYear is ${maxPausesPerYear}; this subscription was paused ${count} times in the 365 days before.`,
        ...(maxPausesPerYear > 0 && leaving !== undefined ? { allowedFrom: formatTimestamp(leaving + YEAR_DAYS * MICROS_PER_DAY) } : {}),
      };
    }
  }
  return undefined;
}

/** A pause that starts (at its pauseAt, else `now`) without resumeAt gets one `maxPauseDays` later; any other is as it was. */
export function withPolicyResumeAt(policy: PausePolicy, schedule: PauseSchedule | undefined, now: string): PauseSchedule | undefined {
  if (policy.maxPauseDays === null || schedule?.resumeAt !== undefined) return schedule;
  const start = micros(schedule?.pauseAt ?? now);
  return { ...schedule, resumeAt: formatTimestamp(start + BigInt(policy.maxPauseDays) * MICROS_PER_DAY) };
}
