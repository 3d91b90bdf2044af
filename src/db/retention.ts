/**
 * The one retention policy (docs/design.md §8): documents that expire carry `expiresAt` (portal
 * links `removeAt`), and a TTL index on it deletes them wherever the server has TTL indexes. Where it has none
 * (capabilities.ttlIndexes false), one sweeper deletes them instead, for every collection at once;
 * the composition root builds it only there (src/main/composition.ts).
 */
import type { Collection, Document } from 'mongodb';
import { Periodic } from '../lib/periodic.js';
import type { Logger } from '../logger.js';

/**
 * The TTL index on `field` (`expiresAt`, or a date of its own where the API's `expiresAt` means
 * something else), where the server has them (elsewhere the sweeper deletes instead).
 */
export async function ensureTtlIndex<T extends Document>(
  collection: Collection<T>,
  ttlIndexes: boolean,
  field = 'expiresAt',
): Promise<void> {
  if (ttlIndexes) await collection.createIndex({ [field]: 1 }, { expireAfterSeconds: 0, name: 'expires' });
}

/** A store with documents past their retention. */
export interface Expiring {
  /** Deletes what is past its retention; resolves to how many (of the store's main documents). */
  deleteExpired(now?: Date): Promise<number>;
}

/** How often the sweeper deletes what has expired. */
const SWEEP_EVERY_MS = 10 * 60_000;

export class RetentionSweeper {
  private readonly sweeps: Periodic;

  constructor(
    private readonly stores: Readonly<Record<string, Expiring>>,
    private readonly log: Logger,
    everyMs = SWEEP_EVERY_MS,
  ) {
    this.sweeps = new Periodic(() => this.sweep(), { everyMs, failed: (error) => this.log.warn({ err: error }, 'retention sweep failed') });
  }

  start(): void {
    this.sweeps.start();
  }

  /** No more sweeps; resolves once the one under way has ended. */
  async stop(): Promise<void> {
    await this.sweeps.stop();
  }

  /** Deletes what has expired in every store, one after another. */
  async sweep(): Promise<void> {
    for (const [what, store] of Object.entries(this.stores)) {
      await store.deleteExpired().catch((error: unknown) => this.log.warn({ err: error }, `${what}: retention sweep failed`));
    }
  }
}
