/**
 * Bulk commands (a bulk request's chunks, an undo's, a hold's through HoldCommands), as the bulk
 * workers apply them through SubscriptionsService.applyCommands and applyTogether: each a
 * WriteCommand, decided by the rules table (planCommand, walkCommands) and written by the grouped
 * write (BulkCommandsStore, grouped-write.ts), serialised per subscription like every change,
 * with their events relayed.
 */
import type { ChangeNotifier } from './change-notifier.js';
import type { Clock } from '../lib/clock.js';
import type { PerKeyQueue } from '../lib/keyed-mutex.js';
import { RETRY } from '../retry-policies.js';
import { untilSettled } from '../lib/retry.js';
import type { ScheduleRequest } from './schedule.request.js';
import type { WriteCommand } from './command.js';
import type { HoldCommands } from './hold-commands.js';
import { commandOutcome, KEPT_CHANGING, type CommandOutcome } from './bulk-commands.rules.js';
import type { BulkCommandsStore, TogetherCommand } from './bulk-commands.store.js';
import type { PendingEvents } from './outbox.js';
import { NO_PAUSE_POLICY, withPolicyResumeAt, type PausePolicySource } from '../pause-policy/pause-policy.rules.js';
import { planCommand, type ChangeCause, type CommandPlan, type Operation } from './subscriptions.rules.js';

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

/** What bulk commands are applied with (SubscriptionsService's own). */
export interface BulkCommandsDeps {
  readonly store: BulkCommandsStore;
  readonly mutex: PerKeyQueue;
  readonly policies: PausePolicySource;
  readonly clockOf: (merchantId: string) => Clock | Promise<Clock>;
  readonly changes: ChangeNotifier<PendingEvents>;
  readonly holdCommands: HoldCommands;
}

export class BulkCommands {
  constructor(private readonly deps: BulkCommandsDeps) {}

  /**
   * Applies one bulk command to many subscriptions, with the rules of `apply` and at most once per
   * subscription: the change and its mark are one update of the subscription's own document, so
   * a chunk run twice, or by two workers at once, finds its commands done (docs/design.md §6).
   * Serialised per subscription with `apply` within this process, like every status change.
   */
  async apply(command: BulkCommand, operation: Operation): Promise<Map<string, CommandOutcome>> {
    const { merchantId, ids, requestId, schedule, unchangedSince, settled = new Map<string, CommandOutcome>() } = command;
    const cause = command.cause ?? { kind: 'bulk', requestId };
    const open = ids.filter((id) => !settled.has(id));
    if (open.length === 0) return new Map(settled);
    if (cause.kind === 'hold')
      return new Map([...settled, ...(await this.deps.holdCommands.apply({ merchantId, ids: open, requestId, cause }, operation))]);
    const { plan, now } = await this.planOf(merchantId, operation, schedule, unchangedSince);
    const write = { merchantId, ids: open, requestId, cause, at: now.timestamp() };
    const outcomes = await this.deps.mutex.runAll(open, () => this.applyOnce(write, operation, plan));
    // A no-op whose schedule the command replaced has its schedule events to relay too.
    const changed = (o: CommandOutcome) => o.outcome === 'applied' || (o.outcome === 'noop' && plan.whenAlready !== undefined);
    this.deps.changes.notify(
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
    const policy = operation === 'PAUSE' ? await this.deps.policies.policyOf(merchantId) : NO_PAUSE_POLICY;
    const now = await this.deps.clockOf(merchantId);
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
   * are for apply, given these as `settled`. Nothing is settled where none is
   * named twice, nor where a command's plan gives a subscription already in the target status a
   * change of its own.
   */
  async together(
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
    const states = await this.deps.mutex.runAll([...shared], () =>
      this.deps.store.applyTogether(merchantId, plan, together, now.timestamp()),
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
    this.deps.changes.notify(merchantId, changed);
    return outcomes;
  }

  private async applyOnce(command: WriteCommand, operation: Operation, plan: CommandPlan): Promise<Map<string, CommandOutcome>> {
    const { merchantId, ids, requestId } = command;
    const outcomes = new Map<string, CommandOutcome>();
    let open = [...ids];
    if (open.length === 0) return outcomes;
    await untilSettled(RETRY.concurrentWriter, async () => {
      const { allApplied, allNoop, states: known } = await this.deps.store.applyCommand({ ...command, ids: open }, plan);
      if (allApplied || allNoop) {
        for (const id of open) outcomes.set(id, { outcome: allApplied ? 'applied' : 'noop' });
        open = [];
        return true;
      }
      // Known from the update's own read when every write after it changed what that read expected.
      const states = known ?? (await this.deps.store.commandStates(merchantId, open, requestId));
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
