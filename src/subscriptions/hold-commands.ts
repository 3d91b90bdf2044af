/**
 * A hold's bulk commands (its pause, its release: src/holds/), as the bulk workers apply them
 * through SubscriptionsService.applyCommands: decided by each subscription's holders in the
 * holders store, serialised per subscription like every change, with their events relayed.
 */
import type { ChangeNotifier } from './change-notifier.js';
import type { PerKeyQueue } from '../lib/keyed-mutex.js';
import type { CommandOutcome } from './bulk-commands.rules.js';
import type { HoldersStore } from './holders.store.js';
import type { PendingEvents } from './outbox.js';
import type { WriteCommand } from './command.js';
import type { Operation } from './subscriptions.rules.js';

/** What a hold's commands are applied with. */
export interface HoldCommandsDeps {
  readonly holders: HoldersStore;
  readonly mutex: PerKeyQueue;
  /** The time of the merchant's data: its changes' modifiedAt (a test clock's in test mode). */
  readonly timeOf: (merchantId: string) => Promise<string>;
  readonly changes: ChangeNotifier<PendingEvents>;
  /** The outcome of a command another writer kept from settling. */
  readonly keptChanging: CommandOutcome;
}

/** A hold's command: `at`, when it takes effect (a test clock's advance releases a hold at its resumeAt); absent, the merchant's time now. */
export type HoldCommand = Omit<WriteCommand, 'at'> & { readonly at?: string | undefined };

export class HoldCommands {
  constructor(private readonly deps: HoldCommandsDeps) {}

  async apply(command: HoldCommand, operation: Operation): Promise<Map<string, CommandOutcome>> {
    const { merchantId, ids, requestId, cause } = command;
    const { holdId } = cause;
    if (holdId === undefined) throw new Error(`bulk request ${requestId} has a hold's cause without its holdId`);
    const at = command.at ?? (await this.deps.timeOf(merchantId));
    const outcomes: Map<string, CommandOutcome> = await this.deps.mutex.runAll(ids, () =>
      this.deps.holders.apply({ ...command, at, cause: { ...cause, holdId } }, operation),
    );
    this.deps.changes.notify(
      merchantId,
      [...outcomes].filter(([, o]) => o.outcome === 'applied').map(([id]) => id),
    );
    for (const id of ids) if (!outcomes.has(id)) outcomes.set(id, this.deps.keptChanging);
    return outcomes;
  }
}
