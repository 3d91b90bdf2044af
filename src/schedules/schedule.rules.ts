/**
 * Scheduled pause and resume (docs/design.md §9), apart from HTTP and from MongoDB: what each
 * command and each due schedule writes. Times are the service's microsecond timestamps
 * (docs/design.md §5), which sort like the instants they name.
 */
import { TRANSITIONS, type Operation, type SubscriptionStatus } from '../subscriptions/subscriptions.rules.js';
import type { ScheduleRequest } from './schedule.request.js';

/** The schedule fields a subscription document carries; `nextScheduledAt` is the earliest pending time, for the workers' poll. */
export interface StoredSchedule {
  readonly pauseAt: string;
  readonly resumeAt: string;
  readonly pauseReason: string;
  readonly nextScheduledAt: string;
}
export type ScheduleField = keyof StoredSchedule;

/** A write to one subscription: its status afterwards, the schedule fields set and removed. */
export interface Change {
  readonly status: SubscriptionStatus;
  readonly set: Partial<StoredSchedule>;
  readonly unset: readonly ScheduleField[];
}

/** What a command writes to a subscription in its `from` status, and to one already in the target status (undefined: nothing). */
export interface CommandPlan {
  readonly from: SubscriptionStatus;
  readonly already: SubscriptionStatus;
  readonly whenFrom: Change;
  readonly whenAlready: Change | undefined;
}

/** A change that leaves exactly these schedule fields, removing the others. */
function leaving(status: SubscriptionStatus, set: Partial<StoredSchedule>): Change {
  const all: ScheduleField[] = ['pauseAt', 'resumeAt', 'pauseReason', 'nextScheduledAt'];
  const kept = Object.fromEntries(Object.entries(set).filter(([, v]) => v !== undefined)) as Partial<StoredSchedule>;
  return { status, set: kept, unset: all.filter((f) => !(f in kept)) };
}

/**
 * The rules of docs/design.md §9. Commands without a schedule write no more than before, except
 * for dropping what they make moot: a pause now drops a pending `pauseAt`, a resume the
 * scheduled resume and the reason. `nextScheduledAt` may then be left earlier than what is
 * pending; the workers' poll corrects it when it comes.
 */
export function planCommand(operation: Operation, schedule: ScheduleRequest | undefined): CommandPlan {
  const { from, to } = TRANSITIONS[operation];
  if (operation === 'RESUME') return { from, already: to, whenFrom: { status: to, set: {}, unset: ['resumeAt', 'pauseReason'] }, whenAlready: undefined };
  if (!schedule) return { from, already: to, whenFrom: { status: to, set: {}, unset: ['pauseAt'] }, whenAlready: undefined };
  const { pauseAt, resumeAt, reason } = schedule;
  const pausedUntil = leaving('paused', { resumeAt, pauseReason: reason, nextScheduledAt: resumeAt });
  return {
    from,
    already: to,
    whenFrom: pauseAt ? leaving('fulfilled', { pauseAt, resumeAt, pauseReason: reason, nextScheduledAt: pauseAt }) : pausedUntil,
    // Already paused: a `pauseAt` has nothing left to do.
    whenAlready: pausedUntil,
  };
}

/** The subscription fields a due schedule is decided on, exactly as read. */
export interface DueState {
  readonly status: SubscriptionStatus;
  readonly pauseAt: string | null;
  readonly resumeAt: string | null;
  /** Not decided on, but shown by the subscription a firing's event carries. */
  readonly pauseReason: string | null;
  readonly nextScheduledAt: string;
}

export type FiringKind = 'pause' | 'resume' | 'cancelled' | 'reschedule';

/** What a due schedule does: the transition with its outcome, or only a correction of `nextScheduledAt`. */
export interface Firing {
  readonly kind: FiringKind;
  readonly outcome: 'applied' | 'noop' | 'skipped' | undefined;
  readonly change: Change;
  /** Whether modifiedAt changes (any change of status or schedule). */
  readonly touches: boolean;
}

export function planFiring(state: DueState, now: string): Firing {
  const { status, pauseAt, resumeAt } = state;
  const pending = { pauseAt: pauseAt ?? undefined, resumeAt: resumeAt ?? undefined };
  if (status === 'cancelled') return { kind: 'cancelled', outcome: 'skipped', change: leaving(status, {}), touches: false };
  if (pauseAt !== null && pauseAt <= now) {
    const change = leaving('paused', { resumeAt: pending.resumeAt, nextScheduledAt: pending.resumeAt });
    // pauseReason is kept: it shows once paused.
    return { kind: 'pause', outcome: status === 'paused' ? 'noop' : 'applied', change: { ...change, unset: change.unset.filter((f) => f !== 'pauseReason') }, touches: true };
  }
  if (resumeAt !== null && resumeAt <= now) {
    return { kind: 'resume', outcome: status === 'fulfilled' ? 'noop' : 'applied', change: leaving('fulfilled', { pauseAt: pending.pauseAt, nextScheduledAt: pending.pauseAt }), touches: true };
  }
  const next = pauseAt ?? resumeAt ?? undefined;
  const change = leaving(status, { nextScheduledAt: next });
  return { kind: 'reschedule', outcome: undefined, change: { ...change, unset: change.unset.filter((f) => f === 'nextScheduledAt') }, touches: false };
}

/** `DELETE …/schedule`: the pending times go; a paused subscription keeps its reason, a fulfilled one's pending reason goes too. */
export function dropSchedule(status: SubscriptionStatus): Change {
  const unset: ScheduleField[] = ['pauseAt', 'resumeAt', 'nextScheduledAt'];
  return { status, set: {}, unset: status === 'paused' ? unset : [...unset, 'pauseReason'] };
}
