/**
 * The grouped upsert by externalId of an import's rows (docs/lifecycle.md, "Import from a file"):
 * the lifecycle's rules (lifecycle.rules.ts, upsertPlan) decide each row from one read of their
 * externalIds; the new subscriptions are claimed and inserted with one write each, the known ones
 * patched by one grouped write of conditional updates (grouped-write.ts). A row whose subscription
 * another writer changed meanwhile, and a row that cancels, go the single way (lifecycle.ts).
 */
import type { PerKeyQueue } from '../lib/keyed-mutex.js';
import type { ChangeNotifier } from './change-notifier.js';
import type { CancelCommand, UpdateCommand } from './command.js';
import { Grouping } from './grouped-write.js';
import { createdDocument, lifecycleEntry, newSubscription, patchWrite, whereUnchanged } from './lifecycle.entries.js';
import { patchOutcome, upsertPlan, type SubscriptionPatch, type UpsertRow } from './lifecycle.rules.js';
import type { ExpectedUpdate, LifecycleStore } from './lifecycle.store.js';
import type { PendingEvents } from './outbox.js';
import { withEvents } from './subscription.document.js';
import type { ChangeCause, Subscription } from './subscriptions.rules.js';
import type { ClockOf } from './subscriptions.service.js';

/** Rows upserted together, each with the id its create gives (the same on every run of the row). */
export interface UpsertCommand {
  readonly merchantId: string;
  readonly rows: readonly { readonly id: string; readonly row: UpsertRow }[];
  readonly cause: ChangeCause;
  /** No event per row (an import's default). */
  readonly quiet: boolean;
}

export type UpsertOutcome =
  | { readonly outcome: 'created' | 'updated' | 'unchanged'; readonly subscriptionId: string; readonly reason?: 'status_differs' }
  | { readonly outcome: 'rejected'; readonly reason: string };

/** A new subscription to insert: `claimed` when its externalId was claimed for it just now. */
interface Creating {
  readonly index: number;
  readonly claimed: boolean;
}

/** A known subscription's patch, as the rules planned it. */
interface Patching {
  readonly index: number;
  readonly current: Subscription;
  readonly patch: SubscriptionPatch;
  readonly cancels: boolean;
}

/** The single changes a row falls back to (LifecycleService's own). */
export interface SingleChanges {
  update(command: UpdateCommand): Promise<Subscription>;
  cancel(command: CancelCommand): Promise<Subscription>;
}

export class LifecycleUpserts {
  constructor(
    private readonly deps: {
      readonly store: LifecycleStore;
      readonly mutex: PerKeyQueue;
      readonly clockOf: ClockOf;
      readonly changes: ChangeNotifier<PendingEvents>;
      readonly single: SingleChanges;
    },
  ) {}

  /**
   * Each row's outcome, in order. The rows' externalIds are distinct. Their claims come first: an
   * externalId claimed now is new (no subscription has it), and only the others are read.
   */
  async upsertAll(command: UpsertCommand): Promise<UpsertOutcome[]> {
    const { merchantId, rows } = command;
    const free = await this.deps.store.claimFree(
      merchantId,
      rows.map(({ id, row }) => ({ externalId: row.externalId, id })),
    );
    const held = rows.filter((_, i) => !free[i]).map((r) => r.row.externalId);
    const existing = await this.deps.store.findByExternalIds(merchantId, held);
    const outcomes: UpsertOutcome[] = [];
    const creating: Creating[] = [];
    const patching: Patching[] = [];
    rows.forEach(({ id, row }, index) => {
      const current = existing.get(row.externalId);
      const plan = upsertPlan(current, row, id);
      if (plan.kind === 'create') creating.push({ index, claimed: free[index]! });
      else if (plan.kind === 'done') outcomes[index] = { outcome: 'created', subscriptionId: id };
      else if (plan.kind === 'differs') outcomes[index] = { outcome: 'unchanged', reason: 'status_differs', subscriptionId: current!.id };
      else patching.push({ index, current: current!, patch: plan.patch, cancels: plan.cancels });
    });
    for (const [index, outcome] of await this.createAll(command, creating)) outcomes[index] = outcome;
    for (const [index, outcome] of await this.patchAll(command, patching)) outcomes[index] = outcome;
    return outcomes;
  }

  /** Inserts the new subscriptions with one write; an externalId held already is claimed as claim() settles it first. */
  private async createAll(
    { merchantId, rows, cause, quiet }: UpsertCommand,
    creating: readonly Creating[],
  ): Promise<Map<number, UpsertOutcome>> {
    const outcomes = new Map<number, UpsertOutcome>();
    if (creating.length === 0) return outcomes;
    const now = (await this.deps.clockOf(merchantId)).timestamp();
    const made: PendingEvents[] = [];
    for (const { index, claimed } of creating) {
      const { id, row } = rows[index]!;
      const claim = claimed ? { claimed: true as const } : await this.deps.store.claim(merchantId, row.externalId, id);
      if (!claim.claimed) {
        outcomes.set(index, { outcome: 'rejected', reason: `externalId: used by subscription ${claim.heldBy}` });
        continue;
      }
      const subscription = newSubscription(merchantId, id, row, now);
      made.push({ subscription, entries: quiet ? [] : [lifecycleEntry('subscription.created', subscription, cause)] });
      outcomes.set(index, { outcome: 'created', subscriptionId: id });
    }
    await this.deps.store.insertAll(made.map((m) => createdDocument(m.subscription, m.entries)));
    if (!quiet && made.length > 0)
      this.deps.changes.notify(
        merchantId,
        made.map((m) => m.subscription.id),
        made,
      );
    return outcomes;
  }

  /**
   * Patches the known subscriptions by one grouped write, holding their queue; those another writer
   * changed meanwhile are patched again the single way, as are the rows that cancel (then cancelled).
   */
  private async patchAll(command: UpsertCommand, patching: readonly Patching[]): Promise<Map<number, UpsertOutcome>> {
    const { merchantId, cause, quiet } = command;
    const outcomes = new Map<number, UpsertOutcome>();
    const grouped = patching.filter((p) => !p.cancels);
    const again = await this.deps.mutex.runAll(
      grouped.map((p) => p.current.id),
      () => this.patchTogether(command, grouped, outcomes),
    );
    for (const p of again) {
      const updated = await this.deps.single.update({ merchantId, id: p.current.id, patch: p.patch, cause, quiet });
      outcomes.set(p.index, {
        outcome: updated.modifiedAt !== p.current.modifiedAt ? 'updated' : 'unchanged',
        subscriptionId: p.current.id,
      });
    }
    for (const p of patching.filter((c) => c.cancels)) {
      await this.deps.single.update({ merchantId, id: p.current.id, patch: p.patch, cause, quiet });
      await this.deps.single.cancel({ merchantId, id: p.current.id, cause, quiet });
      outcomes.set(p.index, { outcome: 'updated', subscriptionId: p.current.id });
    }
    return outcomes;
  }

  /** The grouped write of `patching`, its outcomes set in `outcomes`: resolves to those another writer changed first. */
  private async patchTogether(
    { merchantId, cause, quiet }: UpsertCommand,
    patching: readonly Patching[],
    outcomes: Map<number, UpsertOutcome>,
  ): Promise<Patching[]> {
    const at = (await this.deps.clockOf(merchantId)).timestamp();
    const groups = new Grouping<ExpectedUpdate>();
    const held: PendingEvents[] = [];
    const writing: Patching[] = [];
    for (const p of patching) {
      const outcome = patchOutcome(p.current, p.patch);
      if (outcome.changed.length === 0) {
        outcomes.set(p.index, { outcome: 'unchanged', subscriptionId: p.current.id });
        continue;
      }
      const { after, update, entries } = patchWrite(p.current, outcome, { at, cause, quiet });
      const expected = whereUnchanged(p.current);
      groups.add([expected, update, entries], p.current.id, () => ({ expected, update: withEvents(update, entries) }));
      if (entries.length > 0) held.push({ subscription: after, entries });
      writing.push(p);
    }
    const written = await this.deps.store.updateGroups(merchantId, groups.all());
    const changed = written.complete ? new Set(writing.map((p) => p.current.id)) : await this.writtenAt(merchantId, writing, at);
    for (const p of writing) if (changed.has(p.current.id)) outcomes.set(p.index, { outcome: 'updated', subscriptionId: p.current.id });
    const landed = held.filter((h) => changed.has(h.subscription.id));
    if (landed.length > 0)
      this.deps.changes.notify(
        merchantId,
        landed.map((h) => h.subscription.id),
        landed,
      );
    return writing.filter((p) => !changed.has(p.current.id));
  }

  /** The ids of these that the grouped write changed: those whose `modifiedAt` is its own. */
  private async writtenAt(merchantId: string, patching: readonly Patching[], at: string): Promise<Set<string>> {
    const now = await this.deps.store.findByExternalIds(
      merchantId,
      patching.flatMap((p) => (p.current.externalId !== undefined ? [p.current.externalId] : [])),
    );
    return new Set([...now.values()].filter((s) => s.modifiedAt === at).map((s) => s.id));
  }
}
