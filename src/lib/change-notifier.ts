/**
 * How whoever changes subscriptions (requests, bulk workers, due schedules) tells the events relay
 * (src/events/) which ones changed: right after the write, never awaiting the listeners, whose
 * events already wait in each document's outbox.
 */
export type ChangeListener = (merchantId: string, ids: readonly string[]) => void;

export class ChangeNotifier {
  private readonly listeners: ChangeListener[] = [];

  onChange(listener: ChangeListener): void {
    this.listeners.push(listener);
  }

  /** The merchant's subscriptions that changed (the merchant names the shard: docs/sharding.md). */
  notify(merchantId: string, ids: readonly string[]): void {
    if (ids.length > 0) for (const listener of this.listeners) listener(merchantId, ids);
  }
}
