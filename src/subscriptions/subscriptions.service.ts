/**
 * Every change of a subscription, whatever starts it: the HTTP handlers (pause, resume, dropping a
 * schedule), the bulk workers (bulk commands) and the schedule workers (due schedules). Each is
 * decided by the one table of rules (subscriptions.rules.ts) and written by the store of what it
 * changes (subscriptions.store.ts, bulk-commands.store.ts, due.store.ts). Business rules only: the request's shape was checked at the edge.
 */
import { randomUUID } from 'node:crypto';
import { ChangeNotifier } from './change-notifier.js';
import { nowTimestamp, REAL_CLOCK, type Clock } from '../lib/clock.js';
import type { PerKeyQueue } from '../lib/keyed-mutex.js';
import type { Page, PageRequest } from '../lib/pagination.js';
import { RETRY } from '../retry-policies.js';
import { untilSettled } from '../lib/retry.js';
import type { HolderState } from './holders.rules.js';
import type { ScheduleRequest } from './schedule.request.js';
import type { SingleCommand, WriteCommand } from './command.js';
import { HoldCommands } from './hold-commands.js';
import { byMerchantOf } from '../merchants/by-merchant.js';
import { commandOutcome, type CommandOutcome } from './bulk-commands.rules.js';
import type { TogetherCommand } from './bulk-commands.store.js';
import { firingGroups, type DueSubscription, type FiringGroup } from './due.rules.js';
import type { NoticeTerms } from './notice.rules.js';
import type { PendingEvents } from './outbox.js';
import type { SubscriptionStores } from './subscription.stores.js';
import {
  isPolicyOff,
  NO_PAUSE_POLICIES,
  NO_PAUSE_POLICY,
  pauseVerdict,
  withPolicyResumeAt,
  type PausePolicy,
  type PausePolicySource,
} from '../pause-policy/pause-policy.rules.js';
import { InvalidTransitionError, SubscriptionNotFoundError } from './subscriptions.errors.js';
import { PausePolicyError } from '../pause-policy/pause-policy.errors.js';
import {
  commandOf,
  decide,
  normaliseId,
  planCommand,
  type ChangeCause,
  type CommandPlan,
  type Operation,
  type Subscription,
  type SubscriptionStatus,
} from './subscriptions.rules.js';

/** The time of a merchant's data. */
export type TimeOf = (merchantId: string) => string | Promise<string>;

/** A merchant's clock for one request (the constructor's `clockOf`; src/lib/clock.ts). */
export type ClockOf = (merchantId: string) => Clock | Promise<Clock>;

const realClock: ClockOf = () => REAL_CLOCK;

/** A concurrent writer can flip the status between our update and our read; retry that many times. */
const MAX_ATTEMPTS = RETRY.concurrentWriter.attempts;

/** The reason of a command that a concurrent writer kept from resolving: worth retrying later. */
export const KEPT_CHANGING = 'status kept changing';

/** What the rules read of a subscription as the API shows it. */
function ruleStateOf(subscription: Subscription) {
  return {
    status: subscription.status,
    pauseAt: subscription.schedule?.pauseAt ?? null,
    resumeAt: subscription.schedule?.resumeAt ?? null,
  };
}

/** How a single change is applied (`apply`): the pause's schedule, its cause, the request's clock, a policy in place of the merchant's. */
export interface ApplyOptions {
  readonly schedule?: ScheduleRequest | undefined;
  readonly cause?: ChangeCause;
  readonly clock?: Clock;
  readonly policyInstead?: PausePolicy;
}

/**
 * A bulk command's part (a chunk): the request's schedule and cause (absent: `bulk` of the
 * request), the outcomes settled already (applyTogether's) and an undo's `unchangedSince`.
 */
export interface BulkCommand {
  readonly merchantId: string;
  readonly ids: readonly string[];
  readonly requestId: string;
  readonly schedule?: ScheduleRequest | undefined;
  readonly cause?: ChangeCause;
  readonly settled?: ReadonlyMap<string, CommandOutcome>;
  readonly unchangedSince?: string | undefined;
}

/** What applying due schedules did: the groups as ruled, and which of their ids this call changed. */
export interface Firings {
  readonly groups: readonly FiringGroup[];
  readonly ours: ReadonlySet<string>;
}

export class SubscriptionsService {
  /** Told after every change that records events (of status or of schedule): the events relay (src/events/) listens here. */
  readonly changes = new ChangeNotifier<PendingEvents>();
  /** A hold's bulk commands, decided by each subscription's holders (src/holds/); a test clock's advance applies a release at its time. */
  readonly holdCommands: HoldCommands;

  constructor(
    private readonly stores: Pick<SubscriptionStores, 'subscriptions' | 'bulkCommands' | 'due' | 'holders'>,
    /**
     * Shared by every service instance of a process that changes subscriptions (requests and
     * workers): a KeyedMutex where the server's conditional update is not atomic, else UNQUEUED
     * (decided by the composition root, src/db/workarounds.ts).
     */
    private readonly mutex: PerKeyQueue,
    /** Each merchant's pause policy (src/pause-policy/); without one, every policy is off. */
    private readonly policies: PausePolicySource = NO_PAUSE_POLICIES,
    /**
     * The clock of the merchant's data: the real time for live data, the test clock's for a test
     * mode (src/test-mode/, docs/partners.md); changes are stamped with it. Asked once per
     * request or command (in test mode it reads the test clock's store).
     */
    private readonly clockOf: ClockOf = realClock,
  ) {
    const timeOf = async (merchantId: string) => (await clockOf(merchantId)).timestamp();
    const keptChanging = { outcome: 'failed', reason: KEPT_CHANGING } as const;
    this.holdCommands = new HoldCommands({ holders: stores.holders, mutex, timeOf, changes: this.changes, keptChanging });
  }

  /** The merchant's clock for one request: a request's schedule is checked against it, and handed back to `apply`. */
  async clock(merchantId: string): Promise<Clock> {
    return this.clockOf(merchantId);
  }

  async get(merchantId: string, rawId: string): Promise<Subscription> {
    const id = normaliseId(rawId);
    const found = id === undefined ? undefined : await this.stores.subscriptions.find(merchantId, id);
    if (!found) throw new SubscriptionNotFoundError(rawId);
    return found;
  }

  /** The subscriptions that may resume by `until`, as the holders' rules read them: what the resume forecast counts. */
  resumeCandidates(merchantId: string, until: string): Promise<(HolderState & { readonly planId: string })[]> {
    return this.stores.subscriptions.resumeCandidates(merchantId, until);
  }

  list(merchantId: string, status: SubscriptionStatus | undefined, page: PageRequest): Promise<Page<Subscription>> {
    return this.stores.subscriptions.page(merchantId, status, { ...page, startingAfter: page.startingAfter?.toLowerCase() });
  }

  /**
   * Applies the operation (a pause with its schedule, if any) and returns the subscription as it is
   * afterwards; a change records its event with `cause`. `clock`: the request's (`clock()`), when
   * it has one already; `policy`: one in place of the merchant's (a trigger's, src/test-mode/).
   */
  async apply(merchantId: string, rawId: string, operation: Operation, options: ApplyOptions = {}): Promise<Subscription> {
    const { schedule, cause = { kind: 'api' }, policyInstead } = options;
    const id = normaliseId(rawId);
    if (id === undefined) throw new SubscriptionNotFoundError(rawId);
    const now = options.clock ?? (await this.clockOf(merchantId));
    return this.mutex.run(id, async () => {
      const policy = operation === 'PAUSE' ? (policyInstead ?? (await this.policies.policyOf(merchantId))) : NO_PAUSE_POLICY;
      const target = { merchantId, id, rawId };
      // No policy: exactly the writes of before policies (no read first).
      const ruled = isPolicyOff(policy) ? schedule : await this.underPolicy(target, policy, schedule, now);
      const notice = { hours: policy.resumeNoticeHours, now: now.timestamp() };
      const command = { merchantId, id, cause, at: now.timestamp() };
      return this.applyOnce({ command, rawId, operation }, { schedule: ruled, asSent: schedule, notice });
    });
  }

  /** The schedule a pause goes on with under the merchant's policy (a resumeAt filled in), or PausePolicyError: one read of the subscription first. */
  private async underPolicy(
    { merchantId, id, rawId }: { readonly merchantId: string; readonly id: string; readonly rawId: string },
    policy: PausePolicy,
    schedule: ScheduleRequest | undefined,
    now: Clock,
  ): Promise<ScheduleRequest | undefined> {
    const history = await this.stores.subscriptions.pauseHistory(merchantId, id);
    if (!history) throw new SubscriptionNotFoundError(rawId);
    const verdict = pauseVerdict(policy, history.status, schedule, history, now.timestamp());
    if ('breach' in verdict) throw new PausePolicyError(rawId, verdict.breach);
    return verdict.schedule;
  }

  /** `schedule`: what a pause that starts is given; `asSent`: what the request sent, for a subscription already paused. */
  private async applyOnce(
    { command, rawId, operation }: { readonly command: SingleCommand; readonly rawId: string; readonly operation: Operation },
    { schedule, asSent, notice }: { readonly schedule?: ScheduleRequest; readonly asSent?: ScheduleRequest; readonly notice: NoticeTerms },
  ): Promise<Subscription> {
    const { merchantId, id } = command;
    const plan = planCommand(operation, schedule, asSent, notice);
    const settled = await untilSettled(RETRY.concurrentWriter, async () => {
      // A resume changes first one with an own pause (its end recorded for the policy); one held alone is read, then resumed below.
      const expected = { status: plan.from, ...(operation === 'RESUME' ? { heldOnly: false } : {}) };
      const { changed, current: read } = await this.stores.subscriptions.changeOrRead(command, expected, plan.whenFrom);
      if (changed) {
        this.changes.notify(merchantId, [id], [changed.held]);
        return changed.subscription;
      }
      const current = read !== undefined ? read : await this.stores.subscriptions.find(merchantId, id);
      if (!current) throw new SubscriptionNotFoundError(rawId);
      const heldOnly = operation === 'RESUME' && current.status === 'paused' && current.holdIds !== undefined;
      const { outcome, change } = decide({ ...ruleStateOf(current), heldOnly }, commandOf(operation, asSent, notice));
      if (outcome === 'cancelled') throw new InvalidTransitionError(rawId, current.status, operation);
      if (heldOnly && change) {
        const resumed = await this.stores.subscriptions.change(command, { status: 'paused', heldOnly }, change);
        if (resumed) this.changes.notify(merchantId, [id], [resumed.held]);
        return resumed?.subscription;
      }
      if (outcome !== 'noop') return undefined;
      // A held subscription paused explicitly holds its own pause again: it stays paused after its holds' release.
      if (!change && operation === 'PAUSE' && current.holdIds)
        return (await this.stores.holders.claimOwnPause(merchantId, id)) ? current : undefined;
      if (!change) return current;
      // Already in the target status: only its schedule changes (its schedule events, if any, are relayed like a change of status).
      const rescheduled = await this.stores.subscriptions.change(command, { status: current.status }, change);
      if (rescheduled) this.changes.notify(merchantId, [id], [rescheduled.held]);
      return rescheduled?.subscription;
    });
    if (settled) return settled;
    throw new Error(`subscription ${id} kept changing under ${operation}; gave up after ${MAX_ATTEMPTS} attempts`);
  }

  /** Drops the pending pause and resume (`DELETE …/schedule`); the subscription as it is afterwards. */
  async dropSchedule(merchantId: string, rawId: string, cause: ChangeCause = { kind: 'api' }): Promise<Subscription> {
    const id = normaliseId(rawId);
    if (id === undefined) throw new SubscriptionNotFoundError(rawId);
    const now = await this.clockOf(merchantId);
    return this.mutex.run(id, async () => {
      const settled = await untilSettled(RETRY.concurrentWriter, async () => {
        const current = await this.stores.subscriptions.find(merchantId, id);
        if (!current) throw new SubscriptionNotFoundError(rawId);
        const { outcome, change } = decide(ruleStateOf(current), { kind: 'DROP_SCHEDULE' });
        if (outcome === 'cancelled') throw new InvalidTransitionError(rawId, current.status, 'SCHEDULE');
        if (!change) return current;
        const expected = { status: current.status, schedule: current.schedule };
        const dropped = await this.stores.subscriptions.change({ merchantId, id, cause, at: now.timestamp() }, expected, change);
        if (dropped) this.changes.notify(merchantId, [id], [dropped.held]);
        return dropped?.subscription;
      });
      if (settled) return settled;
      throw new Error(`subscription ${id} kept changing while its schedule was dropped; gave up after ${MAX_ATTEMPTS} attempts`);
    });
  }

  /** Up to `limit` subscriptions with a schedule due now, earliest first. */
  due(limit: number): Promise<DueSubscription[]> {
    return this.stores.due.due(nowTimestamp(), limit);
  }

  /** The earliest pending time of any subscription. */
  earliestScheduled(): Promise<string | undefined> {
    return this.stores.due.earliestScheduled();
  }

  /**
   * Applies these due schedules as read, holding their subscriptions: one conditional update per
   * group read in the same state, so a schedule changed meanwhile does not fire in its old version
   * (docs/design.md §9). `at`: a test mode's clock as an advance moves it (src/test-mode/); the
   * real time otherwise. `relayedByCaller`: the caller relays the changes itself (an advance,
   * which answers after their events and webhooks), so the events relay is not told.
   */
  async fireDue(due: readonly DueSubscription[], at?: string, { relayedByCaller = false } = {}): Promise<Firings> {
    return this.mutex.runAll(
      due.map((d) => d.id),
      async () => {
        const policies = await this.policies.policiesOf([...new Set(due.map((d) => d.merchantId))]);
        const now = at ?? nowTimestamp();
        const groups = firingGroups(due, now, policies);
        const ours = await this.stores.due.fire({ cause: { kind: 'schedule' }, at: now, requestId: randomUUID(), groups });
        const moved = groups
          .filter((g) => g.ruling.events.length > 0)
          .map((g) => ({ merchantId: g.merchantId, ids: g.ids.filter((id) => ours.has(id)) }));
        if (!relayedByCaller) for (const [merchantId, ids] of byMerchantOf(moved)) this.changes.notify(merchantId, ids);
        return { groups, ours };
      },
    );
  }

  /**
   * Applies one bulk command to many subscriptions, with the rules of `apply` and at most once per
   * subscription: the change and its mark are one update of the subscription's own document, so
   * a chunk run twice, or by two workers at once, finds its commands done (docs/design.md §6).
   * Serialised per subscription with `apply` within this process, like every status change.
   */
  async applyCommands(command: BulkCommand, operation: Operation): Promise<Map<string, CommandOutcome>> {
    const { merchantId, ids, requestId, schedule, unchangedSince, settled = new Map<string, CommandOutcome>() } = command;
    const cause = command.cause ?? { kind: 'bulk', requestId };
    const open = ids.filter((id) => !settled.has(id));
    if (open.length === 0) return new Map(settled);
    if (cause.kind === 'hold')
      return new Map([...settled, ...(await this.holdCommands.apply({ merchantId, ids: open, requestId, cause }, operation))]);
    const { plan, now } = await this.planOf(merchantId, operation, schedule, unchangedSince);
    const write = { merchantId, ids: open, requestId, cause, at: now.timestamp() };
    const outcomes = await this.mutex.runAll(open, () => this.applyCommandsOnce(write, operation, plan));
    // A no-op whose schedule the command replaced has its schedule events to relay too.
    const changed = (o: CommandOutcome) => o.outcome === 'applied' || (o.outcome === 'noop' && plan.whenAlready !== undefined);
    this.changes.notify(
      merchantId,
      [...outcomes].filter(([, o]) => changed(o)).map(([id]) => id),
    );
    return new Map([...settled, ...outcomes]);
  }

  /** A bulk command's plan, and the clock it is applied by. */
  private async planOf(
    merchantId: string,
    operation: Operation,
    schedule: ScheduleRequest | undefined,
    unchangedSince?: string,
  ): Promise<{ plan: CommandPlan; now: Clock }> {
    // The pause policy was applied at acceptance (src/bulk/bulk.service.ts); a pause that starts here gets the resumeAt its maxPauseDays gives.
    const policy = operation === 'PAUSE' ? await this.policies.policyOf(merchantId) : NO_PAUSE_POLICY;
    const now = await this.clockOf(merchantId);
    const notice = { hours: policy.resumeNoticeHours, now: now.timestamp() };
    const plan = planCommand(operation, withPolicyResumeAt(policy, schedule, now.timestamp()), schedule, notice);
    return { plan: unchangedSince === undefined ? plan : { ...plan, unchangedSince }, now };
  }

  /**
   * Several bulk commands of one merchant and operation, in the order they are to be applied
   * (a worker's run of chunks, src/bulk/bulk.worker.ts): where two or more of them name the same
   * subscription, those without a schedule are applied together, with one read and one write of
   * each subscription (BulkCommandsStore.applyTogether), and with the same outcomes as
   * applied one after another. Returns, for each command, the outcomes settled here; the rest
   * (subscriptions also named by a command `alone`, or that another writer changed meanwhile)
   * are for applyCommands, given these as `settled`. Nothing is settled where none is
   * named twice, nor where a command's plan gives a subscription already in the target status a
   * change of its own.
   */
  async applyTogether(
    merchantId: string,
    operation: Operation,
    /** `alone`: a command of its own (a schedule, an undo's condition: src/bulk/bulk.run.ts), never applied together. */
    commands: readonly (TogetherCommand & { readonly alone: boolean })[],
  ): Promise<Map<string, CommandOutcome>[]> {
    const outcomes = commands.map(() => new Map<string, CommandOutcome>());
    // A hold's commands are decided by each subscription's holders, not by its status alone: the usual way.
    if (commands.some((c) => c.cause.kind === 'hold')) return outcomes;
    // A subscription also named by a command alone keeps its commands' order by going the usual way.
    const times = new Map<string, number>();
    for (const c of commands) for (const id of new Set(c.ids)) times.set(id, c.alone ? Number.NaN : (times.get(id) ?? 0) + 1);
    // Where none is named twice (a large request's chunks) each command's first update changes them all with nothing read first: the usual way is cheaper.
    if (![...times.values()].some((n) => n >= 2)) return outcomes;
    // Otherwise every one goes in the shared writes: one read, and a statement per set of commands, not several per chunk.
    const shared = new Set([...times].filter(([, n]) => n >= 1).map(([id]) => id));
    const { plan, now } = await this.planOf(merchantId, operation, undefined);
    if (plan.whenAlready) return outcomes;
    const together = commands.map((c) => ({ ...c, ids: c.alone ? [] : c.ids.filter((id) => shared.has(id)) }));
    const states = await this.mutex.runAll([...shared], () =>
      this.stores.bulkCommands.applyTogether(merchantId, plan, together, now.timestamp()),
    );
    const changed: string[] = [];
    together.forEach(({ ids }, i) => {
      for (const id of ids) {
        const state = states.get(id);
        const outcome = state && commandOutcome(operation, { status: state.status, mark: state.marks[i] });
        if (!outcome) continue;
        outcomes[i]!.set(id, outcome);
        if (outcome.outcome === 'applied') changed.push(id);
      }
    });
    this.changes.notify(merchantId, changed);
    return outcomes;
  }

  private async applyCommandsOnce(command: WriteCommand, operation: Operation, plan: CommandPlan): Promise<Map<string, CommandOutcome>> {
    const { merchantId, ids, requestId } = command;
    const outcomes = new Map<string, CommandOutcome>();
    let open = [...ids];
    if (open.length === 0) return outcomes;
    await untilSettled(RETRY.concurrentWriter, async () => {
      const { allApplied, allNoop, states: known } = await this.stores.bulkCommands.applyCommand({ ...command, ids: open }, plan);
      if (allApplied || allNoop) {
        for (const id of open) outcomes.set(id, { outcome: allApplied ? 'applied' : 'noop' });
        open = [];
        return true;
      }
      // Known from the update's own read when every write after it changed what that read expected.
      const states = known ?? (await this.stores.bulkCommands.commandStates(merchantId, open, requestId));
      open = open.filter((id) => {
        const outcome = commandOutcome(operation, states.get(id), plan.unchangedSince);
        if (outcome) outcomes.set(id, outcome);
        return !outcome;
      });
      return open.length === 0 || undefined;
    });
    // Still neither marked nor cancelled: another writer kept flipping them between our updates.
    for (const id of open) outcomes.set(id, { outcome: 'failed', reason: KEPT_CHANGING });
    return outcomes;
  }
}
