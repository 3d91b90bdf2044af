/**
 * An import's rows, checked apart from storage: one NDJSON object a line, or a CSV record under its
 * header (`externalId,planId,status,cycle`, then `metadata.<key>` columns; imports.file.ts reads
 * them). A row that breaks a rule of `POST /v2/subscriptions` is rejected with its reason; the
 * others go on.
 */
import { normaliseId, type SubscriptionStatus } from '../subscriptions/subscriptions.rules.js';

export type ImportFormat = 'ndjson' | 'csv';

/** A row as the file gives it, checked. */
export interface ImportRow {
  readonly externalId: string;
  readonly planId: string;
  readonly status?: SubscriptionStatus;
  readonly cycle?: number;
  readonly metadata?: Readonly<Record<string, string>>;
}

export type ParsedRow = { readonly row: ImportRow } | { readonly rejected: string; readonly externalId?: string };

const FIELDS = new Set(['externalId', 'planId', 'status', 'cycle', 'metadata']);
const STATUSES: readonly string[] = ['fulfilled', 'paused', 'cancelled'];
const METADATA_KEYS_MAX = 20;

/** The rules of POST /v2/subscriptions that the schema states, for a row that did not go through it. */
function checked(fields: Record<string, unknown>): ParsedRow {
  const externalId = typeof fields.externalId === 'string' ? fields.externalId : undefined;
  const reject = (rejected: string): ParsedRow => ({
    rejected,
    ...(externalId !== undefined ? { externalId: externalId.slice(0, 255) } : {}),
  });
  const unknown = Object.keys(fields).find((f) => !FIELDS.has(f));
  if (unknown !== undefined) return reject(`${unknown.slice(0, 40)}: not a field of a subscription`);
  if (externalId === undefined || externalId.length < 1 || externalId.length > 255)
    return reject('externalId: 1 to 255 characters required');
  const planId = typeof fields.planId === 'string' ? normaliseId(fields.planId) : undefined;
  if (planId === undefined) return reject('planId: not a UUID');
  const { status, cycle, metadata } = fields;
  if (status !== undefined && (typeof status !== 'string' || !STATUSES.includes(status)))
    return reject('status: fulfilled, paused or cancelled');
  if (cycle !== undefined && (typeof cycle !== 'number' || !Number.isSafeInteger(cycle) || cycle < 0))
    return reject('cycle: an integer ≥ 0');
  if (metadata !== undefined) {
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return reject('metadata: an object of strings');
    const entries = Object.entries(metadata);
    if (entries.length > METADATA_KEYS_MAX) return reject(`metadata: at most ${METADATA_KEYS_MAX} keys`);
    if (entries.some(([k, v]) => k.length < 1 || k.length > 40 || typeof v !== 'string' || v.length > 500))
      return reject('metadata: keys of 1 to 40 characters, values strings of at most 500');
  }
  return {
    row: {
      externalId,
      planId,
      ...(status !== undefined ? { status: status as SubscriptionStatus } : {}),
      ...(cycle !== undefined ? { cycle: cycle } : {}),
      ...(metadata !== undefined && Object.keys(metadata).length > 0 ? { metadata: metadata as Record<string, string> } : {}),
    },
  };
}

export function parseNdjsonLine(line: string): ParsedRow {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { rejected: 'not a JSON object' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { rejected: 'not a JSON object' };
  return checked(value as Record<string, unknown>);
}

/** A CSV file's header: the column each field goes to (`metadata.<key>` into metadata), or why it is refused. */
export function csvHeader(columns: readonly string[]): { readonly columns: readonly string[] } | { readonly refused: string } {
  const unknown = columns.find((c) => !['externalId', 'planId', 'status', 'cycle'].includes(c) && !/^metadata\..{1,40}$/.test(c));
  if (unknown !== undefined) return { refused: `unknown column ${unknown.slice(0, 60)}` };
  if (!columns.includes('externalId') || !columns.includes('planId')) return { refused: 'the header row needs externalId and planId' };
  return { columns };
}

/** A CSV record's fields under its header's columns. */
export function parseCsvRecord(values: readonly string[], columns: readonly string[]): ParsedRow {
  if (values.length !== columns.length) return { rejected: `not ${columns.length} CSV fields` };
  const fields: Record<string, unknown> = {};
  const metadata: Record<string, string> = {};
  columns.forEach((column, i) => {
    const value = values[i]!;
    if (column.startsWith('metadata.')) {
      if (value !== '') metadata[column.slice('metadata.'.length)] = value;
    } else if (column === 'cycle') {
      if (value !== '') fields.cycle = /^\d{1,16}$/.test(value) ? Number(value) : value;
    } else if (value !== '' || column === 'externalId') fields[column] = value;
  });
  if (Object.keys(metadata).length > 0) fields.metadata = metadata;
  return checked(fields);
}
