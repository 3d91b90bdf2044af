/**
 * A change to subscriptions as the one write path takes it (docs/design.md, "One write path"):
 * who (`merchantId`, and the actor in its `cause`), what (the subscriptions, and the command the
 * rules table decides for each: subscriptions.rules.ts, holders.rules.ts), why (`cause`, which
 * every event of the change records), when (`at`, the merchant's time) and its guards (the mark
 * `requestId` that makes a repeat find it done; `unchangedSince`, an undo's `changed_since`).
 * Every writer passes one of these rather than a list of positional arguments, so that a new
 * kind of change (create, update, cancel, import, a billing system's) adds a command and a row of
 * the rules table, not a new signature through every layer.
 */
import type { FiringGroup } from './due.rules.js';
import type { NewSubscription, SubscriptionPatch } from './lifecycle.rules.js';
import type { ChangeCause } from './subscriptions.rules.js';

/** Who, why and when: what every write of a change records. */
export interface CommandContext {
  readonly merchantId: string;
  readonly cause: ChangeCause;
  /** The merchant's time it takes effect at: its events' and modifiedAt's time (a test clock's in test mode). */
  readonly at: string;
}

/** A command over many subscriptions (a bulk request's chunk, a hold's pause or release): applied at most once to each. */
export interface WriteCommand extends CommandContext {
  readonly ids: readonly string[];
  /** Its mark on each subscription it reaches (the bulk request's id), in the same update as its change. */
  readonly requestId: string;
  /** The request's trace context (W3C traceparent), when tracing is on: its events continue it. */
  readonly trace?: string | undefined;
}

/** A command on one subscription (a request's, the portal's, a test trigger's). */
export interface SingleCommand extends CommandContext {
  readonly id: string;
}

/**
 * A change to one subscription's lifecycle (lifecycle.ts): who and why; its time is read when it is
 * written. `quiet` records no event (an import's rows, unless the import asks for them).
 */
export interface LifecycleCommand {
  readonly merchantId: string;
  readonly cause: ChangeCause;
  readonly quiet?: boolean;
}

/** A create; `id` given where it must be the same on every run (an import's row), else random. */
export interface CreateCommand extends LifecycleCommand {
  readonly subscription: NewSubscription;
  readonly id?: string;
}

/** A merge patch of a subscription (`id` as the caller gave it); `status` is refused, not patched. */
export interface UpdateCommand extends LifecycleCommand {
  readonly id: string;
  readonly patch: SubscriptionPatch & { readonly status?: unknown };
}

/** A cancel of a subscription (`id` as the caller gave it), with the merchant's reason if any. */
export interface CancelCommand extends LifecycleCommand {
  readonly id: string;
  readonly reason?: string | undefined;
}

/**
 * Due schedules fired together (a schedule worker's poll, a test clock's advance): each group is
 * one merchant's subscriptions read alike and ruled by FIRE (due.rules.ts), written by one
 * statement of the grouped write. `requestId`: the run's mark (`scheduleRun`), by which it finds
 * which of them it changed; `cause`: `schedule`.
 */
export interface DueCommand {
  readonly cause: ChangeCause;
  readonly at: string;
  readonly requestId: string;
  readonly groups: readonly FiringGroup[];
}
