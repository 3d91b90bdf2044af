/**
 * The one grouped write of every change to subscriptions (docs/design.md, "One write path"):
 * subscriptions the rules made alike (the same state read, the same change) are written by one
 * statement each, filtered on what was read; every statement goes in the engine's parts; and how
 * many each matched is compared with how many it named, so that the caller knows whether another
 * writer changed some meanwhile (then it reads them again, or finds its own marks).
 */
import type { AnyBulkWriteOperation, Collection, Document, Filter, UpdateFilter } from 'mongodb';
import { bulkWriteInParts } from '../db/mongo-helpers.js';
import type { SubscriptionDocument } from './subscription.document.js';

/** Subscriptions written by one statement, and what the caller keeps of them (the first one's read state, their outcome). */
export interface WriteGroup<T> {
  readonly ids: string[];
  readonly value: T;
}

/** Groups subscriptions by a key that says what makes them alike; the first of a key gives its group's value. */
export class Grouping<T> {
  private readonly groups = new Map<string, WriteGroup<T>>();

  /** Adds `id` to the group of `key`, made by `value` when it is the first; returns that group. */
  add(key: unknown, id: string, value: () => T): WriteGroup<T> {
    const name = JSON.stringify(key);
    const group = this.groups.get(name) ?? { ids: [], value: value() };
    group.ids.push(id);
    this.groups.set(name, group);
    return group;
  }

  all(): WriteGroup<T>[] {
    return [...this.groups.values()];
  }
}

/** Where a grouped write goes: the subscriptions collection, at most this many statements per command (absent: no limit). */
export interface WriteTarget {
  readonly collection: Collection<SubscriptionDocument>;
  readonly statementsPerCommand?: number | undefined;
}

/** What a grouped write did: how many its statements matched and named; `complete` when every named one matched. */
export interface GroupedWritten {
  readonly written: number;
  readonly expected: number;
  readonly complete: boolean;
}

/** A group's statement: the state its subscriptions were read in (and the marks they must not carry yet), and its update. */
export interface GroupStatement {
  readonly filter: Filter<SubscriptionDocument>;
  readonly update: UpdateFilter<SubscriptionDocument>;
}

/** Writes each group by the statement `write` makes of it, in the engine's parts, counting what they matched. */
export async function writeGroups<T>(
  target: WriteTarget,
  groups: readonly WriteGroup<T>[],
  write: (group: WriteGroup<T>) => AnyBulkWriteOperation<SubscriptionDocument>,
): Promise<GroupedWritten> {
  const expected = groups.reduce((n, g) => n + g.ids.length, 0);
  const written = groups.length > 0 ? await bulkWriteInParts(target.collection, groups.map(write), target.statementsPerCommand) : 0;
  return { written, expected, complete: written === expected };
}

/**
 * A group of one whose caller answers with the subscription as its write leaves it (a single
 * change): the same statement, as one findAndModify, so that the answer costs no read after it.
 * `projection`: what the answer holds, where the engine takes a projection there (db/workarounds.ts);
 * absent: the whole document. Null when the subscription was not as the statement expects.
 */
export async function writeOne(
  target: WriteTarget & { readonly projection?: Document | undefined },
  group: WriteGroup<GroupStatement>,
): Promise<SubscriptionDocument | null> {
  const { filter, update } = group.value;
  const options = target.projection
    ? ({ returnDocument: 'after', projection: target.projection } as const)
    : ({ returnDocument: 'after' } as const);
  return target.collection.findOneAndUpdate({ ...filter, _id: group.ids[0]! }, update, options);
}
