/**
 * Every MongoDB call of a test mode's reset (`POST /v2/test-helpers/reset`, docs/sandbox.md): the
 * one list of what a reset empties. Every merchant-owned collection carries `merchantId`
 * (docs/sharding.md), so each entry is emptied of the test mode's documents alike; a feature that
 * stores test-mode data of its own adds its collection here.
 */
import type { Db } from 'mongodb';
import { deleteInParts } from '../db/mongo-helpers.js';

/** What a reset empties, by the name the answer gives it: the collections that hold it. */
export const RESET_COLLECTIONS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  subscriptions: ['subscriptions'],
  bulkRequests: ['bulkRequests', 'bulkChunks', 'bulkChunksFinished'],
  holds: ['holds'],
  events: ['events'],
  deliveries: ['webhookDeliveries'],
  clock: ['testClocks'],
  portalLinks: ['portalLinks'],
  idempotencyKeys: ['idempotencyKeys'],
  forcedFailures: ['testOutcomeAttempts'],
  /** The pause analytics' history (src/analytics/pause-history.repository.ts). */
  pauseHistory: ['pauses', 'pauseDays', 'pauseDayParts', 'pauseSteps'],
});

export class TestModeResetRepository {
  constructor(
    private readonly db: Db,
    /** Deletes in parts of at most this many documents (src/db/workarounds.ts); undefined: one statement. */
    private readonly documentsPerDelete?: number,
  ) {}

  /** Deletes the test mode's documents from every collection in RESET_COLLECTIONS: how many, by name. */
  async empty(merchantId: string): Promise<Record<string, number>> {
    const deleted: Record<string, number> = {};
    for (const [name, collections] of Object.entries(RESET_COLLECTIONS)) {
      let count = 0;
      for (const collection of collections) {
        count += await deleteInParts(this.db.collection<{ merchantId: string }>(collection), { merchantId }, this.documentsPerDelete);
      }
      deleted[name] = count;
    }
    return deleted;
  }
}
