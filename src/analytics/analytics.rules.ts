/**
 * What the analytics figures mean (docs/analytics.md), apart from MongoDB: who a change's cause
 * counts as, the group a pause falls in, the figures of a group from its pauses, and the day a
 * subscription will resume as things stand. The store keeps each day's pauses in cells (one per
 * reason, cause and plan); every figure here adds cells up, so a day is read whole or not at all.
 */

/** Who paused or resumed, as the figures group them. */
export type CauseKind = 'merchant' | 'schedule' | 'hold' | 'customer' | 'billing';
export const CAUSE_KINDS: readonly CauseKind[] = ['merchant', 'schedule', 'hold', 'customer', 'billing'];

export type PauseGroupBy = 'day' | 'week' | 'month' | 'reason' | 'cause' | 'planId';

/**
 * The kind of an event's `cause`: an API key's request, single or bulk (an undo and a test trigger
 * too), is the merchant's; the portal is the customer's; a due schedule, a hold and a billing
 * system are their own.
 */
export function causeKindOf(cause: { readonly kind?: string } | undefined): CauseKind {
  switch (cause?.kind) {
    case 'schedule':
      return 'schedule';
    case 'hold':
      return 'hold';
    case 'portal':
      return 'customer';
    case 'billing':
      return 'billing';
    default:
      return 'merchant';
  }
}

/** How a pause ended: resumed by one of the kinds, or the subscription was cancelled while paused. */
export type PauseEnd = CauseKind | 'cancelled';

/** One pause, from its `subscription.paused` event to the event that ended it, if any. */
export interface Pause {
  /** The UTC day it started, `YYYY-MM-DD`. */
  readonly day: string;
  readonly startedAt: string;
  readonly reason: string | null;
  readonly cause: CauseKind;
  readonly planId: string;
  readonly endedAt?: string;
  readonly endedBy?: PauseEnd;
}

/** The pauses of one day that share a reason, a cause and a plan, added up. */
export interface Cell {
  readonly reason: string | null;
  readonly cause: CauseKind;
  readonly planId: string;
  readonly started: number;
  readonly resumedBy: Readonly<Record<CauseKind, number>>;
  readonly cancelled: number;
  /** The ended pauses' durations in tenths of a day (as a string key) and how many lasted that long. */
  readonly tenths: Readonly<Record<string, number>>;
}

const DAY_MS = 86_400_000;

/** The UTC day `days` after `day` (before it when negative), both `YYYY-MM-DD`. */
export const addDays = (day: string, days: number): string =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/** How many days `to` is after `from`, both `YYYY-MM-DD`. */
export const daysBetween = (from: string, to: string): number =>
  Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);

/** A duration in tenths of a day, rounded to the nearest tenth: what the figures show, one decimal. */
export function tenthsOfDay(from: string, to: string): number {
  return Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / (DAY_MS / 10)));
}

const noResumes = (): Record<CauseKind, number> => ({ merchant: 0, schedule: 0, hold: 0, customer: 0, billing: 0 });

/** A day's cells from its pauses. */
export function cellsOf(pauses: readonly Pause[]): Cell[] {
  const cells = new Map<
    string,
    { -readonly [K in keyof Cell]: Cell[K] } & { resumedBy: Record<CauseKind, number>; tenths: Record<string, number> }
  >();
  for (const pause of pauses) {
    const key = JSON.stringify([pause.reason ?? null, pause.cause, pause.planId]);
    let cell = cells.get(key);
    if (!cell) {
      cell = {
        reason: pause.reason ?? null,
        cause: pause.cause,
        planId: pause.planId,
        started: 0,
        resumedBy: noResumes(),
        cancelled: 0,
        tenths: {},
      };
      cells.set(key, cell);
    }
    cell.started += 1;
    if (pause.endedBy === undefined || pause.endedAt === undefined) continue;
    if (pause.endedBy === 'cancelled') cell.cancelled += 1;
    else cell.resumedBy[pause.endedBy] += 1;
    const tenths = String(tenthsOfDay(pause.startedAt, pause.endedAt));
    cell.tenths[tenths] = (cell.tenths[tenths] ?? 0) + 1;
  }
  return [...cells.values()];
}

/** ISO 8601 week of a UTC day, `YYYY-Www`: weeks start on Monday, and week 1 holds the year's first Thursday. */
export function isoWeekOf(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  const weekday = (date.getUTCDay() + 6) % 7;
  const thursday = new Date(date.getTime() + (3 - weekday) * DAY_MS);
  const year = thursday.getUTCFullYear();
  const week = 1 + Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * DAY_MS));
  return `${year}-W${String(week).padStart(2, '0')}`;
}

/** The group of a day's cell. */
export function groupKeyOf(groupBy: PauseGroupBy, day: string, cell: Cell): string | null {
  switch (groupBy) {
    case 'day':
      return day;
    case 'week':
      return isoWeekOf(day);
    case 'month':
      return day.slice(0, 7);
    case 'reason':
      // No reason is null, however a store hands it back (a null field may come back absent).
      return cell.reason ?? null;
    case 'cause':
      return cell.cause;
    case 'planId':
      return cell.planId;
  }
}

export interface PauseFigures {
  readonly key: string | null;
  readonly pausesStarted: number;
  readonly resumed: number;
  readonly resumedBy: Readonly<Record<CauseKind, number>>;
  readonly cancelledWhilePaused: number;
  readonly stillPaused: number;
  readonly resumeRate: number | null;
  readonly medianPauseDays: number | null;
  readonly p90PauseDays: number | null;
}

/** The value at a rank (nearest rank: the smallest value with at least `share` of all at or below it). */
function nearestRank(tenths: ReadonlyMap<number, number>, count: number, share: number): number | null {
  if (count === 0) return null;
  const rank = Math.max(1, Math.ceil(share * count));
  let seen = 0;
  for (const [value, n] of [...tenths].sort(([a], [b]) => a - b)) {
    seen += n;
    if (seen >= rank) return value / 10;
  }
  return null;
}

/** Each group's figures from the cells of the days asked for; time groups in time order, the others by pauses started, most first. */
export function figuresOf(
  groupBy: PauseGroupBy,
  days: readonly { readonly day: string; readonly cells: readonly Cell[] }[],
): PauseFigures[] {
  const groups = new Map<
    string | null,
    { started: number; resumedBy: Record<CauseKind, number>; cancelled: number; tenths: Map<number, number> }
  >();
  for (const { day, cells } of days)
    for (const cell of cells) {
      const key = groupKeyOf(groupBy, day, cell);
      let group = groups.get(key);
      if (!group) groups.set(key, (group = { started: 0, resumedBy: noResumes(), cancelled: 0, tenths: new Map() }));
      group.started += cell.started;
      group.cancelled += cell.cancelled;
      for (const kind of CAUSE_KINDS) group.resumedBy[kind] += cell.resumedBy[kind];
      for (const [tenths, n] of Object.entries(cell.tenths)) group.tenths.set(Number(tenths), (group.tenths.get(Number(tenths)) ?? 0) + n);
    }
  const figures = [...groups].map(([key, group]): PauseFigures => {
    const resumed = CAUSE_KINDS.reduce((sum, kind) => sum + group.resumedBy[kind], 0);
    const ended = resumed + group.cancelled;
    return {
      key,
      pausesStarted: group.started,
      resumed,
      resumedBy: group.resumedBy,
      cancelledWhilePaused: group.cancelled,
      stillPaused: group.started - ended,
      resumeRate: ended === 0 ? null : Math.round((resumed / ended) * 10_000) / 10_000,
      medianPauseDays: nearestRank(group.tenths, ended, 0.5),
      p90PauseDays: nearestRank(group.tenths, ended, 0.9),
    };
  });
  const timeOrdered = groupBy === 'day' || groupBy === 'week' || groupBy === 'month';
  return figures.sort((a, b) =>
    timeOrdered
      ? String(a.key).localeCompare(String(b.key))
      : b.pausesStarted - a.pausesStarted || String(a.key).localeCompare(String(b.key)),
  );
}

/** What the resume forecast reads of a subscription, as stored (absent rather than null). */
export interface ResumeState {
  readonly status: string;
  readonly ownPause?: false | undefined;
  readonly holdIds?: readonly string[] | undefined;
  readonly pauseAt?: string | undefined;
  readonly resumeAt?: string | undefined;
}

/**
 * When the subscription will resume as things stand, and what resumes it, or undefined when
 * nothing will (cancelled, or a pause or hold without an end). As holders.rules.ts has it: it stays
 * paused while any holder keeps it so (each of its holds until that hold's `resumeAt`, its own pause,
 * started or due by then, until its own `resumeAt`), and resumes when the last holder ends: by
 * the hold when a hold's release is last, else by its own scheduled resume.
 */
export function resumeOf(
  state: ResumeState,
  holdResumeAt: ReadonlyMap<string, string>,
): { at: string; by: 'schedule' | 'hold' } | undefined {
  if (state.status === 'cancelled') return undefined;
  const holds = state.holdIds ?? [];
  const ownStarted = (at: string) =>
    (state.status === 'paused' && state.ownPause !== false) || (state.pauseAt !== undefined && state.pauseAt <= at);
  if (holds.length === 0) {
    const pausedUntilResume = state.status === 'paused' || state.pauseAt !== undefined;
    return pausedUntilResume && state.resumeAt !== undefined ? { at: state.resumeAt, by: 'schedule' } : undefined;
  }
  const ends = holds.map((id) => holdResumeAt.get(id));
  if (ends.some((at) => at === undefined)) return undefined;
  const released = (ends as string[]).reduce((latest, at) => (at > latest ? at : latest));
  if (!ownStarted(released)) return { at: released, by: 'hold' };
  if (state.resumeAt === undefined) return undefined;
  return state.resumeAt > released ? { at: state.resumeAt, by: 'schedule' } : { at: released, by: 'hold' };
}
