/**
 * Each HTTP process keeps its own rate-limit buckets, so each takes its share of the configured
 * limit: 1/n for n live HTTP processes, as the heartbeat last read the fleet (src/fleet/heartbeat.ts).
 */
import type { Logger } from '../logger.js';
import type { LiveProcess } from './heartbeat.js';

/** What takes a share of the limit (the per-merchant limiter, src/http/rate-limit.ts). */
export interface Shareable {
  setShare(processes: number): void;
}

export interface LimitSetting {
  readonly burst: number;
  readonly perSecond: number;
}

export class RateLimitShare {
  /** The live HTTP processes the share was last taken from. */
  private processes = 1;

  constructor(
    private readonly limiter: Shareable | undefined,
    private readonly limit: LimitSetting,
    private readonly log: Logger,
  ) {}

  /** The fleet as the last heartbeat read it: a changed count of HTTP processes changes the share. */
  fleetChanged(live: readonly LiveProcess[]): void {
    const httpProcesses = Math.max(1, live.filter((p) => p.http).length);
    if (!this.limiter || httpProcesses === this.processes) return;
    this.processes = httpProcesses;
    this.limiter.setShare(httpProcesses);
    this.log.info(
      { httpProcesses, burst: this.limit.burst / httpProcesses, perSecond: this.limit.perSecond / httpProcesses },
      'rate limit share changed',
    );
  }
}
