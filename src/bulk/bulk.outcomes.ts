/**
 * How a chunk's outcomes are stored (bulk.repository.ts): the smaller form a worker's run writes,
 * and each command's outcome read back from either form.
 */
import type { CommandOutcome } from '../subscriptions/bulk-commands.rules.js';

/** One command's outcome in a chunk, as the request's status and export show it. */
export interface ItemOutcome {
  readonly subscriptionId: string;
  readonly outcome: CommandOutcome['outcome'];
  readonly reason: string | null;
  readonly at: string;
}

/**
 * A chunk's outcomes as stored: the time they were reached (a run records a chunk's outcomes at
 * one time), each command's outcome in the order of `subscriptionIds` (one name when every one is
 * the same) and the reasons, in the same order, when any command has one. A write costs by the
 * size of the document written, all the more where an engine rewrites whole documents
 * (docs/engine.md#what-a-document-costs), so the smaller the form, the quicker a run records.
 */
export interface StoredOutcomes {
  readonly at: string;
  readonly outcome: ItemOutcome['outcome'] | readonly ItemOutcome['outcome'][];
  readonly reasons?: readonly (string | null)[];
}

/** A chunk's outcomes (at least one, all reached at one time) in their stored form. */
export function storedOutcomes(outcomes: readonly ItemOutcome[]): StoredOutcomes {
  const [first] = outcomes;
  if (!first) throw new Error('a chunk holds at least one command');
  const alike = outcomes.every((o) => o.outcome === first.outcome);
  return {
    at: first.at,
    outcome: alike ? first.outcome : outcomes.map((o) => o.outcome),
    ...(outcomes.some((o) => o.reason !== null) ? { reasons: outcomes.map((o) => o.reason) } : {}),
  };
}

/** Each command's outcome, from their stored form. */
export function itemOutcomes({ at, outcome, reasons }: StoredOutcomes, subscriptionIds: readonly string[]): ItemOutcome[] {
  return subscriptionIds.map((subscriptionId, i) => ({
    subscriptionId,
    outcome: typeof outcome === 'string' ? outcome : outcome[i]!,
    reason: reasons?.[i] ?? null,
    at,
  }));
}
