/**
 * A chunk of an import's rows applied, as an upsert by externalId through the lifecycle's grouped
 * entry point (src/subscriptions/lifecycle.upsert.ts): a new externalId is created, with an id that
 * follows from the import and the line, so that a chunk applied again (its worker killed) finds its
 * rows done; a known one gets the row's planId, cycle and metadata; a row `cancelled` cancels; a row
 * whose status differs otherwise changes nothing (`status_differs`: pause state is the service's).
 */
import type { LifecycleService } from '../subscriptions/lifecycle.js';
import type { ChangeCause } from '../subscriptions/subscriptions.rules.js';
import { rowSubscriptionId, type RowRecord } from './imports.outcomes.js';
import type { ImportRow, ParsedRow } from './imports.rows.js';

export interface ChunkLine {
  readonly line: number;
  readonly parsed: ParsedRow;
}

/** A chunk to apply: its lines, checked already for an externalId an earlier line named. */
export interface Chunk {
  readonly merchantId: string;
  readonly importId: string;
  readonly lines: readonly ChunkLine[];
  readonly cause: ChangeCause;
  /** No event per row (unless the import asked for them). */
  readonly quiet: boolean;
}

export class ImportApplier {
  constructor(private readonly lifecycle: Pick<LifecycleService, 'upsertAll'>) {}

  /** The outcome of each line, in order. */
  async apply({ merchantId, importId, lines, cause, quiet }: Chunk): Promise<RowRecord[]> {
    const rows = lines.flatMap((l) => ('row' in l.parsed ? [{ line: l.line, row: l.parsed.row }] : []));
    const upserted = await this.lifecycle.upsertAll({
      merchantId,
      rows: rows.map(({ line, row }) => ({ id: rowSubscriptionId(importId, line), row })),
      cause,
      quiet,
    });
    const byLine = new Map(
      rows.map((r, i): [number, { row: ImportRow; outcome: (typeof upserted)[number] }] => [r.line, { row: r.row, outcome: upserted[i]! }]),
    );
    return lines.map(({ line, parsed }): RowRecord => {
      if ('rejected' in parsed)
        return {
          line,
          ...(parsed.externalId !== undefined ? { externalId: parsed.externalId } : {}),
          outcome: 'rejected',
          reason: parsed.rejected,
        };
      const { row, outcome } = byLine.get(line)!;
      return { line, externalId: row.externalId, ...outcome };
    });
  }
}
