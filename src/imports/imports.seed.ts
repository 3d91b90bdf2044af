/**
 * Generated subscriptions (`subsvc subscriptions seed`, the `npm start` demo), made the way a
 * merchant's own are made: an import of generated rows (each a fresh externalId), stored and then
 * applied at once by the caller's own process, through the lifecycle's grouped writes. It sends
 * no event: the rows' are not asked for, and its `subscription_import.completed` is not recorded,
 * since no merchant's integration started it.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { SeedInterruptedError } from '../subscriptions/subscriptions.errors.js';
import type { SubscriptionStatus } from '../subscriptions/subscriptions.rules.js';
import { rowSubscriptionId } from './imports.outcomes.js';
import type { ImportsService } from './imports.service.js';
import type { ImportDocument, ImportsStore } from './imports.store.js';

export interface SeedRequest {
  readonly merchantId: string;
  readonly count: number;
  readonly status: SubscriptionStatus;
  /** Every row's plan; a random one per row where absent. */
  readonly planId?: string;
}

/** Rows handed to the import at once. */
const ROWS_A_PART = 1_000;

/** Runs an accepted import to its end in this process: the import as it then stands. */
export type ApplyImport = (doc: ImportDocument) => Promise<ImportDocument | null>;

export class ImportSeeder {
  constructor(
    private readonly imports: Pick<ImportsService, 'accept'>,
    private readonly store: Pick<ImportsStore, 'find'>,
    private readonly applyNow: ApplyImport,
  ) {}

  /** The new subscriptions' ids, in order; SeedInterruptedError saying how many were made when it stops part way. */
  async seed({ merchantId, count, status, planId }: SeedRequest): Promise<string[]> {
    async function* rows(): AsyncGenerator<string> {
      for (let n = 0; n < count; n += ROWS_A_PART) {
        let part = '';
        for (let i = n; i < Math.min(n + ROWS_A_PART, count); i++)
          part += `${JSON.stringify({ externalId: `seed_${randomUUID()}`, planId: planId ?? randomUUID(), status, cycle: 1 })}\n`;
        yield part;
      }
    }
    const doc = await this.imports.accept({ merchantId, format: 'ndjson', events: false, body: Readable.from(rows()) });
    let done: ImportDocument | null;
    try {
      done = await this.applyNow(doc);
    } catch (error) {
      // Every line applied before is a subscription made: each row is new, and created.
      const stopped = await this.store.find(merchantId, doc._id).catch(() => null);
      throw new SeedInterruptedError(stopped?.linesDone ?? 0, count, error);
    }
    if (done?.state !== 'completed')
      throw new SeedInterruptedError(done?.linesDone ?? 0, count, new Error(`import ${doc._id} did not complete`));
    return Array.from({ length: count }, (_, i) => rowSubscriptionId(doc._id, i + 1));
  }
}
