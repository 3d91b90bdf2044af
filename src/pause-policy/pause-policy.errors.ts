/** The named errors of pause policies: http/problem.middleware.ts maps the domain ones to their problems. */
import { DomainError } from '../errors.js';

/** The rules of a pause policy that can refuse a pause (pause-policy.rules.ts decides them). */
export type PolicyRule = 'maxPauseDays' | 'maxPausesPerYear' | 'requireResumeAt' | 'cooldownDays' | 'allowedPauseDays';

/** The rule a pause breaks, with the problem's detail naming the rule and its limit. */
export interface PolicyBreach {
  readonly rule: PolicyRule;
  readonly detail: string;
  /** From when the rule lets a pause start (a cooldown's end, a year's pause leaving the count); absent when no wait helps. */
  readonly allowedFrom?: string;
}

/** A pause refused by the merchant's pause policy (422 0032). */
export class PausePolicyError extends DomainError {
  constructor(
    readonly subscriptionId: string,
    readonly breach: PolicyBreach,
  ) {
    super(breach.detail.replace('this subscription', `subscription ${subscriptionId}`));
  }
}

/** A stored pause time that is not a timestamp: an internal error, never the caller's fault. */
export class CorruptPauseTimeError extends Error {
  override name = 'CorruptPauseTimeError';
}
