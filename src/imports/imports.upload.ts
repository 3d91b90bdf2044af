/**
 * The upload of an import's file: streamed from the request to storage as it arrives, counting
 * its rows and bytes on the way, never held whole in memory. Over a limit, the upload stops and
 * what was stored of it is removed.
 */
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ImportTooLargeError, ImportUploadIdleError } from './imports.errors.js';
import type { ImportFormat } from './imports.rows.js';

export interface ImportLimits {
  readonly maxRows: number;
  readonly maxBytes: number;
  /** The longest wait for the client's next bytes (IMPORT_IDLE_TIMEOUT_MS): the upload's bound, which has no overall one. */
  readonly idleMs: number;
}

export const IMPORT_LIMITS: ImportLimits = { maxRows: 1_000_000, maxBytes: 256 * 1024 * 1024, idleMs: 30_000 };

const NEWLINE = 0x0a;
const RETURN = 0x0d;
const QUOTE = 0x22;
const COMMA = 0x2c;

/**
 * Counts the rows that are not empty (lines; for CSV, records, whose quoted fields may span lines),
 * and the bytes; fails past the limits, or when the client sends nothing for `idleMs`.
 */
class LineCounter extends Transform {
  lines = 0;
  bytes = 0;
  /** Whether the line under way has a character other than a line end. */
  private open = false;
  private readonly idle: NodeJS.Timeout;
  /** CSV: within a quoted field, where a line end does not end the record (RFC 4180). */
  private quoted = false;
  /** CSV: the byte before closed a quoted field; a quote now is an escaped one, and reopens it. */
  private justClosed = false;
  /** CSV: at the start of a field, where a quote opens a quoted one. */
  private fieldStart = true;

  constructor(
    private readonly maxLines: number,
    private readonly maxBytes: number,
    idleMs: number,
    private readonly csv: boolean,
  ) {
    super();
    this.idle = setTimeout(() => this.idled(idleMs), idleMs);
  }

  /** Idle only while nothing waits here for storage: a slow store holds the client back, which is not the client's stall. */
  private idled(idleMs: number): void {
    if (this.writableLength > 0 || this.readableLength > 0) this.idle.refresh();
    else this.destroy(new ImportUploadIdleError(`No bytes of the file arrived for ${idleMs} ms; nothing was imported.`));
  }

  override _destroy(error: Error | null, done: (error: Error | null) => void): void {
    clearTimeout(this.idle);
    done(error);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.idle.refresh();
    this.bytes += chunk.length;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (this.csv && this.inQuotedField(byte)) this.open = true;
      else if (byte === NEWLINE) {
        if (this.open) this.lines++;
        this.open = false;
      } else if (byte !== RETURN) this.open = true;
    }
    const over = this.over();
    if (over) done(over);
    else done(null, chunk);
  }

  /** CSV: whether `byte` is part of a quoted field (its quotes included), as csv-parse reads one. */
  private inQuotedField(byte: number): boolean {
    if (this.quoted) {
      if (byte === QUOTE) [this.quoted, this.justClosed] = [false, true];
      return true;
    }
    if (byte === QUOTE && (this.fieldStart || this.justClosed)) {
      [this.quoted, this.justClosed, this.fieldStart] = [true, false, false];
      return true;
    }
    this.justClosed = false;
    this.fieldStart = byte === COMMA || byte === NEWLINE;
    return false;
  }

  override _flush(done: TransformCallback): void {
    clearTimeout(this.idle);
    if (this.open) this.lines++;
    this.open = false;
    done(this.over());
  }

  private over(): ImportTooLargeError | null {
    if (this.bytes > this.maxBytes) return new ImportTooLargeError(`The file exceeds ${this.maxBytes} bytes; nothing was imported.`);
    if (this.lines > this.maxLines) return new ImportTooLargeError(`The file has more than ${this.maxLines} rows; nothing was imported.`);
    return null;
  }
}

/**
 * Streams `body` into `sink`: its count of rows once whole (a CSV header is not one). The sink is
 * aborted (what it stored removed) on any failure.
 */
export async function storeUpload(
  body: Readable,
  sink: NodeJS.WritableStream & { abort(): Promise<void> },
  limits: ImportLimits,
  format: ImportFormat,
): Promise<number> {
  const headerLines = format === 'csv' ? 1 : 0;
  const counter = new LineCounter(limits.maxRows + headerLines, limits.maxBytes, limits.idleMs, format === 'csv');
  try {
    await pipeline(body, counter, sink);
  } catch (error) {
    await sink.abort().catch(() => undefined);
    // A client that stops reading once refused never sends the rest: let it go.
    if (error instanceof ImportTooLargeError) body.resume();
    throw error;
  }
  return counter.lines - Math.min(headerLines, counter.lines);
}
