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
import type { ChangeCause, Operation } from './subscriptions.rules.js';

export class HoldCommands {
  constructor(
    private readonly holders: HoldersStore,
    private readonly mutex: PerKeyQueue,
    /** The time of the merchant's data: its changes' modifiedAt (a test clock's in test mode). */
    private readonly timeOf: (merchantId: string) => Promise<string>,
    private readonly changes: ChangeNotifier<PendingEvents>,
    /** The outcome of a command another writer kept from settling. */
    private readonly keptChanging: CommandOutcome,
  ) {}

  /** `at`: when it takes effect (a test clock's advance releases a hold at its resumeAt); absent, the merchant's time now. */
  async apply(merchantId: string, ids: readonly string[], operation: Operation, requestId: string, cause: ChangeCause, at?: string) {
    const { holdId } = cause;
    if (holdId === undefined) throw new Error(`bulk request ${requestId} has a hold's cause without its holdId`);
    const now = at ?? (await this.timeOf(merchantId));
    const outcomes: Map<string, CommandOutcome> = await this.mutex.runAll(ids, () =>
      this.holders.apply(merchantId, ids, operation, requestId, { ...cause, holdId }, now),
    );
    this.changes.notify(
      merchantId,
      [...outcomes].filter(([, o]) => o.outcome === 'applied').map(([id]) => id),
    );
    for (const id of ids) if (!outcomes.has(id)) outcomes.set(id, this.keptChanging);
    return outcomes;
  }
}
