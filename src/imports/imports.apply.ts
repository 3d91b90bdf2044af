/**
 * A chunk of an import's rows applied, as an upsert by externalId through the lifecycle's writes
 * (src/subscriptions/lifecycle.ts): a new externalId is created, with an id that follows from the
 * import and the line, so that a chunk applied again (its worker killed) finds its rows done; a
 * known one gets the row's planId, cycle and metadata; a row `cancelled` cancels; a row whose
 * status differs otherwise changes nothing (`status_differs`: pause state is the service's).
 */
import { hash } from 'node:crypto';
import type { ChangeOptions, LifecycleService } from '../subscriptions/lifecycle.js';
import { ExternalIdInUseError } from '../subscriptions/subscriptions.errors.js';
import type { ChangeCause, Subscription } from '../subscriptions/subscriptions.rules.js';
import type { ImportRow, ParsedRow } from './imports.rows.js';
import type { RowDocument, RowOutcome } from './imports.store.js';

/** The id a row's new subscription gets: the same on every run of its chunk. */
export function rowSubscriptionId(importId: string, line: number): string {
  const hex = hash('sha256', `${importId}:${line}`, 'hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export interface ChunkLine {
  readonly line: number;
  readonly parsed: ParsedRow;
}

type Outcome = Pick<RowDocument, 'outcome'> & Partial<Pick<RowDocument, 'reason' | 'subscriptionId'>>;

/** Metadata as a merge patch that leaves exactly the row's keys. */
function metadataPatch(current: Subscription, row: ImportRow): Record<string, string | null> | undefined {
  if (row.metadata === undefined && current.metadata === undefined) return undefined;
  const patch: Record<string, string | null> = Object.fromEntries(Object.keys(current.metadata ?? {}).map((k) => [k, null]));
  return { ...patch, ...row.metadata };
}

export class ImportApplier {
  constructor(private readonly lifecycle: LifecycleService) {}

  /** The outcome of each line, in order; `namedBefore`: externalIds an earlier line of the file named. */
  async apply(
    merchantId: string,
    importId: string,
    lines: readonly ChunkLine[],
    namedBefore: ReadonlySet<string>,
    cause: ChangeCause,
    options: ChangeOptions,
  ): Promise<Omit<RowDocument, '_id'>[]> {
    const rows = lines.flatMap((l) => ('row' in l.parsed ? [l.parsed.row] : []));
    const existing = await this.lifecycle.findByExternalIds(merchantId, [...new Set(rows.map((r) => r.externalId))]);
    const named = new Set(namedBefore);
    const recorded: Omit<RowDocument, '_id'>[] = [];
    for (const { line, parsed } of lines) {
      const externalId = 'row' in parsed ? parsed.row.externalId : parsed.externalId;
      let outcome: Outcome;
      if ('rejected' in parsed) outcome = { outcome: 'rejected', reason: parsed.rejected };
      else if (named.has(parsed.row.externalId))
        outcome = { outcome: 'rejected', reason: 'externalId: named by an earlier line of this file' };
      else
        outcome = await this.applyRow(
          merchantId,
          rowSubscriptionId(importId, line),
          parsed.row,
          existing.get(parsed.row.externalId),
          cause,
          options,
        );
      if (externalId !== undefined) named.add(externalId);
      recorded.push({ merchantId, importId, line, ...(externalId !== undefined ? { externalId } : {}), ...outcome });
    }
    return recorded;
  }

  private async applyRow(
    merchantId: string,
    id: string,
    row: ImportRow,
    current: Subscription | undefined,
    cause: ChangeCause,
    options: ChangeOptions,
  ): Promise<Outcome> {
    if (!current || current.id === id) {
      try {
        const made = await this.lifecycle.create(merchantId, row, cause, { ...options, id });
        return { outcome: 'created', subscriptionId: made.id };
      } catch (error) {
        if (error instanceof ExternalIdInUseError)
          return { outcome: 'rejected', reason: `externalId: used by subscription ${error.existingId}` };
        throw error;
      }
    }
    const cancels = row.status === 'cancelled' && current.status !== 'cancelled';
    if (row.status !== undefined && row.status !== current.status && !cancels)
      return { outcome: 'unchanged', reason: 'status_differs', subscriptionId: current.id };
    const metadata = metadataPatch(current, row);
    const patch = { planId: row.planId, ...(row.cycle !== undefined ? { cycle: row.cycle } : {}), ...(metadata ? { metadata } : {}) };
    const updated = await this.lifecycle.update(merchantId, current.id, patch, cause, options);
    if (cancels) await this.lifecycle.cancel(merchantId, current.id, undefined, cause, options);
    const outcome: RowOutcome = cancels || updated.modifiedAt !== current.modifiedAt ? 'updated' : 'unchanged';
    return { outcome, subscriptionId: current.id };
  }
}
