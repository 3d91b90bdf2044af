/**
 * Serialises tasks that share a key, within this process: where a server's conditional update is
 * not atomic against a concurrent one, writes to one document queue here by the document's key
 * (src/db/guarded.ts lists the keys). Where it is atomic, it is the guard and nothing is queued
 * (UNQUEUED): the composition root decides which.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /**
   * Runs the task holding every key. Keys are taken in sorted order, so two tasks with
   * overlapping keys cannot each hold one the other waits for.
   */
  runAll<T>(keys: readonly string[], task: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(keys)].sort();
    const holding = (i: number): Promise<T> => (i === sorted.length ? task() : this.run(sorted[i]!, () => holding(i + 1)));
    return holding(0);
  }
}

/** What writes to one document are queued by: a KeyedMutex, or UNQUEUED. */
export type PerKeyQueue = Pick<KeyedMutex, 'run' | 'runAll'>;

/** Runs every task at once: for a server whose atomic conditional update guards each change. */
export const UNQUEUED: PerKeyQueue = Object.freeze({
  run: <T>(_key: string, task: () => Promise<T>) => task(),
  runAll: <T>(_keys: readonly string[], task: () => Promise<T>) => task(),
});
