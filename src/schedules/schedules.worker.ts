/**
 * Applies due schedules, beside the bulk workers (docs/design.md §9): every poll interval it reads
 * the due subscriptions, earliest first, and applies them in chunks through SubscriptionsService,
 * each with a few round trips of conditional updates (due.store.ts `fire`). No job
 * per subscription: 100,000 schedules due in the same minute are 200 chunks. A schedule that fell due while no worker ran (the service
 * was stopped) is simply due at the next poll. A worker killed mid-chunk loses nothing: what it
 * did not write is still due, and what it wrote no longer is.
 */
import { nowTimestamp } from '../lib/clock.js';
import type { Logger } from '../logger.js';
import type { ClockReading, ScheduleClock } from '../clocks/schedule.clock.js';
import type { DueSubscription } from '../subscriptions/due.rules.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import { metrics } from '../observability/metrics.js';
import { inSpan } from '../observability/tracing.js';

/** Due subscriptions applied by one round trip of conditional updates, holding their mutex. */
export const SCHEDULE_CHUNK = 500;
/**
 * Due subscriptions read by one query, then applied a chunk at a time: a read's cost is mostly
 * fixed (all of it where no index serves the due query: docs/engine.md#the-figures-behind-the-workarounds),
 * so 3000 resumes due at once cost one read, not one per chunk.
 */
const DUE_READ = 5_000;
/** How often the subscriptions are read for due schedules whatever the clock says (schedule.clock.ts). */
const FULL_SWEEP_MS = 5 * 60_000;
/** Reads one poll makes at most before it waits again (a bound against a loop that keeps finding work). */
const READS_PER_POLL = 40;
/**
 * A poll woken for a pending time (wakeBy) starts at least this long after the poll before it
 * ended: a stream of distinct due times cannot turn the poll into a loop.
 */
const MIN_POLL_GAP_MS = 100;

export class ScheduleWorker {
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> = Promise.resolve();
  private running = false;
  /** When the subscriptions were last read whatever the clock said; 0: at the first poll. */
  private lastFullSweep = 0;
  private applying = false;
  private readonly idleListeners: (() => void)[] = [];
  /** When the timer set last fires (epoch ms); Infinity while a poll runs or the worker is stopped. */
  private nextPollAt = Infinity;
  private lastPollEnd = 0;
  /** The earliest pending time known to be ahead (epoch ms): the next poll comes at it, if sooner than the interval. */
  private upcoming: number | undefined;

  constructor(
    private readonly subscriptions: SubscriptionsService,
    /** When the next schedule falls due; undefined where the due query is served by an index (src/main/composition.ts). */
    private readonly clock: ScheduleClock | undefined,
    private readonly pollMs: number,
    log: Logger,
    /** Sends the live holds' due notices and releases those whose resumeAt has come, at every poll (src/holds/). */
    private readonly holds?: {
      releaseDue(now: string): Promise<number>;
      sendDueNotices(now: string): Promise<number>;
      finishUnstoredReleases(): Promise<number>;
      finishUnplacedHolds(): Promise<number>;
    },
  ) {
    this.log = log.child({ component: 'schedules' });
  }

  /** Whether due schedules are being applied: work that can wait (the events relay) waits, as for bulk chunks. */
  get busy(): boolean {
    return this.applying;
  }

  /** Called whenever due schedules stop being applied (see `busy`). */
  onIdle(listener: () => void): void {
    this.idleListeners.push(listener);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
    this.log.info({ pollMs: this.pollMs }, 'schedule workers started');
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.nextPollAt = Infinity;
    await this.polling;
  }

  /**
   * A pending time this process just wrote (subscriptions/pending-times.ts, after the write): the
   * poll comes at that time if it is sooner than the next one, so that a schedule falls due on
   * time, not up to a poll interval late. Times other processes write are seen at the next poll:
   * every worker waking at the same time would make them all read and apply the same
   * due subscriptions at once, writing most of them twice where conditional updates are not atomic
   * across processes (test/schedules/schedules-workers.test.ts; docs/engine.md#the-figures-behind-the-workarounds).
   */
  wakeBy(at: string): void {
    const due = Date.parse(at);
    if (!this.running || Number.isNaN(due) || due <= Date.now()) return;
    this.upcoming = Math.min(this.upcoming ?? Infinity, due);
    // While a poll runs, its end schedules the next (nextPollAt is Infinity then).
    if (this.nextPollAt !== Infinity && due < this.nextPollAt) {
      clearTimeout(this.timer);
      this.schedule(this.nextDelay());
    }
  }

  /**
   * The interval, or less when a pending time known to be ahead falls sooner: never sooner than
   * MIN_POLL_GAP_MS after the last poll, nor (with an interval shorter than that gap) later than
   * the interval would have polled.
   */
  private nextDelay(): number {
    const now = Date.now();
    if (this.upcoming === undefined) return this.pollMs;
    const gap = Math.min(MIN_POLL_GAP_MS, this.pollMs);
    // One millisecond on: the due query compares microsecond timestamps.
    return Math.min(this.pollMs, Math.max(this.upcoming - now + 1, this.lastPollEnd + gap - now, 0));
  }

  /** Its own timer, not lib/periodic.ts: the next poll moves earlier when a pending time falls sooner (wakeBy). */
  private schedule(delayMs: number): void {
    this.nextPollAt = Date.now() + delayMs;
    this.timer = setTimeout(() => {
      this.nextPollAt = Infinity;
      // A time this poll reaches is no longer ahead.
      if (this.upcoming !== undefined && this.upcoming <= Date.now()) this.upcoming = undefined;
      this.polling = this.poll()
        .then(() => undefined)
        .catch((error: unknown) => this.log.warn({ err: error }, 'schedule poll failed; retried at the next'))
        .finally(() => {
          this.lastPollEnd = Date.now();
          if (this.running) this.schedule(this.nextDelay());
        });
    }, delayMs);
  }

  /**
   * Applies every due schedule, a chunk at a time, when the clock says one is due (or at the
   * first poll and every FULL_SWEEP_MS), then sets the clock to the earliest time left; returns
   * how many subscriptions it changed.
   */
  async poll(): Promise<number> {
    // Holds are few, and their own index serves the read: every poll, whatever the schedule clock says.
    const noticed = (await this.holds?.sendDueNotices(nowTimestamp())) ?? 0;
    if (noticed > 0) this.log.info({ noticed }, "holds' resume notices sent");
    const released = (await this.holds?.releaseDue(nowTimestamp())) ?? 0;
    if (released > 0) this.log.info({ released }, 'holds released at their resumeAt');
    const finished = (await this.holds?.finishUnstoredReleases()) ?? 0;
    if (finished > 0) this.log.warn({ finished }, 'hold releases left without their request by a stopped process stored');
    const placed = (await this.holds?.finishUnplacedHolds()) ?? 0;
    if (placed > 0) this.log.warn({ placed }, 'holds left half placed by a stopped process placed');
    const clock = await this.clock?.read();
    const sweep = this.clock === undefined || Date.now() - this.lastFullSweep >= FULL_SWEEP_MS;
    if (!sweep && clock && (clock.at === undefined || clock.at > nowTimestamp())) return 0;
    if (sweep) this.lastFullSweep = Date.now();
    let changed = 0;
    try {
      for (let read = 0; read < READS_PER_POLL && this.running; read++) {
        // Read before the queries: a time noted after this (its write may have come after them too) changes the version, and the settle leaves it.
        const reading = read === 0 ? clock : await this.clock?.read();
        const due = await this.subscriptions.due(DUE_READ);
        if (due.length === 0) {
          await this.settle(reading);
          break;
        }
        this.applying = true;
        let applied = 0;
        for (let i = 0; i < due.length && this.running; i += SCHEDULE_CHUNK) {
          const chunk = due.slice(i, i + SCHEDULE_CHUNK);
          // A trace of its own per chunk of due changes, when tracing is on: their deliveries continue it.
          applied += await inSpan('scheduled changes', undefined, { 'subsvc.due': chunk.length }, () => this.apply(chunk));
        }
        // Nothing matched: all changed meanwhile; read them again at the next poll rather than now.
        if (applied === 0) break;
        changed += applied;
      }
    } finally {
      this.applying = false;
      this.idleListeners.forEach((listener) => listener());
    }
    return changed;
  }

  /** Sets the clock, where there is one, to the earliest time left. */
  private async settle(reading: ClockReading | undefined): Promise<void> {
    if (this.clock) await this.clock.settle(reading, await this.subscriptions.earliestScheduled());
  }

  private async apply(due: readonly DueSubscription[]): Promise<number> {
    const { groups, ours } = await this.subscriptions.fireDue(due);
    const merchants = new Map(due.map((d) => [d.id, d.merchantId]));
    for (const { state, ruling, ids } of groups) {
      if (ruling.outcome === 'corrected') continue;
      const transition = ruling.outcome === 'cancelled' ? 'cancelled' : ruling.due;
      // A due pause refused by the pause policy is skipped like one whose subscription was cancelled, with the rule as its reason.
      const skipped = ruling.outcome === 'cancelled' || ruling.outcome === 'refused';
      const outcome = skipped ? 'skipped' : ruling.outcome;
      const reason = ruling.breach ? { reason: ruling.breach.rule, detail: ruling.breach.detail } : {};
      const scheduledAt = { resume: state.resumeAt, notice: state.noticeAt, pause: state.pauseAt ?? state.resumeAt }[ruling.due ?? 'pause'];
      const msg =
        transition === 'cancelled'
          ? 'scheduled change skipped: cancelled'
          : ruling.breach
            ? `scheduled pause skipped: ${ruling.breach.rule}`
            : transition === 'notice'
              ? 'resume notice sent'
              : `scheduled ${transition} ${outcome}`;
      const lagSeconds = scheduledAt ? Math.max(0, (Date.now() - Date.parse(scheduledAt)) / 1000) : undefined;
      for (const subscriptionId of ids.filter((id) => ours.has(id))) {
        if (lagSeconds !== undefined) metrics()?.scheduleLag.observe(lagSeconds);
        this.log.info({ subscriptionId, merchantId: merchants.get(subscriptionId), transition, scheduledAt, outcome, ...reason }, msg);
      }
    }
    return ours.size;
  }
}
