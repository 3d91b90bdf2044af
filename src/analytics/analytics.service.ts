/**
 * The analytics operations (docs/analytics.md): pauses by period, reason, cause or plan, kept from
 * the events as they are recorded (PauseHistory), and the resumes of the coming days, read from the
 * subscriptions and holds as they stand. Each mode is its own merchant id, so a test key's figures
 * are its own; its "today" is its test clock's.
 */
import type { Clock } from '../lib/clock.js';
import type { EventRecorder } from '../events/events.relay.js';
import type { Event } from '../events/event.payload.js';
import { livemodeOf } from '../merchants/livemode.js';
import { InvalidAnalyticsRangeError } from './analytics.errors.js';
import { addDays, causeKindOf, daysBetween, figuresOf, resumeOf, type PauseGroupBy, type ResumeState } from './analytics.rules.js';
import type { PauseHistoryRepository, PauseStep } from './pause-history.repository.js';

/** The longest range a pause analytics read covers, in days between `from` and `to`. */
const MAX_RANGE_DAYS = 366;
const DEFAULT_RANGE_DAYS = 90;

interface EventData {
  readonly subscription?: { readonly id: string; readonly planId: string; readonly pauseReason?: string };
  readonly cause?: { readonly kind?: string };
  readonly previousStatus?: string;
}

/** The pauses an event batch starts and ends, in order (a cancellation ends one only if it was paused). */
export function pauseSteps(events: readonly Event[]): PauseStep[] {
  return events.flatMap((event): PauseStep[] => {
    const data = event.data as EventData;
    const subscription = data.subscription;
    if (!subscription) return [];
    const common = { eventId: event.id, subscriptionId: subscription.id, at: event.createdAt };
    switch (event.type as string) {
      case 'subscription.paused': {
        const reason = subscription.pauseReason?.trim();
        return [{ start: { ...common, reason: reason ? reason : null, cause: causeKindOf(data.cause), planId: subscription.planId } }];
      }
      case 'subscription.resumed':
        return [{ end: { ...common, by: causeKindOf(data.cause) } }];
      case 'subscription.cancelled':
        return data.previousStatus === 'paused' ? [{ end: { ...common, by: 'cancelled' } }] : [];
      default:
        return [];
    }
  });
}

/** Records each batch of events into the pause history: what the relay tells (EventRecorder). */
export class PauseHistoryRecorder implements EventRecorder {
  constructor(private readonly history: PauseHistoryRepository) {}

  async record(merchantId: string, events: readonly Event[]): Promise<void> {
    const steps = pauseSteps(events);
    if (steps.length > 0) await this.history.record(merchantId, steps);
  }
}

export interface PauseQuery {
  readonly from?: string;
  readonly to?: string;
  readonly groupBy?: PauseGroupBy;
}

/** The subscriptions that may resume, and the holds' resume times: what the forecast reads. */
export interface ResumeSources {
  resumeCandidates(merchantId: string, until: string): Promise<readonly (ResumeState & { readonly planId: string })[]>;
  holdResumeTimes(merchantId: string): Promise<ReadonlyMap<string, string>>;
}

export class AnalyticsService {
  constructor(
    private readonly history: PauseHistoryRepository,
    private readonly sources: ResumeSources,
    private readonly clockOf: (merchantId: string) => Promise<Clock>,
  ) {}

  async pauses(merchantId: string, query: PauseQuery) {
    const today = (await this.clockOf(merchantId)).timestamp().slice(0, 10);
    const to = query.to ?? today;
    const from = query.from ?? addDays(to, -(DEFAULT_RANGE_DAYS - 1));
    if (from > to) throw new InvalidAnalyticsRangeError('from', 'must not be after to');
    if (daysBetween(from, to) > MAX_RANGE_DAYS)
      throw new InvalidAnalyticsRangeError('from', `must be at most ${MAX_RANGE_DAYS} days before to`);
    const groupBy = query.groupBy ?? 'month';
    const livemode = livemodeOf(merchantId);
    const data = figuresOf(groupBy, await this.history.daysBetween(merchantId, from, to)).map((row) => ({ ...row, livemode }));
    return { data, from, to, groupBy, livemode };
  }

  async resumes(merchantId: string, query: { readonly days?: number; readonly groupBy?: 'day' | 'planId' }) {
    const asOf = (await this.clockOf(merchantId)).timestamp();
    const days = query.days ?? 30;
    const groupBy = query.groupBy ?? 'day';
    const today = asOf.slice(0, 10);
    const last = addDays(today, days - 1);
    const [candidates, holds] = await Promise.all([
      this.sources.resumeCandidates(merchantId, `${last}T23:59:59.999999Z`),
      this.sources.holdResumeTimes(merchantId),
    ]);
    const livemode = livemodeOf(merchantId);
    const rows = new Map<string, { key: string; scheduledResumes: number; holdResumes: number; livemode: boolean }>();
    for (const candidate of candidates) {
      const resume = resumeOf(candidate, holds);
      if (!resume) continue;
      // A resume already due is the workers' next step: it falls today.
      const day = resume.at < asOf ? today : resume.at.slice(0, 10);
      if (day > last) continue;
      const key = groupBy === 'day' ? day : candidate.planId;
      const row = rows.get(key) ?? { key, scheduledResumes: 0, holdResumes: 0, livemode };
      if (resume.by === 'hold') row.holdResumes += 1;
      else row.scheduledResumes += 1;
      rows.set(key, row);
    }
    const data = [...rows.values()].sort((a, b) => a.key.localeCompare(b.key));
    return { data, asOf, days, groupBy, livemode };
  }
}
