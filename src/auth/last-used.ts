/**
 * When each API key was last used, recorded off the request path: a request only notes its key
 * in memory; at most once a minute per key (in this process) the note becomes a write, and the
 * writes of a second are sent together, after the answers. A failed write is logged and the key
 * is noted again at its next use.
 */
import type { Logger } from '../logger.js';
import { nowTimestamp } from '../lib/clock.js';
import type { MerchantsRepository } from './merchants.repository.js';

export const LAST_USED_EVERY_MS = 60_000;
const GATHER_MS = 1_000;

interface Use {
  readonly merchantId: string;
  readonly keyId: string;
  readonly at: string;
}

export class LastUsedRecorder {
  /** Key id → when its last use was noted for writing (ms). */
  private readonly noted = new Map<string, number>();
  private pending: Use[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly merchants: MerchantsRepository,
    private readonly log: Logger,
  ) {}

  /** Called on every authenticated request; never waits. */
  used(merchantId: string, keyId: string): void {
    const now = Date.now();
    const last = this.noted.get(keyId);
    if (last !== undefined && now - last < LAST_USED_EVERY_MS) return;
    this.noted.set(keyId, now);
    this.pending.push({ merchantId, keyId, at: nowTimestamp() });
    this.timer ??= setTimeout(() => void this.flush(), GATHER_MS).unref();
  }

  /** Writes what is noted (also at shutdown). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const uses = this.pending;
    this.pending = [];
    if (uses.length > 0) this.writing = this.writing.then(() => this.write(uses));
    return this.writing;
  }

  private async write(uses: readonly Use[]): Promise<void> {
    const cutoff = Date.now() - LAST_USED_EVERY_MS;
    for (const [keyId, at] of this.noted) if (at < cutoff) this.noted.delete(keyId);
    try {
      await this.merchants.recordLastUsed(uses);
    } catch (error) {
      for (const { keyId } of uses) this.noted.delete(keyId);
      this.log.warn({ err: error, keys: uses.length }, 'last-used times of API keys not recorded; noted again at their next use');
    }
  }
}
