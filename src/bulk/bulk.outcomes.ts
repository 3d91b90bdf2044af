/**
 * How a chunk's outcomes are stored (bulk.repository.ts): the smaller form a worker's run writes,
 * and each command's outcome read back from either form.
 */
import type { ItemOutcome } from './bulk.repository.js';

/**
 * A chunk's outcomes as stored since 2026-11-25: the time they were reached (a run records a chunk's
 * outcomes at one time), each command's outcome in the order of `subscriptionIds` (one name when
 * every one is the same) and the reasons, in the same order, when any command has one. On FerretDB
 * a write costs by the size of the document written: ten chunks' outcomes of 100, one object per
 * command as before, took 21–33 ms to record; as one name each, 12–18 ms; all alike, 9–10 ms (two
 * to three such writes in a 3000-id drain). Chunks recorded earlier hold an `ItemOutcome[]`.
 */
export interface StoredOutcomes {
  readonly at: string;
  readonly outcome: ItemOutcome['outcome'] | readonly ItemOutcome['outcome'][];
  readonly reasons?: readonly (string | null)[];
}

/** The outcomes in the smaller form when they were reached at one time (always, from a worker's run); otherwise as given. */
export function storedOutcomes(outcomes: readonly ItemOutcome[]): StoredOutcomes | ItemOutcome[] {
  const at = outcomes[0]?.at;
  if (at === undefined || outcomes.some((o) => o.at !== at)) return [...outcomes];
  const first = outcomes[0]!.outcome;
  const alike = outcomes.every((o) => o.outcome === first);
  return {
    at,
    outcome: alike ? first : outcomes.map((o) => o.outcome),
    ...(outcomes.some((o) => o.reason !== null) ? { reasons: outcomes.map((o) => o.reason) } : {}),
  };
}

/** Each command's outcome, whichever form the chunk's were stored in. */
export function itemOutcomes(stored: StoredOutcomes | readonly ItemOutcome[], subscriptionIds: readonly string[]): ItemOutcome[] {
  if (Array.isArray(stored)) return stored as ItemOutcome[];
  const { at, outcome, reasons } = stored as StoredOutcomes;
  return subscriptionIds.map((subscriptionId, i) => ({
    subscriptionId,
    outcome: typeof outcome === 'string' ? outcome : outcome[i]!,
    reason: reasons?.[i] ?? null,
    at,
  }));
}
