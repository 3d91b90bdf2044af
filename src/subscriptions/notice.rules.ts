/**
 * The notice before an automatic resume (docs/design.md §9, "Notices"): under a pause policy's
 * `resumeNoticeHours`, each scheduled resume gets one `subscription.resume_upcoming` event that
 * many hours before its `resumeAt`, or at once when the resume is set inside that window. Pure,
 * the time passed in, like the rest of the rules (subscriptions.rules.ts).
 *
 * Two stored fields carry it, beside the schedule they belong to: `noticeAt`, when the notice of
 * the pending `resumeAt` falls due (a pending time like `pauseAt`, so `nextScheduledAt` is never
 * later than it), and `noticeFor`, the `resumeAt` whose notice was sent. Every change that sets or
 * drops `resumeAt` rewrites or removes both, so a replaced or dropped resume's notice never fires,
 * and a new `resumeAt` gets a notice of its own.
 */
import { formatTimestamp, parseRfc3339 } from '../lib/clock.js';

const MICROS_PER_HOUR = 3_600_000_000n;

/** The fields of a change a notice reads and writes (subscriptions.rules.ts `Change`). */
interface NoticeChange {
  readonly set: {
    readonly resumeAt?: string;
    readonly nextScheduledAt?: string;
    readonly noticeAt?: string;
    readonly noticeFor?: string;
  };
  readonly unset: readonly string[];
}

/** The policy's notice rule and the time of the change: what a notice is decided by. */
export interface NoticeTerms {
  /** `resumeNoticeHours`; null: no notices. */
  readonly hours: number | null;
  readonly now: string;
}

/** When the notice of a resume at `resumeAt` falls due under `hours`. */
export function noticeTimeOf(resumeAt: string, hours: number): string {
  return formatTimestamp(parseRfc3339(resumeAt)! - BigInt(hours) * MICROS_PER_HOUR);
}

/**
 * When a notice set at `now` falls due: at its time, or at `now` when that time is past, so that its
 * event is never dated before the change that made it due.
 */
export function noticeDueAt(resumeAt: string, hours: number, now: string): string {
  const at = noticeTimeOf(resumeAt, hours);
  return at < now ? now : at;
}

/**
 * `change` with the notice of the `resumeAt` it sets: a `noticeAt` to fall due (and
 * `nextScheduledAt` no later than it), or, inside the window, `noticeFor` at once, which is what
 * makes the change record its `subscription.resume_upcoming` event (requestEvents). A change that
 * sets no `resumeAt`, or made without notices, is returned as it is.
 */
export function withNotice<C extends NoticeChange>(change: C, terms: NoticeTerms | undefined): C {
  const { resumeAt, nextScheduledAt } = change.set;
  if (terms === undefined || terms.hours === null || resumeAt === undefined) return change;
  const noticeAt = noticeTimeOf(resumeAt, terms.hours);
  if (noticeAt <= terms.now) {
    return { ...change, set: { ...change.set, noticeFor: resumeAt }, unset: change.unset.filter((f) => f !== 'noticeFor') };
  }
  const next = nextScheduledAt === undefined || noticeAt < nextScheduledAt ? noticeAt : nextScheduledAt;
  return {
    ...change,
    set: { ...change.set, noticeAt, nextScheduledAt: next },
    unset: change.unset.filter((f) => f !== 'noticeAt' && f !== 'nextScheduledAt'),
  };
}

/** The earliest of these pending times (null: none pending). */
export function earliestOf(...times: readonly (string | null | undefined)[]): string | undefined {
  return times.reduce<string | undefined>((a, b) => (b == null ? a : a === undefined || b < a ? b : a), undefined);
}
