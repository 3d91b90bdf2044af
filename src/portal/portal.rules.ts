/**
 * What a portal page offers and says, apart from HTTP and MongoDB: the pause lengths the merchant's
 * policy allows, the state in plain words, and each policy rule as a customer reads it.
 */
import { POLICY_REJECTIONS, type PausePolicy, type PolicyBreach, type PolicyRule } from '../pause-policy/pause-policy.rules.js';
import { parseRfc3339 } from '../lib/clock.js';
import type { Subscription } from '../subscriptions/subscriptions.rules.js';

/** The lengths offered when the policy names none. */
export const DEFAULT_PAUSE_DAYS: readonly number[] = Object.freeze([7, 14, 30]);

const MICROS_PER_DAY = 86_400_000_000n;

/** The policy's `allowedPauseDays`, or else the default lengths, each within `maxPauseDays`. */
export function pauseMenu(policy: PausePolicy): number[] {
  const lengths = policy.allowedPauseDays ?? DEFAULT_PAUSE_DAYS;
  return [...new Set(lengths)].filter((days) => policy.maxPauseDays === null || days <= policy.maxPauseDays).sort((a, b) => a - b);
}

/** The instant `days` days after `nowMicros`, in microseconds. */
export function daysAfter(nowMicros: bigint, days: number): bigint {
  return nowMicros + BigInt(days) * MICROS_PER_DAY;
}

/** "14 December", with the year when it is not the current one (by the merchant's clock). */
export function plainDate(micros: bigint, nowMicros: bigint): string {
  const date = new Date(Number(micros / 1000n));
  const sameYear = date.getUTCFullYear() === new Date(Number(nowMicros / 1000n)).getUTCFullYear();
  return date.toLocaleDateString('en-GB', { day: 'numeric', month: 'long', timeZone: 'UTC', ...(sameYear ? {} : { year: 'numeric' }) });
}

/** "Active", "Paused until 14 December", "Paused", "Cancelled". */
export function stateInWords(subscription: Subscription, nowMicros: bigint, resumeAtMicros: bigint | undefined): string {
  if (subscription.status === 'fulfilled') return 'Active';
  if (subscription.status === 'cancelled') return 'Cancelled';
  return resumeAtMicros === undefined ? 'Paused' : `Paused until ${plainDate(resumeAtMicros, nowMicros)}`;
}

/** Why no pause can start now, and from when one can (by the merchant's clock), as the policy's verdict says. */
export function blockedInWords(breach: PolicyBreach, policy: PausePolicy, nowMicros: bigint): string {
  const from = breach.allowedFrom === undefined ? undefined : parseRfc3339(breach.allowedFrom);
  const when = from === undefined ? '' : ` You can pause it again from ${plainDate(from, nowMicros)}.`;
  return `${ruleInWords(breach.rule, policy)}${when}`;
}

/** "7, 14 or 30". */
export function listInWords(numbers: readonly number[]): string {
  if (numbers.length <= 1) return numbers.join('');
  return `${numbers.slice(0, -1).join(', ')} or ${numbers.at(-1)}`;
}

/** Why a post changed nothing: the form's, the link's, the subscription's, the length's, or a policy rule's. */
export type Refusal = 'form' | 'pauseNotAllowed' | 'resumeNotAllowed' | 'ended' | 'length' | PolicyRule;

export const REFUSALS: readonly Refusal[] = Object.freeze([
  'form',
  'pauseNotAllowed',
  'resumeNotAllowed',
  'ended',
  'length',
  ...(Object.keys(POLICY_REJECTIONS) as PolicyRule[]),
]);

export const CANNOT_CHANGE = 'This subscription has ended, so it cannot be changed.';

/** A refusal in a customer's words, under the merchant's policy as it is now. */
export function refusalInWords(refusal: Refusal, policy: PausePolicy): string {
  switch (refusal) {
    case 'form':
      return 'This form is out of date. Nothing was changed: please use the page as it is now.';
    case 'pauseNotAllowed':
      return 'This link does not allow pausing.';
    case 'resumeNotAllowed':
      return 'This link does not allow resuming.';
    case 'ended':
      return CANNOT_CHANGE;
    case 'length':
      return `Choose a pause of ${listInWords(pauseMenu(policy))} days.`;
    default:
      return ruleInWords(refusal, policy);
  }
}

/** The rule a refused pause broke, in a customer's words, with the merchant's limit. */
export function ruleInWords(rule: PolicyRule, policy: PausePolicy): string {
  switch (rule) {
    case 'maxPauseDays':
      return `A pause can last at most ${policy.maxPauseDays} days.`;
    case 'allowedPauseDays':
      return `A pause can last ${listInWords(policy.allowedPauseDays ?? [])} days.`;
    case 'maxPausesPerYear':
      return `This subscription can be paused at most ${policy.maxPausesPerYear} times in a year, and it has been paused that often already.`;
    case 'cooldownDays':
      return `A new pause can start only ${policy.cooldownDays} days after the last one ended.`;
    case 'requireResumeAt':
      return 'A pause needs a date to end.';
  }
}
