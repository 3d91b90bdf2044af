/**
 * How whoever changes subscriptions (requests, bulk workers, due schedules) tells the events relay
 * (src/events/) which ones changed: right after the write, never awaiting the listeners, whose
 * events already wait in each document's outbox.
 */
/**
 * `held`: where the writer has them, what the listener would otherwise read back of the changed
 * documents (the subscriptions' changed documents with the outbox entries their changes pushed).
 */
export type ChangeListener<Held> = (merchantId: string, ids: readonly string[], held?: readonly Held[]) => void;

export class ChangeNotifier<Held = never> {
  private readonly listeners: ChangeListener<Held>[] = [];

  onChange(listener: ChangeListener<Held>): void {
    this.listeners.push(listener);
  }

  /** The merchant's subscriptions that changed (the merchant names the shard: docs/sharding.md). */
  notify(merchantId: string, ids: readonly string[], held?: readonly Held[]): void {
    if (ids.length > 0) for (const listener of this.listeners) listener(merchantId, ids, held);
  }
}
