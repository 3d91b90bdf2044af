/**
 * Pause and resume of one subscription, called by the HTTP handlers and, for bulk commands,
 * by the job workers. Business rules only: the request's shape was checked at the edge.
 */
import { ChangeNotifier } from '../lib/change-notifier.js';
import { nowTimestamp } from '../lib/clock.js';
import { KeyedMutex } from '../lib/keyed-mutex.js';
import type { Page, PageRequest } from '../lib/pagination.js';
import { planCommand, type CommandPlan } from '../schedules/schedule.rules.js';
import type { ScheduleRequest } from '../schedules/schedule.request.js';
import type { CommandState, SubscriptionsRepository } from './subscriptions.repository.js';
import {
  InvalidTransitionError,
  SubscriptionNotFoundError,
  decide,
  normaliseId,
  type ChangeCause,
  type Operation,
  type Subscription,
  type SubscriptionStatus,
} from './subscriptions.rules.js';

/** A concurrent writer can flip the status between our update and our read; retry that many times. */
const MAX_ATTEMPTS = 5;

/** The reason of a command that a concurrent writer kept from resolving: worth retrying later. */
export const KEPT_CHANGING = 'status kept changing';

/** What one bulk command did (docs/design.md §4, §6). */
export type CommandOutcome =
  | { readonly outcome: 'applied' | 'noop' }
  | { readonly outcome: 'skipped'; readonly reason: 'cancelled' | 'not_found' }
  | { readonly outcome: 'failed'; readonly reason: string };

/** The outcome a command has reached on a subscription, or undefined while it has not (a concurrent writer interfered). */
function commandOutcome(operation: Operation, state: CommandState | undefined): CommandOutcome | undefined {
  if (!state) return { outcome: 'skipped', reason: 'not_found' };
  if (state.mark) return { outcome: state.mark };
  try {
    return decide(operation, state.status) === 'reject' ? { outcome: 'skipped', reason: 'cancelled' } : undefined;
  } catch (error) {
    return { outcome: 'failed', reason: (error as Error).message };
  }
}

export class SubscriptionsService {
  /** Told after every change of status: the events relay (src/events/) listens here. */
  readonly changes = new ChangeNotifier();

  constructor(
    private readonly repository: SubscriptionsRepository,
    /** Shared by every service instance of a process that changes subscriptions (requests and workers). */
    private readonly mutex = new KeyedMutex(),
  ) {}

  async get(merchantId: string, rawId: string): Promise<Subscription> {
    const id = normaliseId(rawId);
    const found = id === undefined ? undefined : await this.repository.find(merchantId, id);
    if (!found) throw new SubscriptionNotFoundError(rawId);
    return found;
  }

  list(merchantId: string, status: SubscriptionStatus | undefined, page: PageRequest): Promise<Page<Subscription>> {
    return this.repository.page(merchantId, status, { ...page, startingAfter: page.startingAfter?.toLowerCase() });
  }

  /** Applies the operation (a pause with its schedule, if any) and returns the subscription as it is afterwards; a change records its event with `cause`. */
  async apply(merchantId: string, rawId: string, operation: Operation, schedule?: ScheduleRequest, cause: ChangeCause = { kind: 'api' }): Promise<Subscription> {
    const id = normaliseId(rawId);
    if (id === undefined) throw new SubscriptionNotFoundError(rawId);
    return this.mutex.run(id, () => this.applyOnce(merchantId, id, rawId, operation, schedule, cause));
  }

  private async applyOnce(merchantId: string, id: string, rawId: string, operation: Operation, schedule: ScheduleRequest | undefined, cause: ChangeCause): Promise<Subscription> {
    const plan = planCommand(operation, schedule);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const changed = await this.repository.change(merchantId, id, { status: plan.from }, plan.whenFrom, nowTimestamp(), cause);
      if (changed) {
        this.changes.notify(merchantId, [id]);
        return changed;
      }
      const current = await this.repository.find(merchantId, id);
      if (!current) throw new SubscriptionNotFoundError(rawId);
      const decision = decide(operation, current.status);
      if (decision === 'reject') throw new InvalidTransitionError(rawId, current.status, operation);
      if (decision === 'noop') {
        if (!plan.whenAlready) return current;
        // Already in the target status: only its schedule changes.
        const rescheduled = await this.repository.change(merchantId, id, { status: plan.already }, plan.whenAlready, nowTimestamp(), cause);
        if (rescheduled) return rescheduled;
      }
    }
    throw new Error(`subscription ${id} kept changing under ${operation}; gave up after ${MAX_ATTEMPTS} attempts`);
  }

  /**
   * Applies one bulk command to many subscriptions, with the rules of `apply` and at most once per
   * subscription: the change and its mark are one update of the subscription's own document, so
   * a chunk run twice, or by two workers at once, finds its commands done (docs/design.md §6).
   * Serialised per subscription with `apply` within this process, like every status change.
   */
  async applyCommands(
    merchantId: string,
    ids: readonly string[],
    operation: Operation,
    requestId: string,
    schedule?: ScheduleRequest,
    cause: ChangeCause = { kind: 'bulk', requestId },
  ): Promise<Map<string, CommandOutcome>> {
    const plan = planCommand(operation, schedule);
    const outcomes = await this.mutex.runAll(ids, () => this.applyCommandsOnce(merchantId, ids, operation, plan, requestId, cause));
    this.changes.notify(merchantId, [...outcomes].filter(([, o]) => o.outcome === 'applied').map(([id]) => id));
    return outcomes;
  }

  private async applyCommandsOnce(
    merchantId: string,
    ids: readonly string[],
    operation: Operation,
    plan: CommandPlan,
    requestId: string,
    cause: ChangeCause,
  ): Promise<Map<string, CommandOutcome>> {
    const outcomes = new Map<string, CommandOutcome>();
    let open = [...ids];
    for (let attempt = 0; attempt < MAX_ATTEMPTS && open.length > 0; attempt++) {
      const { allApplied } = await this.repository.applyCommand(merchantId, open, plan, requestId, nowTimestamp(), cause);
      if (allApplied) {
        for (const id of open) outcomes.set(id, { outcome: 'applied' });
        return outcomes;
      }
      const states = await this.repository.commandStates(merchantId, open, requestId);
      open = open.filter((id) => {
        const outcome = commandOutcome(operation, states.get(id));
        if (outcome) outcomes.set(id, outcome);
        return !outcome;
      });
    }
    // Still neither marked nor cancelled: another writer kept flipping them between our updates.
    for (const id of open) outcomes.set(id, { outcome: 'failed', reason: KEPT_CHANGING });
    return outcomes;
  }
}
