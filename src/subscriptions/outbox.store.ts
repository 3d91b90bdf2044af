/**
 * The outbox as stored: the events of changes waiting in their subscriptions' documents, read and
 * cleared for the events relay (src/events/events.relay.ts), counted for `subsvc status`. One of
 * the four stores of the `subscriptions` collection (subscription.document.ts).
 */
import type { Collection, Db } from 'mongodb';
import { byMerchantOf } from '../merchants/by-merchant.js';
import type { OutboxEntry, PendingEvents } from './outbox.js';
import { pendingEventsOf, subscriptionsIn, whereOwnIds, type SubscriptionDocument } from './subscription.document.js';

export class OutboxStore {
  private readonly collection: Collection<SubscriptionDocument>;

  constructor(db: Db) {
    this.collection = subscriptionsIn(db);
  }

  /**
   * Subscriptions with events waiting: these (id → merchant), up to `limit`, read one merchant at
   * a time (whereOwnIds); or any, up to `limit` (the sweep: a background scan).
   */
  async outboxes(ids: ReadonlyMap<string, string> | undefined, limit: number): Promise<PendingEvents[]> {
    const waiting = { 'outbox.key': { $exists: true } };
    if (!ids) return (await this.collection.find(waiting).limit(limit).toArray()).map((doc) => pendingEventsOf(doc));
    const holders = await Promise.all(whereOwnIds(byMerchantOf(ids)).map((own) => this.collection.find({ ...own, ...waiting }).toArray()));
    return holders
      .flat()
      .slice(0, limit)
      .map((doc) => pendingEventsOf(doc));
  }

  /** Subscriptions holding events not relayed yet, counted up to `cap` (the sparse subscription_outbox index): `subsvc status`. */
  async countOutboxes(cap: number): Promise<number> {
    return this.collection.countDocuments({ 'outbox.key': { $exists: true } }, { limit: cap });
  }

  /**
   * The time of the oldest outbox entry among the first `sample` subscriptions holding some (no
   * index orders the entries' times: an estimate, exact while the backlog is under the sample).
   */
  async oldestOutboxEntry(sample: number): Promise<number | undefined> {
    const holders = await this.collection
      .find({ 'outbox.key': { $exists: true } }, { projection: { 'outbox.at': 1 } })
      .limit(sample)
      .toArray();
    let oldest: number | undefined;
    for (const holder of holders) {
      for (const entry of holder.outbox ?? []) {
        const at = Date.parse(entry.at);
        if (oldest === undefined || at < oldest) oldest = at;
      }
    }
    return oldest;
  }

  /**
   * Takes the relayed entries out of their subscriptions' outboxes, in one update per merchant
   * (the relay clears one merchant's at a time), which costs less than one per subscription
   * (docs/performance.md#the-figures-behind-the-codes-choices). Each document loses the entries
   * equal to one in the list (`$pullAll` of the entries as read or handed over), and holds none of
   * the others', so entries pushed meanwhile stay. Exact entries rather than a `$pull` by key:
   * every engine applies `$pullAll` alike (src/db/workarounds.ts says why a condition would not do).
   */
  async clearOutboxes(relayed: readonly PendingEvents[]): Promise<void> {
    if (relayed.length === 0) return;
    // A bulk command's entry is the same in every document it changed: listed once.
    const entries = new Map<string, OutboxEntry>();
    for (const pending of relayed) for (const entry of pending.entries) entries.set(JSON.stringify(entry), entry);
    const pullAll = { $pullAll: { outbox: [...entries.values()] } };
    for (const own of whereOwnIds(byMerchantOf(new Map(relayed.map(({ subscription }) => [subscription.id, subscription.merchantId])))))
      await this.collection.updateMany(own, pullAll);
  }
}
