/**
 * The one table of rules (docs/design.md §4 and §9), apart from HTTP and from MongoDB: what every
 * command does to a subscription, whatever starts it (a request, a bulk command, a due schedule,
 * dropping a schedule). `decide` maps the current state and the command to the outcome, the write
 * and the event; SubscriptionsService is the one caller that acts on it. Times are the service's
 * microsecond timestamps (docs/design.md §5), which sort like the instants they name.
 *
 * The table of commands by status, the holders, and the events of a change are set out in
 * docs/write-path.md#the-rules-table, which this module is the code of.
 */
import type { components } from '../../generated/openapi.js';
import { earliestOf, withNotice, type NoticeTerms } from './notice.rules.js';
import {
  NO_PAUSE_HISTORY,
  pauseVerdict,
  type PauseHistory,
  type PausePolicy,
  type PolicyBreach,
} from '../pause-policy/pause-policy.rules.js';
import type { ScheduleRequest } from './schedule.request.js';
import { CorruptSubscriptionError } from './subscriptions.errors.js';

export type SubscriptionStatus = components['schemas']['SubscriptionStatus'];
export type Operation = components['schemas']['BulkOperation'];

export interface Subscription {
  readonly id: string;
  readonly merchantId: string;
  readonly planId: string;
  readonly status: SubscriptionStatus;
  readonly cycle: number;
  readonly createdAt: string;
  readonly modifiedAt: string;
  /** Present only while a pause or resume is scheduled. */
  readonly schedule?: components['schemas']['Schedule'];
  /** Present only while paused with a reason. */
  readonly pauseReason?: string;
  /** The active holds that cover it (src/holds/); present only while one does. */
  readonly holdIds?: readonly string[];
  /** Its id in the merchant's own billing system (lifecycle.ts); absent for one seeded. */
  readonly externalId?: string;
  readonly metadata?: Readonly<Record<string, string>>;
}

/**
 * What made a change: recorded in its event (`cause`). `requestId`: the bulk request's id for
 * `bulk` and `hold`; `apiKeyId`: the id of the API key that made the request (`api`, `bulk`),
 * never the key; `portalLinkId`: the link whose page the customer used (`portal`, src/portal/);
 * `holdId`: the hold placed or released (`hold`); `system` and `eventId`: the billing system whose
 * event made the change, and that event's id (`billing`, src/billing/).
 */
export interface ChangeCause {
  readonly kind: 'api' | 'bulk' | 'schedule' | 'portal' | 'hold' | 'billing';
  readonly requestId?: string;
  readonly apiKeyId?: string;
  readonly portalLinkId?: string;
  readonly holdId?: string;
  readonly system?: 'stripe';
  readonly eventId?: string;
}

/** The cause of a change made by a single request of this principal. */
export function causeOf(merchant: { readonly apiKeyId: string }): ChangeCause {
  return { kind: 'api', apiKeyId: merchant.apiKeyId };
}

export interface Transition {
  readonly from: SubscriptionStatus;
  readonly to: SubscriptionStatus;
}

export const TRANSITIONS: Readonly<Record<Operation, Transition>> = Object.freeze({
  PAUSE: { from: 'fulfilled', to: 'paused' },
  RESUME: { from: 'paused', to: 'fulfilled' },
});

/** The schedule fields a subscription document carries; `nextScheduledAt` is the earliest pending time, for the workers' poll. */
export interface StoredSchedule {
  readonly pauseAt: string;
  readonly resumeAt: string;
  readonly pauseReason: string;
  readonly nextScheduledAt: string;
  /** When the notice of the pending resumeAt falls due, and the resumeAt whose notice was sent (notice.rules.ts). */
  readonly noticeAt: string;
  readonly noticeFor: string;
}
export type ScheduleField = keyof StoredSchedule;

/**
 * A paused subscription's holders: its own pause and each active hold that covers it;
 * it stays paused while it has one. Stored as `holdIds` (the holds) and `ownPause: false` when its
 * own pause is gone: absent, a paused subscription holds its own pause, as every one did before holds.
 */
export type HolderField = 'ownPause' | 'holdIds';

/** A write to one subscription: its status afterwards, the fields set and removed. */
export interface Change {
  readonly status: SubscriptionStatus;
  readonly set: Partial<StoredSchedule> & { readonly ownPause?: false };
  readonly unset: readonly (ScheduleField | HolderField)[];
  /**
   * What it records for the pause policy (pause-policy.rules.ts): its own pause starting or
   * ending; absent, read off its change of status. Only a subscription's own pauses count.
   */
  readonly records?: 'pause' | 'resume' | 'nothing';
}

/**
 * Everything that changes a subscription. FIRE: its schedule, as due at `now`, under the merchant's
 * pause policy (absent: none) with the times of the pauses recently applied to it.
 */
export type Command =
  | { readonly kind: 'PAUSE'; readonly schedule?: ScheduleRequest; readonly notice?: NoticeTerms }
  | { readonly kind: 'RESUME' }
  | { readonly kind: 'DROP_SCHEDULE' }
  | { readonly kind: 'CANCEL' }
  | { readonly kind: 'FIRE'; readonly now: string; readonly policy?: PausePolicy; readonly history?: PauseHistory };

/** What the rules read of a subscription; `held`: an active hold covers it (absent: none). */
export interface RuleState {
  readonly status: string;
  readonly pauseAt: string | null;
  readonly resumeAt: string | null;
  /** The pending notice's time (notice.rules.ts); read by FIRE only. */
  readonly noticeAt?: string | null;
  readonly held?: boolean;
  /** Paused by its holds alone (`ownPause: false`): a pauseAt falling due then starts its own pause. */
  readonly heldOnly?: boolean;
}

/**
 * What a command does: `applied` (it did what it asks), `noop` (the subscription was already so),
 * `cancelled` (neither applies to a cancelled subscription), `corrected` (a due poll found nothing
 * due: only `nextScheduledAt` is corrected), `refused` (a due pause breaks the pause policy: its
 * schedule is removed, `breach` says why).
 */
export type Outcome = 'applied' | 'noop' | 'cancelled' | 'corrected' | 'refused';

export interface Ruling {
  readonly outcome: Outcome;
  /** What to write; undefined: nothing. */
  readonly change: Change | undefined;
  /** Whether the write changes `modifiedAt` (any change of status or schedule). */
  readonly touches: boolean;
  /** The change of status the write makes, recorded as its event in the same write; undefined: none. */
  readonly event: Transition | undefined;
  /** Every event the write records, in order (the status event first): see the table above. */
  readonly events: readonly RuledEvent[];
  /** For FIRE: which scheduled transition fell due. */
  readonly due?: 'pause' | 'resume' | 'notice';
  /** For a `refused` FIRE: the rule of the pause policy the due pause breaks. */
  readonly breach?: PolicyBreach;
}

export type ScheduleTime = 'pauseAt' | 'resumeAt';
const SCHEDULE_TIMES: readonly ScheduleTime[] = ['pauseAt', 'resumeAt'];

/** An event a change records: its change of status, or a change of its schedule (with the times it removed). */
export type RuledEvent =
  | { readonly kind: 'status' }
  | { readonly kind: 'pause_scheduled' | 'resume_scheduled' | 'resume_upcoming' }
  | { readonly kind: 'schedule_removed'; readonly removed: readonly ScheduleTime[] };

/**
 * The events of `change` made by a request's command to a subscription in `status` whose pending
 * times were `before` (null: none): see the table above. The stores call it with the times their
 * write filters on, so the events are exactly the write's.
 */
export function requestEvents(
  status: SubscriptionStatus,
  change: Change | undefined,
  before: { readonly pauseAt?: string | null; readonly resumeAt?: string | null },
): RuledEvent[] {
  if (!change || status === 'cancelled') return [];
  const events: RuledEvent[] = change.status !== status ? [{ kind: 'status' }] : [];
  // A cancel's one event says it all: what it drops goes with the subscription.
  if (change.status === 'cancelled') return events;
  if (change.set.pauseAt !== undefined) events.push({ kind: 'pause_scheduled' });
  if (change.set.resumeAt !== undefined) events.push({ kind: 'resume_scheduled' });
  const removed = SCHEDULE_TIMES.filter((t) => change.unset.includes(t) && before[t] != null);
  if (removed.length > 0) events.push({ kind: 'schedule_removed', removed });
  // A resume set inside its notice window is noticed at once, by the change itself (notice.rules.ts).
  if (change.set.noticeFor !== undefined) events.push({ kind: 'resume_upcoming' });
  return events;
}

const STATUSES: readonly string[] = ['fulfilled', 'paused', 'cancelled'];
const HOLDERS: readonly HolderField[] = ['ownPause', 'holdIds'];

/** A change that leaves exactly these schedule fields, removing the others. */
function leaving(status: SubscriptionStatus, set: Partial<StoredSchedule>): Change {
  const all: ScheduleField[] = ['pauseAt', 'resumeAt', 'pauseReason', 'nextScheduledAt', 'noticeAt', 'noticeFor'];
  const kept = Object.fromEntries(Object.entries(set).filter(([, v]) => v !== undefined)) as Partial<StoredSchedule>;
  return { status, set: kept, unset: all.filter((f) => !(f in kept)) };
}

function ruling(status: SubscriptionStatus, outcome: Outcome, change: Change | undefined, touches = change !== undefined): Ruling {
  const event = change && change.status !== status ? { from: status, to: change.status } : undefined;
  return { outcome, change, touches, event, events: event ? [{ kind: 'status' }] : [] };
}

/**
 * Pause and resume. Commands without a schedule write no more than before schedules existed,
 * except for dropping what they make moot: a pause now drops a pending `pauseAt`, a resume the
 * scheduled resume and the reason. `nextScheduledAt` may then be left earlier than what is
 * pending; the workers' poll corrects it when it comes. A pause with any schedule field replaces
 * the whole schedule and reason; already paused, a `pauseAt` has nothing left to do.
 */
function pauseOrResume(status: SubscriptionStatus, operation: Operation, schedule: ScheduleRequest | undefined): Ruling {
  const { from, to } = TRANSITIONS[operation];
  if (status === 'cancelled') return ruling(status, 'cancelled', undefined);
  // An explicit resume clears every holder: the merchant's word wins, and the subscription leaves its holds. A pauseAt
  // still pending (held before its own pause came) goes with its resumeAt, rather than leaving a pause without its end.
  if (operation === 'RESUME')
    return status === from
      ? ruling(status, 'applied', {
          status: to,
          set: {},
          unset: ['pauseAt', 'resumeAt', 'pauseReason', 'noticeAt', 'noticeFor', ...HOLDERS],
        })
      : ruling(status, 'noop', undefined);
  // An explicit pause is the subscription's own holder (ownPause absent), whatever holds it too.
  if (!schedule)
    return status === from
      ? ruling(status, 'applied', { status: to, set: {}, unset: ['pauseAt', 'ownPause'] })
      : ruling(status, 'noop', undefined);
  const { pauseAt, resumeAt, reason } = schedule;
  const until = leaving('paused', { resumeAt, pauseReason: reason, nextScheduledAt: resumeAt });
  const pausedUntil = { ...until, unset: [...until.unset, 'ownPause' as const] };
  if (status === to) return ruling(status, 'noop', pausedUntil);
  return ruling(
    status,
    'applied',
    pauseAt ? leaving('fulfilled', { pauseAt, resumeAt, pauseReason: reason, nextScheduledAt: pauseAt }) : pausedUntil,
  );
}

/** `DELETE …/schedule`: the pending times go; a paused subscription keeps its reason, a fulfilled one's pending reason goes too. */
function drop(state: RuleState & { readonly status: SubscriptionStatus }): Ruling {
  const { status } = state;
  if (status === 'cancelled') return ruling(status, 'cancelled', undefined);
  if (state.pauseAt === null && state.resumeAt === null) return ruling(status, 'noop', undefined);
  const unset: ScheduleField[] = ['pauseAt', 'resumeAt', 'nextScheduledAt', 'noticeAt', 'noticeFor'];
  return ruling(status, 'applied', { status, set: {}, unset: status === 'paused' ? unset : [...unset, 'pauseReason'] });
}

/** A cancel ends it from any status, dropping its schedule, its notice and its holders; a cancelled one stays as it is. */
function cancel(status: SubscriptionStatus): Ruling {
  if (status === 'cancelled') return ruling(status, 'noop', undefined);
  return ruling(status, 'applied', { ...leaving('cancelled', {}), unset: [...leaving('cancelled', {}).unset, ...HOLDERS] });
}

/**
 * A due schedule: the transition that fell due first, or only a correction of `nextScheduledAt`; a
 * cancelled subscription's dead schedule is removed. A due pause that would start under a pause
 * policy it breaks is refused: its schedule is removed, with a `schedule_removed` event; one
 * without resumeAt under `maxPauseDays` gets one (with a `resume_scheduled` event).
 */
function fire(state: RuleState & { readonly status: SubscriptionStatus }, command: Extract<Command, { kind: 'FIRE' }>): Ruling {
  const { status, pauseAt, resumeAt } = state;
  const { now } = command;
  const pending = { pauseAt: pauseAt ?? undefined, resumeAt: resumeAt ?? undefined };
  if (status === 'cancelled') return ruling(status, 'cancelled', leaving(status, {}), false);
  if (pauseAt !== null && pauseAt <= now) {
    // Under a hold its own pause starts all the same: held to the policy, counted, and kept after the release.
    const starts = status === 'fulfilled' || state.heldOnly === true;
    const verdict =
      starts && command.policy
        ? pauseVerdict(command.policy, 'fulfilled', { resumeAt: pending.resumeAt }, command.history ?? NO_PAUSE_HISTORY, now)
        : { schedule: pending };
    if ('breach' in verdict) {
      const removed = SCHEDULE_TIMES.filter((t) => state[t] !== null);
      return {
        ...ruling(status, 'refused', leaving(status, {})),
        events: [{ kind: 'schedule_removed', removed }],
        due: 'pause',
        breach: verdict.breach,
      };
    }
    const until = verdict.schedule?.resumeAt;
    const kept = until === pending.resumeAt;
    const change = leaving('paused', { resumeAt: until, nextScheduledAt: kept ? earliestOf(state.noticeAt, until) : until });
    // pauseReason is kept: it shows once paused; so is the notice of a resumeAt kept. The pause is its own (ownPause absent).
    const keeps = (f: ScheduleField | HolderField) => f !== 'pauseReason' && (!kept || (f !== 'noticeAt' && f !== 'noticeFor'));
    const own: Change = { ...change, unset: [...change.unset.filter(keeps), 'ownPause'], ...(starts ? { records: 'pause' as const } : {}) };
    const given = kept ? own : withNotice(own, noticeTerms(command));
    const fired = { ...ruling(status, starts ? 'applied' : 'noop', given), due: 'pause' as const };
    if (kept) return fired;
    const upcoming: RuledEvent[] = given.set.noticeFor !== undefined ? [{ kind: 'resume_upcoming' }] : [];
    return { ...fired, events: [...fired.events, { kind: 'resume_scheduled' }, ...upcoming] };
  }
  const { noticeAt = null } = state;
  const held = status === 'paused' && state.held === true;
  if (noticeAt !== null && noticeAt <= now && resumeAt !== null) {
    if (!held) return notice(status, resumeAt, pauseAt);
    // Held, its own resume would not resume it: the notice waits, pending, until a release leaves it unheld (holders.store.ts), or is dropped with its resume.
    if (resumeAt > now)
      return ruling(status, 'corrected', { status, set: { nextScheduledAt: earliestOf(pauseAt, resumeAt)! }, unset: [] }, false);
  }
  if (resumeAt !== null && resumeAt <= now && held) {
    // Its own scheduled resume under a hold ends its own pause only: it stays paused until the hold is released.
    return { ...ruling(status, 'applied', { ...leaving(status, {}), set: { ownPause: false }, records: 'resume' }), due: 'resume' };
  }
  if (resumeAt !== null && resumeAt <= now) {
    return {
      ...ruling(
        status,
        status === 'fulfilled' ? 'noop' : 'applied',
        leaving('fulfilled', { pauseAt: pending.pauseAt, nextScheduledAt: pending.pauseAt }),
      ),
      due: 'resume',
    };
  }
  const change = leaving(status, { nextScheduledAt: earliestOf(pauseAt, noticeAt, resumeAt) });
  return ruling(status, 'corrected', { ...change, unset: change.unset.filter((f) => f === 'nextScheduledAt') }, false);
}

/** A FIRE's notice terms: its policy's rule, at its time. */
function noticeTerms(command: Extract<Command, { kind: 'FIRE' }>): NoticeTerms {
  return { hours: command.policy?.resumeNoticeHours ?? null, now: command.now };
}

/**
 * A due notice: its `subscription.resume_upcoming` event, `noticeFor` set to the resumeAt it
 * announces; nothing the API shows changes (modifiedAt included), so an undo still finds the
 * subscription as a bulk request left it.
 */
function notice(status: SubscriptionStatus, resumeAt: string, pauseAt: string | null): Ruling {
  const change: Change = { status, set: { noticeFor: resumeAt, nextScheduledAt: pauseAt ?? resumeAt }, unset: ['noticeAt'] };
  return { ...ruling(status, 'applied', change, false), events: [{ kind: 'resume_upcoming' }], due: 'notice' };
}

/** The one rule: what `command` does to a subscription in `state`. A status the model does not know is corrupt data, never a decision. */
export function decide(state: RuleState, command: Command): Ruling {
  if (!STATUSES.includes(state.status)) throw new CorruptSubscriptionError(`unknown subscription status ${JSON.stringify(state.status)}`);
  const known = state as RuleState & { readonly status: SubscriptionStatus };
  const ofRequest = (ruling: Ruling): Ruling => ({ ...ruling, events: requestEvents(known.status, ruling.change, state) });
  switch (command.kind) {
    case 'PAUSE': {
      const paused = pauseOrResume(known.status, 'PAUSE', command.schedule);
      return ofRequest(paused.change ? { ...paused, change: withNotice(paused.change, command.notice) } : paused);
    }
    case 'RESUME': {
      // Paused by its holds alone, it ends no pause of its own: nothing is recorded for the pause policy's cooldown.
      const { change, ...resumed } = pauseOrResume(known.status, 'RESUME', undefined);
      return ofRequest({ ...resumed, change: change && state.heldOnly ? { ...change, records: 'nothing' } : change });
    }
    case 'DROP_SCHEDULE':
      return ofRequest(drop(known));
    case 'CANCEL':
      return ofRequest(cancel(known.status));
    case 'FIRE':
      return fire(known, command);
  }
}

/** The command of a pause or resume request; `notice`: the pause policy's notice rule, for a resumeAt it sets. */
export function commandOf(operation: Operation, schedule?: ScheduleRequest, notice?: NoticeTerms): Command {
  return operation === 'PAUSE' ? { kind: 'PAUSE', ...(schedule ? { schedule } : {}), ...(notice ? { notice } : {}) } : { kind: 'RESUME' };
}

/**
 * A pause or resume as conditional writes by status, for one update of many subscriptions (a bulk
 * chunk): what it writes to a subscription in its `from` status, and to one already in the target
 * status (undefined: nothing). Read off `decide`, which for these commands depends on the status alone.
 */
export interface CommandPlan {
  readonly from: SubscriptionStatus;
  readonly already: SubscriptionStatus;
  readonly whenFrom: Change;
  readonly whenAlready: Change | undefined;
  /** An undo's (docs/design.md §6): a subscription modified after it is neither changed nor marked, but skipped (`changed_since`). */
  readonly unchangedSince?: string;
  /** What the marks of those already in the target status also remove: an explicit pause of a held one gives it its own pause back. */
  readonly alreadyUnset: readonly HolderField[];
}

/**
 * `schedule`: what a pause that starts is given (with the resumeAt a pause policy fills in,
 * pauseVerdict); `asSent`: what the request sent, which is what a subscription already paused gets.
 */
export function planCommand(
  operation: Operation,
  schedule: ScheduleRequest | undefined,
  asSent: ScheduleRequest | undefined,
  notice?: NoticeTerms,
): CommandPlan {
  const { from, to } = TRANSITIONS[operation];
  const unscheduled = { pauseAt: null, resumeAt: null };
  const whenFrom = decide({ status: from, ...unscheduled }, commandOf(operation, schedule, notice)).change!;
  const whenAlready = decide({ status: to, ...unscheduled }, commandOf(operation, asSent, notice)).change;
  return { from, already: to, whenFrom, whenAlready, alreadyUnset: operation === 'PAUSE' ? ['ownPause'] : [] };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Subscription ids are UUIDs compared case-insensitively and stored lower-case. */
export function normaliseId(raw: string): string | undefined {
  return UUID.test(raw) ? raw.toLowerCase() : undefined;
}
