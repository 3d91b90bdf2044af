/**
 * A bulk request's items as a CSV file (RFC 4180): written to the client batch by batch as they
 * are read, so a request of 100,000 items costs the memory of one batch, not of the file.
 */
import { Readable } from 'node:stream';
import type { StoredItem } from './bulk.status.js';

// The columns are named as the JSON items' fields are, so that a reader of either finds the same names.
export const CSV_HEADER = 'subscriptionId,outcome,reason,at';
export const CSV_TYPE = 'text/csv; charset=utf-8';

/** A field as RFC 4180 writes it: quoted, with its quotes doubled, when it holds a comma, a quote or a line break; null is empty. */
export function csvField(value: string | null): string {
  if (value === null) return '';
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

function csvRow({ subscriptionId, outcome, reason, at }: StoredItem): string {
  return `${[subscriptionId, outcome, reason, at].map(csvField).join(',')}\r\n`;
}

/**
 * The file's stream. The first batch is read before it is returned, so that a database failure
 * at the start is still answered as a problem (503); one later cuts the download short, which
 * the client sees as an incomplete answer, never as a shorter file.
 */
export async function csvStream(batches: AsyncIterable<StoredItem[]>): Promise<Readable> {
  const iterator = batches[Symbol.asyncIterator]();
  const first = await iterator.next();
  async function* lines(): AsyncGenerator<string> {
    yield `${CSV_HEADER}\r\n`;
    for (let next = first; !next.done; next = await iterator.next()) if (next.value.length > 0) yield next.value.map(csvRow).join('');
  }
  const stream = Readable.from(lines(), { objectMode: false });
  // A client that hangs up destroys the stream: the reads stop there.
  stream.once('close', () => void iterator.return?.());
  return stream;
}
