/**
 * The outcomes of an import's rows, recorded a chunk at a time and compactly: a row `created` (most
 * of a large import) is a line and an externalId in its chunk's one document
 * (`subscriptionImportChunks`), its subscription's id following from the import and the line; every
 * other row is a document of its own (`subscriptionImportRows`), so that the rejected ones are read
 * by their index. Both are keyed by their line, so that a chunk applied again records each row once
 * and keeps its first outcome. Reads merge the two in line order.
 */
import { hash } from 'node:crypto';
import type { Collection, Db, FindCursor } from 'mongodb';
import { insertNew } from '../db/mongo-helpers.js';

export type RowOutcome = 'created' | 'updated' | 'unchanged' | 'rejected';

export interface ImportCounts {
  readonly createdCount: number;
  readonly updatedCount: number;
  readonly unchangedCount: number;
  readonly rejectedCount: number;
}

/** A row's outcome, as read. */
export interface RowRecord {
  readonly line: number;
  readonly externalId?: string;
  readonly subscriptionId?: string;
  readonly outcome: RowOutcome;
  readonly reason?: string;
}

interface RowDocument extends RowRecord {
  _id: string;
  merchantId: string;
  importId: string;
}

/** The rows of a chunk that created their subscription, in line order. */
interface ChunkDocument {
  _id: string;
  merchantId: string;
  importId: string;
  /** Its last created row's line: chunks are read in this order. */
  lastLine: number;
  lines: number[];
  externalIds: string[];
}

/** The id a row's new subscription gets: the same on every run of its chunk. */
export function rowSubscriptionId(importId: string, line: number): string {
  const hex = hash('sha256', `${importId}:${line}`, 'hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const lineKey = (importId: string, line: number) => `${importId}:${String(line).padStart(8, '0')}`;

/** Which rows a read takes: of one import, of one outcome where given, after a line. */
export interface RowsWanted {
  readonly merchantId: string;
  readonly importId: string;
  readonly outcome: RowOutcome | undefined;
  readonly after: number;
}

export class ImportOutcomes {
  private readonly rows: Collection<RowDocument>;
  private readonly chunks: Collection<ChunkDocument>;

  constructor(db: Db) {
    this.rows = db.collection<RowDocument>('subscriptionImportRows');
    this.chunks = db.collection<ChunkDocument>('subscriptionImportChunks');
  }

  async ensureIndexes(): Promise<void> {
    await this.rows.createIndex({ merchantId: 1, importId: 1, line: 1 }, { name: 'import_rows' });
    await this.rows.createIndex({ merchantId: 1, importId: 1, outcome: 1, line: 1 }, { name: 'import_rows_by_outcome' });
    await this.chunks.createIndex({ merchantId: 1, importId: 1, lastLine: 1 }, { name: 'import_chunks' });
  }

  /** Records a chunk's outcomes; a row recorded already keeps its first one. */
  async record(merchantId: string, importId: string, records: readonly RowRecord[]): Promise<void> {
    const created = records.filter((r) => r.outcome === 'created');
    const others = records.filter((r) => r.outcome !== 'created');
    await insertNew(
      this.rows,
      others.map((r) => ({ ...r, _id: lineKey(importId, r.line), merchantId, importId })),
    );
    if (created.length === 0) return;
    await insertNew(this.chunks, [
      {
        _id: lineKey(importId, created[0]!.line),
        merchantId,
        importId,
        lastLine: created.at(-1)!.line,
        lines: created.map((r) => r.line),
        externalIds: created.map((r) => r.externalId!),
      },
    ]);
  }

  async counts(merchantId: string, importId: string): Promise<ImportCounts> {
    const count = (outcome: RowOutcome) => this.rows.countDocuments({ merchantId, importId, outcome });
    const createdCount = async () => {
      const chunks = this.chunks.find({ merchantId, importId }, { projection: { lines: 1 } });
      let n = 0;
      for await (const chunk of chunks) n += chunk.lines.length;
      return n;
    };
    const [created, updatedCount, unchangedCount, rejectedCount] = await Promise.all([
      createdCount(),
      count('updated'),
      count('unchanged'),
      count('rejected'),
    ]);
    return { createdCount: created, updatedCount, unchangedCount, rejectedCount };
  }

  /** The rows wanted, in line order: the merge of the created rows and the others. */
  async *all(wanted: RowsWanted): AsyncGenerator<RowRecord> {
    const created = wanted.outcome === undefined || wanted.outcome === 'created' ? this.created(wanted) : undefined;
    const others = wanted.outcome === 'created' ? undefined : this.others(wanted);
    const value = (r: IteratorResult<RowRecord> | undefined) => (r && !r.done ? r.value : undefined);
    try {
      let a = await created?.next();
      let b = await others?.next();
      for (;;) {
        const [x, y] = [value(a), value(b)];
        if (!x && !y) return;
        if (x && (!y || x.line < y.line)) {
          yield x;
          a = await created!.next();
        } else {
          yield y!;
          b = await others!.next();
        }
      }
    } finally {
      // A read stopped early (a page) closes the cursors it opened.
      await Promise.all([created?.return(undefined), others?.return(undefined)]);
    }
  }

  /** At most `limit` of the rows wanted, in line order. */
  async page(wanted: RowsWanted, limit: number): Promise<RowRecord[]> {
    const page: RowRecord[] = [];
    for await (const row of this.all(wanted)) {
      if (page.length === limit) break;
      page.push(row);
    }
    return page;
  }

  private async *created({ merchantId, importId, after }: RowsWanted): AsyncGenerator<RowRecord> {
    const chunks = this.chunks.find({ merchantId, importId, lastLine: { $gt: after } }).sort({ lastLine: 1 });
    for await (const chunk of chunks)
      for (let i = 0; i < chunk.lines.length; i++) {
        const line = chunk.lines[i]!;
        if (line <= after) continue;
        yield { line, externalId: chunk.externalIds[i]!, subscriptionId: rowSubscriptionId(importId, line), outcome: 'created' };
      }
  }

  private async *others({ merchantId, importId, outcome, after }: RowsWanted): AsyncGenerator<RowRecord> {
    const cursor: FindCursor<RowDocument> = this.rows
      .find({ merchantId, importId, ...(outcome ? { outcome } : {}), line: { $gt: after } }, { projection: { merchantId: 0, importId: 0 } })
      .sort({ line: 1 });
    for await (const { _id: _key, ...row } of cursor) yield row;
  }
}
