/**
 * A merchant's test mode (docs/partners.md): fixtures made and removed through the API, and a
 * clock that moves forward on request, applying the test mode's due schedules as it passes them.
 * A test mode is a tenant of its own (src/merchants/livemode.ts), so everything else it does is the
 * live code scoped to its id; only its time is its clock's (src/clocks/).
 */
import { InvalidRequestError } from '../errors.js';
import { TestClockMovedError, TestModeOnlyError } from './test-mode.errors.js';
import { formatTimestamp, nowTimestamp, parseRfc3339 } from '../lib/clock.js';
import { livemodeOf } from '../merchants/livemode.js';
import { RETRY } from '../retry-policies.js';
import { untilSettled } from '../lib/retry.js';
import { requestedTimestamp } from '../subscriptions/schedule.request.js';
import type { SubscriptionSeeder } from '../subscriptions/subscriptions.seed.js';
import type { Subscription, SubscriptionStatus } from '../subscriptions/subscriptions.rules.js';
import type { SubscriptionsService, TimeOf } from '../subscriptions/subscriptions.service.js';
import { timeOfMerchants } from '../clocks/merchant-clocks.js';
import type { TestClocksRepository } from '../clocks/test-clocks.repository.js';
import type { TestModeResetRepository } from './test-mode-reset.repository.js';
import type { HoldsService } from '../holds/holds.service.js';

/** How far one advance may move the clock. */
const MAX_ADVANCE_YEARS = 2;
/** Due subscriptions read at a time while advancing. */
const DUE_READ = 500;
/** Due reads in a row that find nothing of theirs to apply before an advance stops reading. */
const IDLE_READS = 3;

/** The test helpers take test keys only: a live key is refused, with nothing done. */
export function testModeOnly(merchantId: string): string {
  if (livemodeOf(merchantId)) throw new TestModeOnlyError('The test helpers take a test key (sk_test_...); this key is live.');
  return merchantId;
}

export interface Fixtures {
  readonly count: number;
  readonly status?: SubscriptionStatus;
  readonly planId?: string;
  readonly createdAt?: string;
}

/**
 * Records the events that changes of these subscriptions (id → merchant) left in their outboxes,
 * and makes the first attempt of their webhook deliveries (the events relay).
 */
export type RelayNow = (ids: ReadonlyMap<string, string>) => Promise<unknown>;

function invalidTo(detail: string, message: string): InvalidRequestError {
  return new InvalidRequestError(detail, [{ path: '/to', message }]);
}

/** `to` was valid against the clock the advance read, but another advance moved the clock on first. */
function clockMoved(now: string | undefined, to: string): TestClockMovedError {
  const detail =
    now !== undefined && now >= to
      ? `Another advance moved the test clock to ${now} first; ${to} is no longer after it.`
      : 'Other advances kept moving the test clock under this one; read the clock and advance again.';
  return new TestClockMovedError(detail);
}

/** The checks of `to` against the clock's time as the advance read it (400 0040). */
function checkAdvance(from: string, to: string): void {
  if (to <= from) throw invalidTo(`to must be after the test clock's time (${from}).`, "must be after the test clock's time");
  const limit = new Date(Date.parse(from));
  limit.setUTCFullYear(limit.getUTCFullYear() + MAX_ADVANCE_YEARS);
  if (Date.parse(to) > limit.getTime())
    throw invalidTo(
      `to may be at most ${MAX_ADVANCE_YEARS} years after the test clock's time (${from}).`,
      `must be at most ${MAX_ADVANCE_YEARS} years after the test clock's time`,
    );
}

export class TestModeService {
  private readonly timeOf: TimeOf;

  constructor(
    private readonly clocks: TestClocksRepository,
    private readonly subscriptions: SubscriptionsService,
    private readonly stores: { readonly testModeReset: Pick<TestModeResetRepository, 'empty'> },
    private readonly seeder: SubscriptionSeeder,
    private readonly relayNow: RelayNow,
    /** Sends the notices and releases the holds whose times an advance reaches (src/holds/). */
    private readonly holds?: Pick<HoldsService, 'releaseFirstDueOf' | 'sendDueNoticesOf' | 'dispatch'>,
  ) {
    this.timeOf = timeOfMerchants(clocks);
  }

  async now(merchantId: string): Promise<string> {
    return this.timeOf(testModeOnly(merchantId));
  }

  async createSubscriptions(merchantId: string, { count, status, planId, createdAt }: Fixtures): Promise<Subscription[]> {
    const at = createdAt === undefined ? await this.now(merchantId) : requestedTimestamp('/createdAt', createdAt);
    return this.seeder.seed({
      merchantId: testModeOnly(merchantId),
      count,
      status: status ?? 'fulfilled',
      createdAt: at,
      ...(planId ? { planId: planId.toLowerCase() } : {}),
    });
  }

  /** Empties the test mode of everything it made (src/test-mode/test-mode-reset.repository.ts): how many, by kind. */
  reset(merchantId: string): Promise<Record<string, number>> {
    return this.stores.testModeReset.empty(testModeOnly(merchantId));
  }

  deleteSubscriptions(merchantId: string): Promise<number> {
    return this.subscriptions.removeAllOf(testModeOnly(merchantId));
  }

  /**
   * Moves the clock to `to` first (so that a request meanwhile already sees it), then applies
   * every schedule due by `to`, earliest first, each stamped with its own time; then records
   * their events and makes the first attempt of each of their webhooks. An advance that stops
   * half way (a process killed) leaves the rest due: the next advance applies them, at their own
   * times. The clock only ever moves forward by a conditional move from the time read, so it never
   * stands behind an advance answered 200, and nothing an advance stamps is after it; an advance
   * that another one overtook answers 409 0036.
   */
  async advance(merchantId: string, rawTo: string): Promise<{ now: string; appliedCount: number }> {
    const to = requestedTimestamp('/to', rawTo);
    let read = await this.clocks.timeOf(testModeOnly(merchantId));
    checkAdvance(read ?? nowTimestamp(), to);
    // Each failed move means another advance moved the clock forward: moved again from there, unless it passed `to`.
    const moved = await untilSettled(RETRY.testClockMove, async () => {
      if (await this.clocks.move(merchantId, read, to)) return true;
      read = await this.clocks.timeOf(merchantId);
      return read !== undefined && read >= to ? false : undefined;
    });
    if (!moved) throw clockMoved(read, to);
    const appliedCount = await this.applyDue(merchantId, to);
    const noticed = (await this.holds?.sendDueNoticesOf(merchantId, to)) ?? [];
    if (noticed.length > 0) await this.relayNow(new Map(noticed.map((id) => [id, merchantId])));
    return { now: to, appliedCount };
  }

  /**
   * Applies the test mode's schedules and hold releases due by `to` in time order, then records
   * their events and sends their webhooks: how many changed. A hold is released after the
   * schedules due at its resumeAt, before those after it: what its release resumes depends on the
   * first, and the second on the release.
   */
  private async applyDue(merchantId: string, to: string): Promise<number> {
    const changed = new Map<string, string>();
    let applied = 0;
    let relayed = false;
    try {
      for (let idle = 0; idle < IDLE_READS;) {
        const due = await this.subscriptions.dueOf(merchantId, to, DUE_READ);
        const next = due[0]?.nextScheduledAt;
        // A hold whose resumeAt is before the next schedule's time goes first.
        const released = await this.releaseFirstHold(merchantId, next === undefined ? to : formatTimestamp(parseRfc3339(next)! - 1n));
        if (released !== undefined) {
          for (const id of released.changed) changed.set(id, merchantId);
          applied += released.applied;
          continue;
        }
        if (due.length === 0) break;
        // Only the earliest time at once: a schedule it applies may leave a later one due (a resume after a pause).
        const at = due[0]!.nextScheduledAt;
        const { ours } = await this.subscriptions.fireDue(
          due.filter((d) => d.nextScheduledAt === at),
          at,
          { relayedByCaller: true },
        );
        for (const id of ours) changed.set(id, merchantId);
        applied += ours.size;
        // None of ours: changed meanwhile (a request, another advance); read again, a few times at most.
        idle = ours.size === 0 ? idle + 1 : 0;
      }
      if (changed.size > 0) await this.relayNow(changed);
      relayed = true;
    } finally {
      // An advance that fails part way leaves what it changed to the events relay, which retries (and its sweep after it).
      if (!relayed && changed.size > 0) this.subscriptions.changes.notify(merchantId, [...changed.keys()]);
    }
    return applied;
  }

  /**
   * Releases the earliest hold due by `upTo` at its resumeAt, applying its resumes at that time
   * before its request goes to the bulk workers (which find them applied and record them): what
   * it changed and how many it resumed, or undefined when none is due.
   */
  private async releaseFirstHold(merchantId: string, upTo: string): Promise<{ changed: string[]; applied: number } | undefined> {
    const release = await this.holds?.releaseFirstDueOf(merchantId, upTo);
    if (release === undefined) return undefined;
    const { holdId, at, requestId, covered, noticed } = release;
    if (requestId === undefined) return { changed: [...noticed], applied: 0 };
    const cause = { kind: 'hold', holdId, requestId } as const;
    const outcomes = await this.subscriptions.holdCommands.apply({ merchantId, ids: covered, requestId, cause, at }, 'RESUME');
    this.holds!.dispatch(merchantId, requestId);
    const resumed = [...outcomes].filter(([, o]) => o.outcome === 'applied').map(([id]) => id);
    return { changed: [...noticed, ...resumed], applied: resumed.length };
  }
}
