/**
 * A hold's rules (src/holds/, docs/api.md "Holds"), apart from MongoDB: what its pause and its
 * release write, and which subscriptions its release resumes. A hold is the merchant's, not the
 * customer's: its pause and release leave a subscription's own schedule as it is and count toward
 * no pause policy (only a subscription's own pauses do), and a customer's own pause, started
 * before or under the hold, outlasts it. holders.store.ts applies these rules as filters.
 *
 * | hold's command | fulfilled                         | paused                                   | cancelled |
 * |----------------|-----------------------------------|------------------------------------------|-----------|
 * | PAUSE          | applied: paused, `ownPause: false`, | noop: joins its holders                  | noop, not |
 * |                | the hold joins its holders        |                                          | covered   |
 * | RELEASE at `at`| noop: the hold leaves its holders | applied (resumed) when held by it alone, | noop      |
 * |                |                                   | no own pause due by `at`; else noop, the |           |
 * |                |                                   | hold leaves its holders                  |           |
 */
import { planCommand, type Change, type CommandPlan, type Operation, type SubscriptionStatus } from './subscriptions.rules.js';

/** What a hold's rules read of a subscription, as stored (absent rather than null). */
export interface HolderState {
  readonly status: string;
  readonly ownPause?: false | undefined;
  readonly holdIds?: readonly string[] | undefined;
  readonly pauseAt?: string | undefined;
  readonly resumeAt?: string | undefined;
}

/**
 * A hold's pause of the subscriptions it covers: a `fulfilled` one is paused with the hold as its
 * only holder (`ownPause: false`), its own pending schedule kept (a due pauseAt then starts its
 * own pause: subscriptions.rules.ts, FIRE); one paused already keeps its own pause, and is held
 * too (its `holdIds` were set when the hold was placed). No pause policy applies to it.
 */
export function planHoldPause(): CommandPlan {
  const plan = planCommand('PAUSE', undefined, undefined);
  return { ...plan, whenFrom: { ...plan.whenFrom, set: { ownPause: false }, unset: [], records: 'nothing' }, alreadyUnset: [] };
}

/** A release's resume: every holder goes, its own pending schedule (a pause still to come) stays. */
export const HOLD_RELEASE: Change = { status: 'fulfilled', set: {}, unset: ['ownPause', 'holdIds'], records: 'nothing' };

/** Whether its own pause, started or due by `at`, keeps the subscription paused then (its own resumeAt not come). */
function ownPauseAt(state: HolderState, at: string): boolean {
  const started = (state.status === 'paused' && state.ownPause !== false) || (state.pauseAt !== undefined && state.pauseAt <= at);
  return started && (state.resumeAt === undefined || state.resumeAt > at);
}

/**
 * Whether the hold's release at `at`, applied to the subscription as it stands, resumes it: paused
 * by this hold alone, with no pause of its own due by then (a pauseAt that came while the schedule
 * workers had not reached it yet is its own pause, which they start).
 */
export function releaseResumes(state: HolderState, holdId: string, at: string): boolean {
  const alone = state.holdIds?.length === 1 && state.holdIds[0] === holdId;
  return alone && state.status === 'paused' && state.ownPause === false && !(state.pauseAt !== undefined && state.pauseAt <= at);
}

/**
 * Whether the release of the hold at its `resumeAt` will resume the subscription, read before
 * then (its notice goes to those only): covered by this hold alone, not cancelled, and no pause of
 * its own, started or scheduled, keeps it paused at `resumeAt`.
 */
export function resumedByRelease(state: HolderState, holdId: string, resumeAt: string): boolean {
  const alone = state.holdIds?.length === 1 && state.holdIds[0] === holdId;
  return alone && state.status !== 'cancelled' && !ownPauseAt(state, resumeAt);
}

/** What a hold's command does to its holders on a subscription it reaches: joins them, leaves them, or neither. */
export type HoldersMove = 'join' | 'leave' | 'none';

/** A hold's command (its pause or its release) on one subscription: the rows of the table above. */
export interface HoldRule {
  /** The status of the subscriptions it changes, and what it writes to them. */
  readonly from: SubscriptionStatus;
  readonly change: Change;
  /** Whether it changes this subscription; otherwise it leaves it, marked noop. */
  readonly changes: (state: HolderState) => boolean;
  /** What it does to the holders of one it reaches, changed or left. */
  readonly holders: (state: HolderState) => HoldersMove;
  /** Whether, on one it leaves, a resume notice the hold kept waiting falls due again (subscriptions.rules.ts, FIRE). */
  readonly rearmsNotice: boolean;
}

/** The rule of a hold's pause (PAUSE) or of its release at `at` (RESUME). */
export function holdRule(operation: Operation, holdId: string, at: string): HoldRule {
  if (operation === 'PAUSE')
    return {
      from: 'fulfilled',
      change: planHoldPause().whenFrom,
      changes: (state) => state.status === 'fulfilled',
      holders: (state) => (state.status === 'cancelled' ? 'none' : 'join'),
      rearmsNotice: false,
    };
  return {
    from: 'paused',
    change: HOLD_RELEASE,
    changes: (state) => releaseResumes(state, holdId, at),
    holders: () => 'leave',
    rearmsNotice: true,
  };
}
