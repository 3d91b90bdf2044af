/**
 * What bulk commands do to a subscription, read off the one table of rules (subscriptions.rules.ts):
 * the outcome a command has reached, and a run's commands walked in order for one subscription.
 * Pure: the bulk commands store reads the subscriptions, asks here, and writes what it is told.
 */
import { clipped } from '../lib/text.js';
import { commandOf, decide, type CommandPlan, type Operation, type SubscriptionStatus } from './subscriptions.rules.js';

/** The reason of a command that a concurrent writer kept from resolving: worth retrying later. */
export const KEPT_CHANGING = 'status kept changing';

/** What a bulk command leaves on a subscription it took effect on: it changed the status, or found it already there. */
export type CommandMark = 'applied' | 'noop';

/** A subscription's state as far as one bulk command is concerned. */
export interface CommandState {
  readonly status: SubscriptionStatus;
  /** Set once the command took effect here. */
  readonly mark: CommandMark | undefined;
  /** Read where an undo's command compares it with its unchangedSince. */
  readonly modifiedAt?: string;
}

/** What one bulk command did (docs/design.md §4, §6). */
export type CommandOutcome =
  | { readonly outcome: 'applied' | 'noop' }
  | { readonly outcome: 'skipped'; readonly reason: 'cancelled' | 'not_found' | 'changed_since' }
  | { readonly outcome: 'failed'; readonly reason: string };

/** `BulkRequestItem.reason`'s bound in the contract. */
const FAILED_REASON_MAX_LENGTH = 500;

/**
 * The outcome a command has reached on a subscription (undefined: none found), or undefined while
 * it has not (a concurrent writer interfered). `unchangedSince`: an undo's (CommandPlan), which
 * skips a subscription modified after it.
 */
export function commandOutcome(operation: Operation, state: CommandState | undefined, unchangedSince?: string): CommandOutcome | undefined {
  if (!state) return { outcome: 'skipped', reason: 'not_found' };
  if (state.mark) return { outcome: state.mark };
  if (changedSince(unchangedSince, state)) return { outcome: 'skipped', reason: 'changed_since' };
  try {
    return decide({ status: state.status, pauseAt: null, resumeAt: null }, commandOf(operation)).outcome === 'cancelled'
      ? { outcome: 'skipped', reason: 'cancelled' }
      : undefined;
  } catch (error) {
    return { outcome: 'failed', reason: clipped((error as Error).message, FAILED_REASON_MAX_LENGTH) };
  }
}

/** Whether an undo's command (its `unchangedSince`; undefined: not an undo) finds the subscription modified after it. */
export function changedSince(unchangedSince: string | undefined, state: { readonly modifiedAt?: string | undefined }): boolean {
  return unchangedSince !== undefined && state.modifiedAt !== undefined && state.modifiedAt > unchangedSince;
}

/** What a command finds on a subscription before it is walked: its mark, none yet, or that it does not name the subscription. */
export type CommandFound = CommandMark | undefined | 'unnamed';

/** One subscription's way through a run's commands (walkCommands). */
export interface CommandWalk {
  /** Its status after the commands. */
  readonly status: SubscriptionStatus;
  /** The command that changes it (its index in the run), or -1: none does. */
  readonly applied: number;
  /** The commands that take effect on it here, in order: each leaves its mark, `applied` the applied one, the others noop. */
  readonly reached: readonly number[];
  /** Each command's mark on it afterwards; undefined: it does not name it, or finds it in neither the plan's `from` nor its target status. */
  readonly marks: readonly (CommandMark | undefined)[];
}

/**
 * Several bulk commands of one plan, in their order, on one subscription in `status`, as applying
 * them one after another would go: a command that already left its mark keeps it; the first other
 * that finds it in `plan.from` changes it (applied), and each other that finds it in the target
 * status is a no-op. A plan that gives a subscription already in the target status a change of
 * its own (`whenAlready`) is not walked: each of its commands writes that change.
 */
export function walkCommands(plan: CommandPlan, status: SubscriptionStatus, found: readonly CommandFound[]): CommandWalk {
  let now = status;
  let applied = -1;
  const reached: number[] = [];
  const marks = found.map((mark, i): CommandMark | undefined => {
    if (mark === 'unnamed') return undefined;
    if (mark) return mark;
    if (now === plan.from) {
      applied = i;
      now = plan.whenFrom.status;
    } else if (now !== plan.already) return undefined;
    reached.push(i);
    return applied === i ? 'applied' : 'noop';
  });
  return { status: now, applied, reached, marks };
}
