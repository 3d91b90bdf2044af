/**
 * The rows of an import's file, each with the file's line it starts on, read as a stream from the
 * first: NDJSON a line at a time; CSV by csv-parse, as RFC 4180 reads it (a quoted field may span
 * lines and double its quotes), under the header of its first record. A row whose externalId an
 * earlier row named is rejected: what the earlier rows named is kept here, so that a run going on
 * from the middle of a file reads its start again, and the rule needs no read of the database.
 */
import { createInterface } from 'node:readline';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CsvError, parse } from 'csv-parse';
import type { ChunkLine } from './imports.apply.js';
import { csvHeader, parseCsvRecord, parseNdjsonLine, type ImportFormat, type ParsedRow } from './imports.rows.js';

export async function* fileRows(file: Readable, format: ImportFormat): AsyncGenerator<ChunkLine> {
  const named = new Set<string>();
  for await (const { line, parsed } of format === 'ndjson' ? ndjsonRows(file) : csvRows(file)) {
    const externalId = 'row' in parsed ? parsed.row.externalId : parsed.externalId;
    const repeated = 'row' in parsed && named.has(parsed.row.externalId);
    if (externalId !== undefined) named.add(externalId);
    yield { line, parsed: repeated ? { rejected: 'externalId: named by an earlier line of this file', externalId } : parsed };
  }
}

async function* ndjsonRows(file: Readable): AsyncGenerator<ChunkLine> {
  const lines = createInterface({ input: file, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of lines) {
      line++;
      if (text.trim() !== '') yield { line, parsed: parseNdjsonLine(text) };
    }
  } finally {
    lines.close();
  }
}

/** Why csv-parse refused a record, in the words of a row's reason. */
function csvRefusal(error: CsvError): string {
  if (error.code === 'CSV_QUOTE_NOT_CLOSED') return 'not valid CSV: a quoted field never closes';
  if (error.code === 'CSV_INVALID_CLOSING_QUOTE') return 'not valid CSV: a closing quote is not followed by a comma or a line end';
  return 'not valid CSV';
}

/**
 * CSV records with the line each starts on: csv-parse counts the line each ends on, and the lines
 * inside its quoted fields (or, for a record it refused, inside its raw text) come before it. Line ends are made `\n` first, because csv-parse counts
 * a `\r\n` inside a quoted field as two lines.
 */
async function* csvRows(file: Readable): AsyncGenerator<ChunkLine> {
  const parser = parse({
    bom: true,
    info: true,
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    raw: true,
  });
  const refused: ChunkLine[] = [];
  // A refused record's line: where csv-parse stopped, less the lines of the record read before (its `raw`).
  parser.on('skip', (error: CsvError & { readonly lines: number; readonly raw?: string }) => {
    const before = (error.raw ?? '').replace(/\n$/, '').split('\n').length - 1;
    refused.push({ line: error.lines - before, parsed: { rejected: csvRefusal(error) } });
  });
  // Its failure ends the loop below too: the parser is destroyed with it.
  const reading = pipeline(file, new LineEnds(), parser).catch(() => undefined);
  let header: ReturnType<typeof csvHeader> | undefined;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      const line = info.lines - record.reduce((n, field) => n + field.split('\n').length - 1, 0);
      while (refused.length > 0 && refused[0]!.line < line) yield refused.shift()!;
      if (!header) {
        header = csvHeader(record);
        continue;
      }
      const parsed: ParsedRow =
        'columns' in header ? parseCsvRecord(record, header.columns) : { rejected: `the header row: ${header.refused}` };
      yield { line, parsed };
    }
    yield* refused;
  } finally {
    parser.destroy();
    await reading;
  }
}

/** `\r\n` made `\n`, also where a chunk ends between the two. */
class LineEnds extends Transform {
  private carried = false;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let text = (this.carried ? '\r' : '') + chunk.toString('latin1');
    this.carried = text.endsWith('\r');
    if (this.carried) text = text.slice(0, -1);
    done(null, Buffer.from(text.replaceAll('\r\n', '\n'), 'latin1'));
  }

  override _flush(done: TransformCallback): void {
    done(null, this.carried ? Buffer.from('\r') : null);
  }
}
