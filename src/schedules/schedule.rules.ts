/**
 * Scheduled pause and resume (docs/design.md §9), apart from HTTP and from MongoDB: what a pause
 * request's `pauseAt`, `resumeAt` and `reason` may be, and what each command and each due
 * schedule writes. Times are kept as the service's microsecond timestamps (docs/design.md §5),
 * which sort like the instants they name.
 */
import { formatTimestamp } from '../lib/clock.js';
import { TRANSITIONS, type Operation, type SubscriptionStatus } from '../subscriptions/subscriptions.rules.js';

/** The body fields of a pause that schedule it: a request without any of them answers as before. */
export const SCHEDULE_FIELDS = ['pauseAt', 'resumeAt', 'reason'] as const;

export interface ScheduleRequest {
  readonly pauseAt?: string;
  readonly resumeAt?: string;
  readonly reason?: string;
}

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

export class InvalidScheduleError extends Error {
  override name = 'InvalidScheduleError';

  constructor(
    readonly field: (typeof SCHEDULE_FIELDS)[number],
    readonly rule: string,
  ) {
    super(`${field} ${rule}.`);
  }
}

const MAX_YEARS_AHEAD = 3;
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):?(\d{2})?)$/;

/** Microseconds since the epoch of an RFC 3339 date-time (fractions past microseconds dropped); undefined if it is not one. */
export function parseRfc3339(text: string): bigint | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, fraction = '', zulu, sign, oh = '0', om = '0'] = m;
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s));
  const offsetMinutes = zulu ? 0 : (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  const millis = date.getTime() - offsetMinutes * 60_000;
  if (Number.isNaN(millis)) return undefined;
  return BigInt(millis) * 1000n + BigInt(fraction.slice(0, 6).padEnd(6, '0'));
}

function futureTime(field: 'pauseAt' | 'resumeAt', raw: unknown, nowMicros: bigint): bigint | undefined {
  if (raw === undefined) return undefined;
  const micros = typeof raw === 'string' ? parseRfc3339(raw) : undefined;
  if (micros === undefined) throw new InvalidScheduleError(field, 'must be an RFC 3339 date-time');
  if (micros <= nowMicros) throw new InvalidScheduleError(field, 'must be in the future');
  const limit = new Date(Number(nowMicros / 1000n));
  limit.setUTCFullYear(limit.getUTCFullYear() + MAX_YEARS_AHEAD);
  if (micros > BigInt(limit.getTime()) * 1000n) throw new InvalidScheduleError(field, `must be at most ${MAX_YEARS_AHEAD} years ahead`);
  return micros;
}

/** The schedule a pause body asks for, or undefined when it has none of the fields. The shape was checked at the edge. */
export function scheduleRequestOf(body: Readonly<Record<string, unknown>>, nowMicros: bigint): ScheduleRequest | undefined {
  if (!SCHEDULE_FIELDS.some((field) => body[field] !== undefined)) return undefined;
  const pauseAt = futureTime('pauseAt', body.pauseAt, nowMicros);
  const resumeAt = futureTime('resumeAt', body.resumeAt, nowMicros);
  if (pauseAt !== undefined && resumeAt !== undefined && pauseAt >= resumeAt) throw new InvalidScheduleError('pauseAt', 'must be before resumeAt');
  const reason = body.reason;
  if (reason !== undefined && (typeof reason !== 'string' || reason.length === 0 || [...reason].length > 500)) {
    throw new InvalidScheduleError('reason', 'must be 1 to 500 characters');
  }
  return {
    ...(pauseAt !== undefined ? { pauseAt: formatTimestamp(pauseAt) } : {}),
    ...(resumeAt !== undefined ? { resumeAt: formatTimestamp(resumeAt) } : {}),
    ...(reason !== undefined ? { reason } : {}),
  };
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
