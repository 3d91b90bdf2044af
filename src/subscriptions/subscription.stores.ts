/**
 * The stores of the `subscriptions` collection, each for one thing it holds (docs/design.md,
 * module map), made together because they share how the server is written to and who is told of
 * the pending times they write.
 */
import type { Db } from 'mongodb';
import { BulkCommandsStore } from './bulk-commands.store.js';
import { DueStore } from './due.store.js';
import { HoldersStore } from './holders.store.js';
import { LifecycleStore } from './lifecycle.store.js';
import { OutboxStore } from './outbox.store.js';
import { PendingTimes } from './pending-times.js';
import type { ScheduleClock } from '../clocks/schedule.clock.js';
import { SubscriptionsStore } from './subscriptions.store.js';

export interface SubscriptionStores {
  /** Find, page and change a subscription; bulk acceptance's reads; inserts and removals. */
  readonly subscriptions: SubscriptionsStore;
  /** Bulk commands applied and settled, and their states. */
  readonly bulkCommands: BulkCommandsStore;
  /** Due schedules read and fired. */
  readonly due: DueStore;
  /** Events waiting in the subscriptions' outboxes. */
  readonly outbox: OutboxStore;
  /** The subscriptions' holders: holds placed and released, and an explicit pause of a held one. */
  readonly holders: HoldersStore;
  /** Told of every pending time the stores write: this process's schedule worker listens here. */
  readonly pendingTimes: PendingTimes;
  /** Subscriptions created, updated and cancelled, and their externalIds' claims (lifecycle.store.ts). */
  readonly lifecycle: LifecycleStore;
}

/** How the stores write, decided by the composition root from the server's capabilities (src/main/compose-stores.ts). */
export interface SubscriptionStoresOptions {
  /** Told of every pending time written, after the write (schedule.clock.ts); absent where the due query is served by an index. */
  readonly clock?: ScheduleClock;
  /** At most this many statements per write command (db/mongo-helpers.ts); absent: no limit. */
  readonly statementsPerCommand?: number;
  /** The conditional update answers only what a read shows; absent: the whole document (the server lacks `updateProjection`: db/workarounds.ts). */
  readonly updateProjection?: boolean;
  /** Deletes in parts of at most this many documents (db/workarounds.ts); absent: one statement. */
  readonly documentsPerDelete?: number;
}

export function subscriptionStoresOn(db: Db, options: SubscriptionStoresOptions = {}): SubscriptionStores {
  const { clock, statementsPerCommand, updateProjection, documentsPerDelete } = options;
  const pendingTimes = new PendingTimes(clock);
  const writes = { pendingTimes, statementsPerCommand };
  return {
    subscriptions: new SubscriptionsStore(db, { pendingTimes, updateProjection, documentsPerDelete }),
    bulkCommands: new BulkCommandsStore(db, writes),
    due: new DueStore(db, writes),
    outbox: new OutboxStore(db),
    holders: new HoldersStore(db, writes),
    pendingTimes,
    lifecycle: new LifecycleStore(db, statementsPerCommand),
  };
}
