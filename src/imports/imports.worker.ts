/**
 * The workers' side of imports: an import not completed and not leased is taken, its file read a
 * chunk of lines at a time from where the last run stopped, each chunk applied (imports.apply.ts)
 * and recorded with its rows' outcomes before the import moves past it. A worker killed mid-chunk
 * leaves its lease to expire; the next run applies the chunk again, and finds its rows done.
 */
import { randomUUID } from 'node:crypto';
import { pollUntil } from '../lib/retry.js';
import { nowTimestamp } from '../lib/clock.js';
import { Periodic } from '../lib/periodic.js';
import type { Logger } from '../logger.js';
import type { ChunkLine, ImportApplier } from './imports.apply.js';
import { fileRows } from './imports.file.js';
import type { ImportDocument, ImportsStore } from './imports.store.js';

/** Lines applied and recorded together. */
export const IMPORT_CHUNK_LINES = 1000;

/** Told of each import completed (the events relay records its `subscription_import.completed`). */
export type ImportCompleted = (doc: ImportDocument) => Promise<void>;

export class ImportsWorker {
  private readonly owner = randomUUID();
  private stopping = false;
  private readonly loop: Periodic;

  constructor(
    private readonly store: ImportsStore,
    private readonly applier: ImportApplier,
    private readonly completed: ImportCompleted,
    private readonly options: { readonly pollMs: number; readonly leaseMs: number },
    private readonly log: Logger,
  ) {
    this.loop = new Periodic(() => this.runAll(), {
      everyMs: options.pollMs,
      atStart: true,
      failed: (error) => this.log.warn({ err: error }, 'import run failed; retried at the next poll'),
    });
  }

  start(): void {
    this.stopping = false;
    this.loop.start();
  }

  /** Stops between chunks: the import's lease lets another worker go on from there. */
  stop(): Promise<void> {
    this.stopping = true;
    return this.loop.stop();
  }

  /** Wakes the loop for an import just accepted. */
  wake(): void {
    if (this.loop.running) void this.loop.runNow();
  }

  /** Every import it can take, one after another. */
  private async runAll(): Promise<void> {
    for (;;) {
      const doc = await this.store.lease(this.owner, this.options.leaseMs);
      if (!doc) return;
      await this.run(doc);
      if (!this.loop.running) return;
    }
  }

  /**
   * Applies this import now (a test mode's trigger): in this process, or, when a worker's poll took it
   * first, once that worker completes it or its lease lapses; at most `waitMs`.
   */
  async applyNow(doc: ImportDocument, waitMs: number): Promise<ImportDocument | null> {
    return pollUntil(
      { withinMs: waitMs, everyMs: this.options.pollMs },
      async () => {
        const leased = await this.store.leaseOne(doc, this.owner, this.options.leaseMs);
        if (leased) await this.run(leased);
        return this.store.find(doc.merchantId, doc._id);
      },
      (current) => current?.state === 'completed',
    );
  }

  /** Applies the import's remaining lines, then completes it. */
  private async run(doc: ImportDocument): Promise<void> {
    let chunk: ChunkLine[] = [];
    let done = doc.linesDone;
    let last = done;
    const flush = async (through: number) => {
      if (chunk.length > 0) await this.applyChunk(doc, chunk);
      chunk = [];
      done = through;
      return this.store.advance(doc, this.owner, done, this.options.leaseMs);
    };
    for await (const line of fileRows(this.store.download(doc.fileId), doc.format)) {
      last = line.line;
      if (line.line <= done) continue;
      chunk.push(line);
      if (chunk.length >= IMPORT_CHUNK_LINES && !(await flush(line.line))) return;
      if (this.stopping) return;
    }
    if (!(await flush(Math.max(last, done)))) return;
    const completed = await this.store.complete(doc, await this.store.counts(doc), nowTimestamp());
    if (completed) {
      this.log.info({ importId: doc._id, ...completed.counts }, 'import completed');
      await this.completed(completed);
    }
  }

  private async applyChunk(doc: ImportDocument, lines: readonly ChunkLine[]): Promise<void> {
    const cause = { kind: 'api' as const, ...(doc.apiKeyId ? { apiKeyId: doc.apiKeyId } : {}) };
    const rows = await this.applier.apply({ merchantId: doc.merchantId, importId: doc._id, lines, cause, quiet: !doc.events });
    await this.store.recordRows(doc, rows);
  }
}
