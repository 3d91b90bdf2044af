/**
 * Every change of a subscription, whatever starts it: the HTTP handlers (pause, resume, dropping a
 * schedule), the bulk workers (bulk commands, a hold's) and the schedule workers (due schedules).
 * Each is a command (command.ts), decided by the one table of rules (subscriptions.rules.ts) and
 * written by the one grouped write (grouped-write.ts) through the store of what it changes. Other
 * features read subscriptions here too, never through a store. Business rules only: the request's
 * shape was checked at the edge.
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
import type { SingleCommand } from './command.js';
import { HoldCommands } from './hold-commands.js';
import { BulkCommands, type BulkCommand } from './bulk-commands.js';
import { byMerchantOf } from '../merchants/by-merchant.js';
import { KEPT_CHANGING, type CommandOutcome } from './bulk-commands.rules.js';
import type { TogetherCommand } from './bulk-commands.store.js';
import type { HoldNotice } from './holders.store.js';
import type { Owned, SubscriptionFilter } from './subscriptions.store.js';
import { firingGroups, type DueSubscription, type FiringGroup } from './due.rules.js';
import type { NoticeTerms } from './notice.rules.js';
import type { PendingEvents } from './outbox.js';
import type { SubscriptionStores } from './subscription.stores.js';
import {
  isPolicyOff,
  NO_PAUSE_POLICIES,
  NO_PAUSE_POLICY,
  pauseVerdict,
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

export { KEPT_CHANGING } from './bulk-commands.rules.js';
export type { BulkCommand } from './bulk-commands.js';
export type { Owned, SubscriptionFilter } from './subscriptions.store.js';
export type { DueSubscription } from './due.rules.js';

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
  /** Bulk commands: a bulk request's chunks and an undo's, and a hold's through holdCommands (bulk-commands.ts). */
  private readonly bulkCommands: BulkCommands;

  constructor(
    private readonly stores: Pick<SubscriptionStores, 'subscriptions' | 'bulkCommands' | 'due' | 'holders' | 'outbox'>,
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
    const { changes, holdCommands } = this;
    this.bulkCommands = new BulkCommands({ store: stores.bulkCommands, mutex, policies, clockOf, changes, holdCommands });
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
  applyCommands(command: BulkCommand, operation: Operation): Promise<Map<string, CommandOutcome>> {
    return this.bulkCommands.apply(command, operation);
  }

  /** Several bulk commands of one merchant and operation applied together where they name the same subscriptions (BulkCommands.together). */
  applyTogether(
    merchantId: string,
    operation: Operation,
    commands: readonly (TogetherCommand & { readonly alone: boolean })[],
  ): Promise<Map<string, CommandOutcome>[]> {
    return this.bulkCommands.together(merchantId, operation, commands);
  }

  /** The status (and, asked for, the pause history) of each of these ids that is the merchant's: bulk acceptance's and an undo's read. */
  ownedStatuses(merchantId: string, ids: readonly string[], withHistory = false): Promise<Map<string, Owned>> {
    return this.stores.subscriptions.ownedStatuses(merchantId, ids, withHistory);
  }

  /** Up to `limit` of the merchant's subscriptions a bulk filter matches, read once (SubscriptionsStore.matching). */
  matching(merchantId: string, filter: SubscriptionFilter, limit: number, withHistory = false): Promise<({ id: string } & Owned)[]> {
    return this.stores.subscriptions.matching(merchantId, filter, limit, withHistory);
  }

  /** The merchant's subscriptions a hold placed now covers (every one not cancelled), at most `limit`, in id order. */
  coverable(merchantId: string, limit: number): Promise<string[]> {
    return this.stores.holders.coverable(merchantId, limit);
  }

  /** The subscriptions a hold covers (of `status`, if given), in id order. */
  coveredBy(merchantId: string, holdId: string, status?: SubscriptionStatus): Promise<string[]> {
    return this.stores.holders.coveredBy(merchantId, holdId, status);
  }

  /** Records a hold's notice on each subscription its release will resume, under `guard` (HoldersStore.pushNotice): the ids it went to. */
  pushHoldNotice(merchantId: string, notice: HoldNotice, guard: (ids: readonly string[], task: () => Promise<void>) => Promise<void>) {
    return this.stores.holders.pushNotice(merchantId, notice, guard);
  }

  /** Up to `limit` of a test mode's subscriptions due by `upTo`, its clock's time, earliest first: what an advance applies. */
  dueOf(merchantId: string, upTo: string, limit: number): Promise<DueSubscription[]> {
    return this.stores.due.dueOf(merchantId, upTo, limit);
  }

  /** Removes every subscription of a test mode (never live data): how many. */
  removeAllOf(merchantId: string): Promise<number> {
    return this.stores.subscriptions.removeAllOf(merchantId);
  }

  /** The events waiting in these subscriptions' outboxes (every one's, up to `limit`, when `ids` is undefined): the events relay's read. */
  outboxes(ids: ReadonlyMap<string, string> | undefined, limit: number): Promise<PendingEvents[]> {
    return this.stores.outbox.outboxes(ids, limit);
  }

  /** Takes the relayed entries out of their subscriptions' outboxes (OutboxStore.clearOutboxes). */
  clearOutboxes(relayed: readonly PendingEvents[]): Promise<void> {
    return this.stores.outbox.clearOutboxes(relayed);
  }
}
