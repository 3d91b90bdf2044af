/**
 * Imports of subscriptions from a file (docs/imports.md): accepted once the file is stored whole
 * (imports.upload.ts), applied by the workers (imports.worker.ts), and read back with their counts
 * and rows' outcomes.
 */
import { Readable } from 'node:stream';
import type { components } from '../../generated/openapi.js';
import { uuidv7 } from '../lib/ids.js';
import { livemodeOf } from '../merchants/livemode.js';
import type { ClockOf } from '../subscriptions/subscriptions.service.js';
import { ImportNotFoundError } from './imports.errors.js';
import type { ImportFormat } from './imports.rows.js';
import type { ImportDocument, ImportsStore, RowOutcome, RowRecord } from './imports.store.js';
import { IMPORT_LIMITS, storeUpload, type ImportLimits } from './imports.upload.js';

export type ImportView = components['schemas']['SubscriptionImport'];
type RowView = components['schemas']['SubscriptionImportRow'];
type RowList = components['schemas']['SubscriptionImportRowList'];

const ZERO = { createdCount: 0, updatedCount: 0, unchangedCount: 0, rejectedCount: 0 };

export function importView(doc: ImportDocument, counts = doc.counts ?? ZERO): ImportView {
  return {
    id: doc._id,
    state: doc.state,
    rowCount: doc.rowCount,
    ...counts,
    createdAt: doc.createdAt,
    completedAt: doc.completedAt,
    livemode: livemodeOf(doc.merchantId),
  };
}

function rowView(row: RowRecord, merchantId: string): RowView {
  const livemode = livemodeOf(merchantId);
  const { line, externalId, subscriptionId, outcome, reason } = row;
  return {
    line,
    ...(externalId !== undefined ? { externalId } : {}),
    ...(subscriptionId !== undefined ? { subscriptionId } : {}),
    outcome,
    ...(reason !== undefined ? { reason } : {}),
    livemode,
  };
}

const csvField = (value: string | number | undefined) => {
  const text = value === undefined ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

export interface NewImport {
  readonly merchantId: string;
  /** The key that sent it, the cause of its rows' changes; absent for one the service made (a seed). */
  readonly apiKeyId?: string;
  readonly format: ImportFormat;
  readonly events: boolean;
  readonly body: Readable;
}

export class ImportsService {
  constructor(
    private readonly store: ImportsStore,
    private readonly clockOf: ClockOf,
    /** Told of each import accepted: this process's workers, if it runs them, take it at once. */
    private readonly accepted: () => void = () => undefined,
    private readonly limits: ImportLimits = IMPORT_LIMITS,
  ) {}

  /** Stores the file as it arrives; the import exists only once the file is whole. */
  async accept({ merchantId, apiKeyId, format, events, body }: NewImport): Promise<ImportDocument> {
    const id = uuidv7();
    const { fileId, stream } = this.store.upload(merchantId, id);
    const rowCount = await storeUpload(body, stream, this.limits, format);
    const createdAt = (await this.clockOf(merchantId)).timestamp();
    const doc: ImportDocument = {
      _id: id,
      merchantId,
      fileId,
      format,
      events,
      ...(apiKeyId !== undefined ? { apiKeyId } : {}),
      state: 'queued',
      rowCount,
      linesDone: 0,
      createdAt,
      completedAt: null,
    };
    await this.store.insert(doc);
    this.accepted();
    return doc;
  }

  async get(merchantId: string, id: string): Promise<ImportView> {
    const doc = await this.find(merchantId, id);
    return importView(doc, doc.counts ?? (doc.state === 'queued' ? ZERO : await this.store.counts(doc)));
  }

  async rows(merchantId: string, id: string, outcome: RowOutcome | undefined, limit: number, after: number): Promise<RowList> {
    const doc = await this.find(merchantId, id);
    const page = await this.store.page(merchantId, doc._id, outcome, after, limit + 1);
    const data = page.slice(0, limit).map((row) => rowView(row, merchantId));
    const hasMore = page.length > limit;
    return { data, hasMore, nextCursor: hasMore ? String(data.at(-1)!.line) : null };
  }

  /** Every row (of one outcome) as CSV, read as it is sent. */
  async rowsCsv(merchantId: string, id: string, outcome: RowOutcome | undefined): Promise<Readable> {
    const doc = await this.find(merchantId, id);
    const rows = this.store.all(merchantId, doc._id, outcome);
    async function* lines(): AsyncGenerator<string> {
      yield 'line,externalId,outcome,reason\r\n';
      for await (const r of rows) yield `${[r.line, r.externalId, r.outcome, r.reason].map(csvField).join(',')}\r\n`;
    }
    return Readable.from(lines(), { objectMode: false });
  }

  private async find(merchantId: string, rawId: string): Promise<ImportDocument> {
    const doc = await this.store.find(merchantId, rawId.toLowerCase());
    if (!doc) throw new ImportNotFoundError(rawId);
    return doc;
  }
}
