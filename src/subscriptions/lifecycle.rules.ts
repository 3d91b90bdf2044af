/**
 * The lifecycle's rules apart from storage: what a merge patch (RFC 7396) changes of a subscription,
 * and the bounds the schema cannot state of the metadata it leaves.
 */
import { InvalidRequestError } from '../errors.js';
import type { Subscription, SubscriptionStatus } from './subscriptions.rules.js';

/** A new subscription's fields, as a create or an import's row gives them. */
export interface NewSubscription {
  readonly externalId: string;
  readonly planId: string;
  /** `cancelled` for an import's row only: the API creates none cancelled. */
  readonly status?: SubscriptionStatus;
  readonly cycle?: number;
  readonly metadata?: Readonly<Record<string, string>>;
}

/** At most this many metadata keys on a subscription, after a patch too. */
export const METADATA_KEYS_MAX = 20;

export interface SubscriptionPatch {
  readonly externalId?: string;
  readonly planId?: string;
  readonly cycle?: number;
  /** A key set to null is removed. */
  readonly metadata?: Readonly<Record<string, string | null>>;
}

export type PatchedField = 'planId' | 'cycle' | 'metadata' | 'externalId';

/** What a patch leaves: the fields it changed (in the schema's order), and their new values. */
export interface PatchOutcome {
  readonly changed: readonly PatchedField[];
  readonly set: { planId?: string; cycle?: number; externalId?: string; metadata?: Record<string, string> };
  /** The metadata is gone altogether (its last key removed). */
  readonly metadataRemoved: boolean;
}

function merged(current: Readonly<Record<string, string>> | undefined, patch: Readonly<Record<string, string | null>>) {
  const result: Record<string, string> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = value;
  }
  return result;
}

const sameMetadata = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

/** The changes `patch` makes to `current`; none when every field it sends is as stored. */
export function patchOutcome(current: Subscription, patch: SubscriptionPatch): PatchOutcome {
  const changed: PatchedField[] = [];
  const set: PatchOutcome['set'] = {};
  if (patch.planId !== undefined && patch.planId.toLowerCase() !== current.planId) {
    changed.push('planId');
    set.planId = patch.planId.toLowerCase();
  }
  if (patch.cycle !== undefined && patch.cycle !== current.cycle) {
    changed.push('cycle');
    set.cycle = patch.cycle;
  }
  let metadataRemoved = false;
  if (patch.metadata !== undefined) {
    const next = merged(current.metadata, patch.metadata);
    if (Object.keys(next).length > METADATA_KEYS_MAX)
      throw new InvalidRequestError(`metadata would hold ${Object.keys(next).length} keys; at most ${METADATA_KEYS_MAX}.`, [
        { path: '/metadata', message: `at most ${METADATA_KEYS_MAX} keys` },
      ]);
    if (!sameMetadata(next, current.metadata ?? {})) {
      changed.push('metadata');
      if (Object.keys(next).length === 0) metadataRemoved = true;
      else set.metadata = next;
    }
  }
  if (patch.externalId !== undefined && patch.externalId !== current.externalId) {
    changed.push('externalId');
    set.externalId = patch.externalId;
  }
  return { changed, set, metadataRemoved };
}

/** A row of an import, upserted by its externalId: the fields of a create. */
export interface UpsertRow {
  readonly externalId: string;
  readonly planId: string;
  readonly status?: Subscription['status'];
  readonly cycle?: number;
  readonly metadata?: Readonly<Record<string, string>>;
}

/**
 * What an upsert by externalId does (docs/lifecycle.md, "Import from a file"): `create` when none
 * has the externalId; `done` when the one that has it is the id the row's create gives (the row
 * applied before, by a run cut short); `differs` when its status differs from the row's otherwise
 * than by cancelling it (pause state is the service's); else `patch` with the row's planId, cycle
 * and metadata (exactly the row's keys), and `cancels` when the row cancels it.
 */
export type UpsertPlan =
  | { readonly kind: 'create' }
  | { readonly kind: 'done' }
  | { readonly kind: 'differs' }
  | { readonly kind: 'patch'; readonly patch: SubscriptionPatch; readonly cancels: boolean };

export function upsertPlan(current: Subscription | undefined, row: UpsertRow, createdId: string): UpsertPlan {
  if (!current) return { kind: 'create' };
  if (current.id === createdId) return { kind: 'done' };
  const cancels = row.status === 'cancelled' && current.status !== 'cancelled';
  if (row.status !== undefined && row.status !== current.status && !cancels) return { kind: 'differs' };
  const removed = Object.fromEntries(Object.keys(current.metadata ?? {}).map((k): [string, null] => [k, null]));
  const metadata = row.metadata === undefined && current.metadata === undefined ? undefined : { ...removed, ...row.metadata };
  const patch = { planId: row.planId, ...(row.cycle !== undefined ? { cycle: row.cycle } : {}), ...(metadata ? { metadata } : {}) };
  return { kind: 'patch', patch, cancels };
}
