/**
 * The upload of an import's file: streamed from the request to storage as it arrives, counting
 * its rows and bytes on the way, never held whole in memory. Over a limit, the upload stops and
 * what was stored of it is removed.
 */
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ImportTooLargeError } from './imports.errors.js';

export interface ImportLimits {
  readonly maxRows: number;
  readonly maxBytes: number;
}

export const IMPORT_LIMITS: ImportLimits = { maxRows: 1_000_000, maxBytes: 256 * 1024 * 1024 };

const NEWLINE = 0x0a;
const RETURN = 0x0d;

/** Counts the lines that are not empty, and the bytes; fails past the limits. */
class LineCounter extends Transform {
  lines = 0;
  bytes = 0;
  /** Whether the line under way has a character other than a line end. */
  private open = false;

  constructor(
    private readonly maxLines: number,
    private readonly maxBytes: number,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (byte === NEWLINE) {
        if (this.open) this.lines++;
        this.open = false;
      } else if (byte !== RETURN) this.open = true;
    }
    const over = this.over();
    if (over) done(over);
    else done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
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
 * Streams `body` into `sink`: its count of lines that are not empty once whole. `headerLines`:
 * lines that are not rows (a CSV header). The sink is aborted (what it stored removed) on any failure.
 */
export async function storeUpload(
  body: Readable,
  sink: NodeJS.WritableStream & { abort(): Promise<void> },
  limits: ImportLimits,
  headerLines: number,
): Promise<number> {
  const counter = new LineCounter(limits.maxRows + headerLines, limits.maxBytes);
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
