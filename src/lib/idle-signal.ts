/**
 * Waiting for work to pause without polling: whoever does the work wakes the waiters when it may
 * have become idle, and each waiter looks again then, or at its own deadline.
 */
export class IdleSignal {
  private readonly waiters = new Set<() => void>();

  /** Resolves at the next `wake`, or after `timeoutMs`, whichever comes first. */
  next(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(timeoutMs, 0));
      this.waiters.add(done);
    });
  }

  wake(): void {
    for (const done of [...this.waiters]) done();
  }
}
