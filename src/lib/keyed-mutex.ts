/**
 * Serialises tasks that share a key, within this process. FerretDB v1 does not make a
 * conditional update atomic against a concurrent one (it queries, then writes by _id), so
 * changes to one subscription are queued here to keep concurrent requests safe on either
 * engine (docs/design.md §8). Across processes, MongoDB's atomic update is what protects them.
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
