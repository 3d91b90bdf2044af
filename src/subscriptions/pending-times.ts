/**
 * The pending times the stores write, told after each write: to the schedule clock, where there is
 * one (schedule.clock.ts), and to this process's schedule worker (ScheduleWorker.wakeBy).
 */
import type { ScheduleClock } from '../clocks/schedule.clock.js';

export class PendingTimes {
  private readonly listeners: ((at: string) => void)[] = [];

  /** `clock`: absent where the due query is served by an index. */
  constructor(private readonly clock?: ScheduleClock) {}

  /** Told the earliest of the pending times each write sets, after the write. */
  onPendingTimes(listener: (at: string) => void): void {
    this.listeners.push(listener);
  }

  /** Tells the clock, where there is one, and the listeners the earliest of these times just written. */
  async note(times: readonly (string | undefined)[]): Promise<void> {
    const pending = times.filter((t): t is string => t !== undefined);
    if (pending.length === 0) return;
    const earliest = pending.reduce((a, b) => (a < b ? a : b));
    await this.clock?.note(earliest);
    for (const listener of this.listeners) listener(earliest);
  }
}
