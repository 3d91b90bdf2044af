/**
 * How whoever changes subscriptions (requests, bulk workers, due schedules) tells the events relay
 * (src/events/) which ones changed: right after the write, never awaiting the listeners, whose
 * events already wait in each document's outbox.
 */
import type { OutboxHolder } from '../subscriptions/subscriptions.repository.js';

/**
 * `held`: where the writer has them, the changed documents with the entries their changes pushed,
 * so that the relay need not read them back; the other ids' outboxes are read.
 */
export type ChangeListener = (merchantId: string, ids: readonly string[], held?: readonly OutboxHolder[]) => void;

export class ChangeNotifier {
  private readonly listeners: ChangeListener[] = [];

  onChange(listener: ChangeListener): void {
    this.listeners.push(listener);
  }

  /** The merchant's subscriptions that changed (the merchant names the shard: docs/sharding.md). */
  notify(merchantId: string, ids: readonly string[], held?: readonly OutboxHolder[]): void {
    if (ids.length > 0) for (const listener of this.listeners) listener(merchantId, ids, held);
  }
}
