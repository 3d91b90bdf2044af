/**
 * Imports as stored: the file in GridFS (`subscriptionImportFiles`), written as it arrives; the
 * import itself (`subscriptionImports`), written once the file is whole, so that an upload cut
 * short leaves no import; and its rows' outcomes (imports.outcomes.ts).
 */
import { GridFSBucket, ObjectId, type Binary, type Collection, type Db } from 'mongodb';
import { Readable, type Writable } from 'node:stream';
import { GUARDED } from '../db/guarded.js';
import { UNQUEUED, type PerKeyQueue } from '../lib/keyed-mutex.js';
import type { ImportFormat } from './imports.rows.js';
import { ImportOutcomes, type ImportCounts, type RowOutcome, type RowRecord } from './imports.outcomes.js';

export type { ImportCounts, RowOutcome, RowRecord } from './imports.outcomes.js';
export type ImportState = 'queued' | 'running' | 'completed';

const FILES_BUCKET = 'subscriptionImportFiles';
/** GridFS chunks (255 KiB each) read at once by a run: about 1 MiB of the file. */
const FILE_CHUNKS_A_READ = 4;

/** A GridFS chunk as stored (the GridFS spec): a file's `n`th part. */
interface FileChunk {
  _id: ObjectId;
  files_id: ObjectId;
  n: number;
  data: Binary;
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

export class ImportsStore {
  private readonly imports: Collection<ImportDocument>;
  private readonly outcomes: ImportOutcomes;
  private readonly files: GridFSBucket;
  /** The files' GridFS chunks, read by their ids (download). */
  private readonly chunks: Collection<FileChunk>;

  /** `guard`: where the engine's conditional update is not atomic, the imports' leases and completions queue on it (GUARDED.subscriptionImports). */
  constructor(
    db: Db,
    private readonly guard: PerKeyQueue = UNQUEUED,
  ) {
    this.imports = db.collection<ImportDocument>('subscriptionImports');
    this.outcomes = new ImportOutcomes(db);
    this.files = new GridFSBucket(db, { bucketName: FILES_BUCKET });
    this.chunks = db.collection<FileChunk>(`${FILES_BUCKET}.chunks`);
  }

  async ensureIndexes(): Promise<void> {
    await this.imports.createIndex({ merchantId: 1, _id: 1 }, { name: 'merchant_imports' });
    await this.imports.createIndex({ state: 1, leaseUntil: 1 }, { name: 'open_imports' });
    await this.outcomes.ensureIndexes();
  }

  /** A new file's upload stream, and its id. */
  upload(merchantId: string, importId: string): { readonly fileId: ObjectId; readonly stream: Writable & { abort(): Promise<void> } } {
    const stream = this.files.openUploadStream(importId, { metadata: { merchantId } });
    return { fileId: stream.id, stream };
  }

  /**
   * The file, read a few of its GridFS chunks at a time, each read by their ids and to its end
   * before the next: a cursor held open for the whole run would hold a read open on the server
   * while the run writes, which on an engine with one writer keeps its write-ahead log from being
   * checkpointed, and every write slows as it grows (src/db/workarounds.ts).
   */
  download(fileId: ObjectId): Readable {
    const chunks = this.chunks;
    async function* parts(): AsyncGenerator<Buffer> {
      const ids = (
        await chunks
          .find({ files_id: fileId }, { projection: { n: 1 } })
          .sort({ n: 1 })
          .toArray()
      ).map((c) => c._id);
      for (let i = 0; i < ids.length; i += FILE_CHUNKS_A_READ) {
        const read = await chunks
          .find({ _id: { $in: ids.slice(i, i + FILE_CHUNKS_A_READ) } })
          .sort({ n: 1 })
          .toArray();
        for (const chunk of read) yield Buffer.from(chunk.data.buffer);
      }
    }
    return Readable.from(parts(), { objectMode: false });
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
    return this.guard.run(GUARDED.subscriptionImports(), () =>
      this.imports.findOneAndUpdate(
        {
          state: { $in: ['queued', 'running'] },
          $or: [{ leaseUntil: { $exists: false } }, { leaseUntil: { $lt: now } }],
        },
        { $set: { leaseOwner: owner, leaseUntil: new Date(now.getTime() + lifetimeMs) } },
        { returnDocument: 'after' },
      ),
    );
  }

  /** Takes this import, if it is not completed and not leased by a live worker. */
  async leaseOne(doc: ImportDocument, owner: string, lifetimeMs: number): Promise<ImportDocument | null> {
    const now = new Date();
    return this.guard.run(GUARDED.subscriptionImports(), () =>
      this.imports.findOneAndUpdate(
        {
          _id: doc._id,
          merchantId: doc.merchantId,
          state: { $ne: 'completed' },
          $or: [{ leaseUntil: { $exists: false } }, { leaseUntil: { $lt: now } }],
        },
        { $set: { leaseOwner: owner, leaseUntil: new Date(now.getTime() + lifetimeMs) } },
        { returnDocument: 'after' },
      ),
    );
  }

  /** Records a chunk done and extends the lease; false when another worker took the import meanwhile. */
  async advance(doc: ImportDocument, owner: string, linesDone: number, lifetimeMs: number): Promise<boolean> {
    const result = await this.guard.run(GUARDED.subscriptionImports(), () =>
      this.imports.updateOne(
        { _id: doc._id, merchantId: doc.merchantId, leaseOwner: owner },
        { $set: { linesDone, state: 'running', leaseUntil: new Date(Date.now() + lifetimeMs) } },
      ),
    );
    return result.matchedCount === 1;
  }

  /** Completes it with its counts, once: true for the call that did. */
  async complete(doc: ImportDocument, counts: ImportCounts, completedAt: string): Promise<ImportDocument | null> {
    return this.guard.run(GUARDED.subscriptionImports(), () =>
      this.imports.findOneAndUpdate(
        { _id: doc._id, merchantId: doc.merchantId, state: { $ne: 'completed' } },
        { $set: { state: 'completed', counts, completedAt }, $unset: { leaseOwner: '', leaseUntil: '' } },
        { returnDocument: 'after' },
      ),
    );
  }

  /** Records a chunk's rows' outcomes; a row recorded already keeps its first outcome. */
  recordRows(doc: ImportDocument, rows: readonly RowRecord[]): Promise<void> {
    return this.outcomes.record(doc.merchantId, doc._id, rows);
  }

  counts(doc: ImportDocument): Promise<ImportCounts> {
    return this.outcomes.counts(doc.merchantId, doc._id);
  }

  /** A page of rows in line order after `after`, of one outcome where given. */
  page(merchantId: string, importId: string, outcome: RowOutcome | undefined, after: number, limit: number): Promise<RowRecord[]> {
    return this.outcomes.page({ merchantId, importId, outcome, after }, limit);
  }

  /** Every row (of one outcome), in line order. */
  all(merchantId: string, importId: string, outcome: RowOutcome | undefined): AsyncIterable<RowRecord> {
    return this.outcomes.all({ merchantId, importId, outcome, after: 0 });
  }
}
