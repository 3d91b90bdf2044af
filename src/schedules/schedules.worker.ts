/**
 * Applies due schedules, beside the bulk workers (docs/design.md §9): every poll interval it reads
 * the due subscriptions, earliest first, and applies them in chunks, each with a few round trips of
 * conditional updates (schedules.repository.ts). No job per subscription: 100,000 schedules due
 * in the same minute are 200 chunks. A schedule that fell due while no worker ran (the service
 * was stopped) is simply due at the next poll. A worker killed mid-chunk loses nothing: what it
 * did not write is still due, and what it wrote no longer is.
 */
import { randomUUID } from 'node:crypto';
import { ChangeNotifier } from '../lib/change-notifier.js';
import { nowTimestamp } from '../lib/clock.js';
import type { KeyedMutex } from '../lib/keyed-mutex.js';
import type { Logger } from '../logger.js';
import { metrics } from '../observability/metrics.js';
import { inSpan } from '../observability/tracing.js';
import { byMerchantOf } from '../events/events.repository.js';
import { planFiring, type Firing } from './schedule.rules.js';
import type { DueSubscription, FiringGroup, SchedulesRepository } from './schedules.repository.js';

/** Due subscriptions applied by one round trip of conditional updates, holding their mutex. */
export const SCHEDULE_CHUNK = 500;
/**
 * Due subscriptions read by one query, then applied a chunk at a time. FerretDB serves the query
 * from no index (it reads every subscription and sorts in Go: about 0.65 s at 3000), so reading a
 * chunk at a time cost that much per chunk; 3000 resumes due at once now cost one read.
 */
const DUE_READ = 5_000;
/** How often the subscriptions are read for due schedules whatever the clock says (schedule.clock.ts). */
const FULL_SWEEP_MS = 5 * 60_000;
/** Reads one poll makes at most before it waits again (a bound against a loop that keeps finding work). */
const READS_PER_POLL = 40;

/** Subscriptions of one merchant read in the same state and due for the same firing share one conditional update. */
function grouped(due: readonly DueSubscription[], now: string): FiringGroup[] {
  const groups = new Map<string, { merchantId: string; state: DueSubscription; firing: Firing; ids: string[] }>();
  for (const subscription of due) {
    const { merchantId, status, pauseAt, resumeAt, nextScheduledAt } = subscription;
    const key = JSON.stringify([merchantId, status, pauseAt, resumeAt, nextScheduledAt]);
    const group = groups.get(key) ?? { merchantId, state: subscription, firing: planFiring(subscription, now), ids: [] };
    group.ids.push(subscription.id);
    groups.set(key, group);
  }
  return [...groups.values()];
}

export class ScheduleWorker {
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> = Promise.resolve();
  private running = false;
  /** When the subscriptions were last read whatever the clock said; 0: at the first poll. */
  private lastFullSweep = 0;
  /** Told the ids whose status a due schedule changed, as SubscriptionsService's are. */
  readonly changes = new ChangeNotifier();
  private applying = false;

  constructor(
    private readonly repository: SchedulesRepository,
    /** The process's per-subscription mutex, shared with requests and bulk workers. */
    private readonly mutex: KeyedMutex,
    private readonly pollMs: number,
    log: Logger,
  ) {
    this.log = log.child({ component: 'schedules' });
  }

  /** Whether due schedules are being applied: work that can wait (the events relay) waits, as for bulk chunks. */
  get busy(): boolean {
    return this.applying;
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
    await this.polling;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.polling = this.poll()
        .then(() => undefined)
        .catch((error: unknown) => this.log.warn({ err: error }, 'schedule poll failed; retried at the next'))
        .finally(() => {
          if (this.running) this.schedule(this.pollMs);
        });
    }, delayMs);
  }

  /**
   * Applies every due schedule, a chunk at a time, when the clock says one is due (or at the
   * first poll and every FULL_SWEEP_MS), then sets the clock to the earliest time left; returns
   * how many subscriptions it changed.
   */
  async poll(): Promise<number> {
    const clock = await this.repository.clock.read();
    const sweep = Date.now() - this.lastFullSweep >= FULL_SWEEP_MS;
    if (!sweep && clock && (clock.at === undefined || clock.at > nowTimestamp())) return 0;
    if (sweep) this.lastFullSweep = Date.now();
    let changed = 0;
    try {
      for (let read = 0; read < READS_PER_POLL && this.running; read++) {
        // Read before the queries: a time noted after this (its write may have come after them too) changes the version, and the settle leaves it.
        const reading = read === 0 ? clock : await this.repository.clock.read();
        const due = await this.repository.due(nowTimestamp(), DUE_READ);
        if (due.length === 0) {
          await this.repository.clock.settle(reading, await this.repository.earliest());
          break;
        }
        this.applying = true;
        let applied = 0;
        for (let i = 0; i < due.length && this.running; i += SCHEDULE_CHUNK) {
          const chunk = due.slice(i, i + SCHEDULE_CHUNK);
          applied += await this.mutex.runAll(
            chunk.map((d) => d.id),
            // A trace of its own per chunk of due changes, when tracing is on: their deliveries continue it.
            () => inSpan('scheduled changes', undefined, { 'subsvc.due': chunk.length }, () => this.apply(chunk)),
          );
        }
        // Nothing matched: all changed meanwhile; read them again at the next poll rather than now.
        if (applied === 0) break;
        changed += applied;
      }
    } finally {
      this.applying = false;
    }
    return changed;
  }

  private async apply(due: readonly DueSubscription[]): Promise<number> {
    const groups = grouped(due, nowTimestamp());
    const ours = await this.repository.fire(groups, randomUUID(), nowTimestamp());
    const merchants = new Map(due.map((d) => [d.id, d.merchantId]));
    const moved = groups.filter((g) => g.firing.change.status !== g.state.status).flatMap((g) => g.ids.filter((id) => ours.has(id)));
    for (const [merchantId, ids] of byMerchantOf(new Map(moved.map((id) => [id, merchants.get(id)!])))) this.changes.notify(merchantId, ids);
    for (const { state, firing, ids } of groups) {
      if (!firing.outcome) continue;
      const scheduledAt = firing.kind === 'resume' ? state.resumeAt : (state.pauseAt ?? state.resumeAt);
      const msg = firing.kind === 'cancelled' ? 'scheduled change skipped: cancelled' : `scheduled ${firing.kind} ${firing.outcome}`;
      const lagSeconds = scheduledAt ? Math.max(0, (Date.now() - Date.parse(scheduledAt)) / 1000) : undefined;
      for (const subscriptionId of ids.filter((id) => ours.has(id))) {
        if (lagSeconds !== undefined) metrics()?.scheduleLag.observe(lagSeconds);
        this.log.info({ subscriptionId, merchantId: merchants.get(subscriptionId), transition: firing.kind, scheduledAt, outcome: firing.outcome }, msg);
      }
    }
    return ours.size;
  }
}
