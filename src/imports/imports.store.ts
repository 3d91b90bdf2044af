/**
 * Imports as stored: the file in GridFS (`subscriptionImportFiles`), written as it arrives; the
 * import itself (`subscriptionImports`), written once the file is whole, so that an upload cut
 * short leaves no import; and each row's outcome (`subscriptionImportRows`, one document per
 * line, keyed by it, so that a chunk applied again records each row once).
 */
import { GridFSBucket, ObjectId, type Collection, type Db } from 'mongodb';
import type { Readable, Writable } from 'node:stream';
import { isDuplicateKeyError } from '../db/mongo.js';
import type { ImportFormat } from './imports.rows.js';

export type ImportState = 'queued' | 'running' | 'completed';
export type RowOutcome = 'created' | 'updated' | 'unchanged' | 'rejected';

export interface ImportCounts {
  readonly createdCount: number;
  readonly updatedCount: number;
  readonly unchangedCount: number;
  readonly rejectedCount: number;
}

export interface ImportDocument {
  _id: string;
  merchantId: string;
  fileId: ObjectId;
  format: ImportFormat;
  /** Each row sends its own event too (`?events=all`). */
  events: boolean;
  /** The key that made it: the cause of its rows' changes. */
  apiKeyId?: string;
  state: ImportState;
  rowCount: number;
  /** The file's lines applied so far (a chunk at a time). */
  linesDone: number;
  leaseOwner?: string;
  leaseUntil?: Date;
  createdAt: string;
  completedAt: string | null;
  counts?: ImportCounts;
}

export interface RowDocument {
  _id: string;
  merchantId: string;
  importId: string;
  line: number;
  externalId?: string;
  subscriptionId?: string;
  outcome: RowOutcome;
  reason?: string;
}

const rowKey = (importId: string, line: number) => `${importId}:${String(line).padStart(8, '0')}`;

export class ImportsStore {
  private readonly imports: Collection<ImportDocument>;
  private readonly rows: Collection<RowDocument>;
  private readonly files: GridFSBucket;

  constructor(db: Db) {
    this.imports = db.collection<ImportDocument>('subscriptionImports');
    this.rows = db.collection<RowDocument>('subscriptionImportRows');
    this.files = new GridFSBucket(db, { bucketName: 'subscriptionImportFiles' });
  }

  async ensureIndexes(): Promise<void> {
    await this.imports.createIndex({ merchantId: 1, _id: 1 }, { name: 'merchant_imports' });
    await this.imports.createIndex({ state: 1, leaseUntil: 1 }, { name: 'open_imports' });
    await this.rows.createIndex({ merchantId: 1, importId: 1, line: 1 }, { name: 'import_rows' });
    await this.rows.createIndex({ merchantId: 1, importId: 1, outcome: 1, line: 1 }, { name: 'import_rows_by_outcome' });
    await this.rows.createIndex({ merchantId: 1, importId: 1, externalId: 1 }, { name: 'import_rows_by_external_id' });
  }

  /** A new file's upload stream, and its id. */
  upload(merchantId: string, importId: string): { readonly fileId: ObjectId; readonly stream: Writable & { abort(): Promise<void> } } {
    const stream = this.files.openUploadStream(importId, { metadata: { merchantId } });
    return { fileId: stream.id, stream };
  }

  download(fileId: ObjectId): Readable {
    return this.files.openDownloadStream(fileId);
  }

  async insert(doc: ImportDocument): Promise<void> {
    await this.imports.insertOne(doc);
  }

  find(merchantId: string, id: string): Promise<ImportDocument | null> {
    return this.imports.findOne({ _id: id, merchantId });
  }

  /** Takes an import that is not completed and not leased by a live worker (a background scan, one at a time). */
  async lease(owner: string, lifetimeMs: number): Promise<ImportDocument | null> {
    const now = new Date();
    return this.imports.findOneAndUpdate(
      {
        state: { $in: ['queued', 'running'] },
        $or: [{ leaseUntil: { $exists: false } }, { leaseUntil: { $lt: now } }],
      },
      { $set: { leaseOwner: owner, leaseUntil: new Date(now.getTime() + lifetimeMs) } },
      { returnDocument: 'after' },
    );
  }

  /** Takes this import, if it is not completed and not leased by a live worker. */
  async leaseOne(doc: ImportDocument, owner: string, lifetimeMs: number): Promise<ImportDocument | null> {
    const now = new Date();
    return this.imports.findOneAndUpdate(
      {
        _id: doc._id,
        merchantId: doc.merchantId,
        state: { $ne: 'completed' },
        $or: [{ leaseUntil: { $exists: false } }, { leaseUntil: { $lt: now } }],
      },
      { $set: { leaseOwner: owner, leaseUntil: new Date(now.getTime() + lifetimeMs) } },
      { returnDocument: 'after' },
    );
  }

  /** Records a chunk done and extends the lease; false when another worker took the import meanwhile. */
  async advance(doc: ImportDocument, owner: string, linesDone: number, lifetimeMs: number): Promise<boolean> {
    const result = await this.imports.updateOne(
      { _id: doc._id, merchantId: doc.merchantId, leaseOwner: owner },
      { $set: { linesDone, state: 'running', leaseUntil: new Date(Date.now() + lifetimeMs) } },
    );
    return result.matchedCount === 1;
  }

  /** Completes it with its counts, once: true for the call that did. */
  async complete(doc: ImportDocument, counts: ImportCounts, completedAt: string): Promise<ImportDocument | null> {
    return this.imports.findOneAndUpdate(
      { _id: doc._id, merchantId: doc.merchantId, state: { $ne: 'completed' } },
      { $set: { state: 'completed', counts, completedAt }, $unset: { leaseOwner: '', leaseUntil: '' } },
      { returnDocument: 'after' },
    );
  }

  /** Records each row's outcome once: a row recorded already keeps its first outcome. */
  async recordRows(rows: readonly Omit<RowDocument, '_id'>[]): Promise<void> {
    if (rows.length === 0) return;
    try {
      await this.rows.insertMany(
        rows.map((r) => ({ ...r, _id: rowKey(r.importId, r.line) })),
        { ordered: false },
      );
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
  }

  /** The externalIds of these that a row before `line` of the import named. */
  async namedBefore(doc: ImportDocument, externalIds: readonly string[], line: number): Promise<Set<string>> {
    if (externalIds.length === 0) return new Set();
    const found = await this.rows
      .find(
        { merchantId: doc.merchantId, importId: doc._id, externalId: { $in: [...externalIds] }, line: { $lt: line } },
        { projection: { externalId: 1 } },
      )
      .toArray();
    return new Set(found.map((r) => r.externalId!));
  }

  async counts(doc: ImportDocument): Promise<ImportCounts> {
    const count = (outcome: RowOutcome) => this.rows.countDocuments({ merchantId: doc.merchantId, importId: doc._id, outcome });
    const [createdCount, updatedCount, unchangedCount, rejectedCount] = await Promise.all([
      count('created'),
      count('updated'),
      count('unchanged'),
      count('rejected'),
    ]);
    return { createdCount, updatedCount, unchangedCount, rejectedCount };
  }

  /** A page of rows in line order after `after`, of one outcome where given. */
  page(merchantId: string, importId: string, outcome: RowOutcome | undefined, after: number, limit: number): Promise<RowDocument[]> {
    return this.rows
      .find({ merchantId, importId, ...(outcome ? { outcome } : {}), line: { $gt: after } })
      .sort({ line: 1 })
      .limit(limit)
      .toArray();
  }

  /** Every row (of one outcome), in line order, as a stream of documents. */
  all(merchantId: string, importId: string, outcome: RowOutcome | undefined): AsyncIterable<RowDocument> {
    return this.rows.find({ merchantId, importId, ...(outcome ? { outcome } : {}) }).sort({ line: 1 });
  }
}
