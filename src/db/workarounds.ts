/**
 * The engine workarounds, decided once from the server's capabilities (docs/design.md §8): each
 * is named by the capability whose absence turns it on. On a server that has them all (MongoDB)
 * none is built. The composition root (src/main/composition.ts) builds what this says and logs it at
 * start; the request pool is applied where the client is opened (mongo.ts).
 *
 * DB_WORKAROUNDS switches workarounds off (switchOff below), so that the MongoDB path runs on any
 * engine: each one named takes the value a server with every capability gets.
 */
import type { DbWorkarounds } from '../config.js';
import { ConfigError } from '../config.errors.js';
import type { Capabilities } from './capabilities.js';

/*
 * Not in the table: a form chosen for an engine's sake that a server with every capability applies
 * just as well, so every engine takes one path and no switch is built for it.
 *
 * - The events relay's outbox clear (src/subscriptions/outbox.store.ts) takes out the relayed entries
 *   with `$pullAll` of the entries themselves: FerretDB v1 accepts `$pull` with a condition, such
 *   as `{key: {$in: [...]}}`, and changes nothing. On MongoDB `$pullAll` removes what that `$pull`
 *   would, since the relay hands back each entry exactly as it was pushed or read (the same fields
 *   in the same order) and entries that share a key name one event; the update carries entries
 *   rather than keys, one merchant's share of a relay batch. How we test it:
 *   test/events/events-payloads.test.ts.
 * - An import's run (src/imports/imports.store.ts, download) reads its file's GridFS chunks a few at
 *   a time by their ids, each read to its end, instead of one cursor held open while it writes:
 *   on FerretDB's SQLite that open read keeps the write-ahead log from being checkpointed, and
 *   the writes slow as it grows. On MongoDB the reads by `_id` cost what the cursor's batches do.
 *   How we test it: test/imports/imports.test.ts (and bench (j) at 100,000 rows).
 */

/**
 * FerretDB's SQLite backend has one writer: with many requests changing subscriptions at once, the
 * writes wait on its lock and their tail grows past DB_TIMEOUT_MS. So requests get at most this
 * many connections there, and a request waits for one at most DB_SLOW_CAP_MS (while the server
 * answers the driver's checks: src/db/mongo.ts). Fewer queue single requests in the driver at a
 * cost in CPU; more take the writer from the bulk workers under mixed traffic (the figures for
 * 4, 8, 16 and 100: docs/engine.md#the-figures-behind-the-workarounds).
 */
export const ONE_WRITER_REQUEST_POOL = 8;

/**
 * Statements per write command where the server has one writer (capabilities.parallelWriters
 * false). FerretDB v1 (SQLite) holds a connection for each statement of an update command until
 * the whole command ends, so a large bulkWrite beside other work can exhaust its pool and stop
 * every client (docs/engine.md#the-figures-behind-the-workarounds). MongoDB has no such limit; a
 * few more round trips cost little.
 */
export const STATEMENTS_PER_COMMAND = 16;

/**
 * Documents one delete removes where each is a bound SQL variable (capabilities.largeStatements
 * false): FerretDB v1 (SQLite) removes what a filter matched with one `DELETE ... WHERE _id IN`,
 * and past SQLite's limit the delete fails and removes nothing. Each part's ids are read, then
 * deleted by them; the server matches each document against that `$in` list, so a part costs
 * about its size squared, and a few thousand is quicker than tens of thousands.
 */
export const DOCUMENTS_PER_DELETE = 2_000;

export interface Workarounds {
  /** Writes to one document that a conditional update changes (a subscription, and each of GUARDED in db/guarded.ts) are queued per document in this process. */
  readonly keyedMutex: boolean;
  /** Multi-statement writes go in commands of at most this many statements (db/mongo-helpers.ts); undefined: one command. */
  readonly statementsPerCommand: number | undefined;
  /** Bulk chunks and webhook batches run one at a time per process. */
  readonly oneJobAtATime: boolean;
  /** The events relay waits while this process applies bulk chunks or due schedules. */
  readonly relayPauses: boolean;
  /** Requests get at most this many database connections; undefined: the driver's default. */
  readonly requestPool: number | undefined;
  /** The poll reads the `scheduleClock` document before querying the subscriptions for due schedules. */
  readonly scheduleClock: boolean;
  /** Expired documents are deleted by a periodic sweep instead of TTL indexes. */
  readonly expirySweeps: boolean;
  /** A conditional update answers the whole document (its outbox and bulk marks too), not only what a read shows. */
  readonly wholeDocumentAnswers: boolean;
  /** Deletes that grow with the data go in parts of at most this many documents (db/mongo-helpers.ts deleteInParts); undefined: one statement. */
  readonly documentsPerDelete: number | undefined;
}

/** Why each workaround is on: the capability missing, and what it would cost without it. */
const REASONS: Readonly<Record<keyof Workarounds, { readonly missing: keyof Capabilities; readonly why: string }>> = {
  keyedMutex: {
    missing: 'atomicConditionalUpdate',
    why: 'a conditional update is not atomic against a concurrent one: writes to one subscription, merchant key set, test clock, webhook endpoint, pause policy, a bulk request (its undo) or the schedule clock are serialised within this process only',
  },
  statementsPerCommand: {
    missing: 'parallelWriters',
    why: `a write command holds a connection per statement: writes go in parts of ${STATEMENTS_PER_COMMAND} statements`,
  },
  oneJobAtATime: {
    missing: 'parallelWriters',
    why: 'parallel writes only contend for the one writer: bulk chunks are applied one at a time per process',
  },
  relayPauses: {
    missing: 'parallelWriters',
    why: 'the events relay waits while bulk chunks or due schedules are applied, so as not to slow them',
  },
  requestPool: {
    missing: 'parallelWriters',
    why: `requests get ${ONE_WRITER_REQUEST_POOL} database connections: more only queue on the writer's lock`,
  },
  scheduleClock: {
    missing: 'secondaryIndexes',
    why: 'the due query reads every subscription: polls read the scheduleClock document first',
  },
  expirySweeps: {
    missing: 'ttlIndexes',
    why: 'expired idempotency keys, bulk requests, events, deliveries and portal links are deleted by a periodic sweep',
  },
  wholeDocumentAnswers: {
    missing: 'updateProjection',
    why: "findAndModify takes no projection: a single change's answer carries the subscription's pending events and bulk marks, decoded and dropped",
  },
  documentsPerDelete: {
    missing: 'largeStatements',
    why: `a delete binds a SQL variable per document and fails past 32,766: deletes that grow with the data go in parts of ${DOCUMENTS_PER_DELETE}`,
  },
};

export function workaroundsFor(capabilities: Capabilities): Workarounds {
  const oneWriter = !capabilities.parallelWriters;
  return {
    keyedMutex: !capabilities.atomicConditionalUpdate,
    statementsPerCommand: oneWriter ? STATEMENTS_PER_COMMAND : undefined,
    oneJobAtATime: oneWriter,
    relayPauses: oneWriter,
    requestPool: oneWriter ? ONE_WRITER_REQUEST_POOL : undefined,
    scheduleClock: !capabilities.secondaryIndexes,
    expirySweeps: !capabilities.ttlIndexes,
    wholeDocumentAnswers: !capabilities.updateProjection,
    documentsPerDelete: capabilities.largeStatements ? undefined : DOCUMENTS_PER_DELETE,
  };
}

/** The workarounds turned on, each with the capability whose absence turned it on and why: for the log at start. */
export function describeWorkarounds(
  workarounds: Workarounds,
): { readonly workaround: WorkaroundName; readonly missing: string; readonly why: string }[] {
  return (Object.keys(REASONS) as (keyof Workarounds)[])
    .filter((name) => workarounds[name] !== false && workarounds[name] !== undefined)
    .map((name) => ({ workaround: name, ...REASONS[name] }));
}

export type WorkaroundName = keyof Workarounds;

/** Every workaround of the table, with the capability whose absence turns it on and why. */
export function everyWorkaround(): { readonly workaround: WorkaroundName; readonly missing: keyof Capabilities; readonly why: string }[] {
  return (Object.keys(REASONS) as WorkaroundName[]).map((name) => ({ workaround: name, ...REASONS[name] }));
}

/** The workarounds DB_WORKAROUNDS switches off; a name the table does not hold stops the boot. */
export function switchedOff(setting: DbWorkarounds): readonly WorkaroundName[] {
  const names = Object.keys(REASONS) as WorkaroundName[];
  if (setting === 'auto') return [];
  if (setting === 'off') return names;
  const unknown = setting.filter((name) => !(names as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new ConfigError(`DB_WORKAROUNDS names no workaround: ${unknown.join(', ')} (the workarounds: ${names.join(', ')})`);
  return setting as readonly WorkaroundName[];
}

/**
 * `decided` with the workarounds of `setting` switched off. A workaround is off as `false` (a flag)
 * or `undefined` (a setting), as a server with every capability gets it and as describeWorkarounds
 * reads it, so a new entry of the table is covered as it is.
 */
export function switchOff(decided: Workarounds, setting: DbWorkarounds = 'auto'): Workarounds {
  const off = switchedOff(setting);
  const entries = Object.entries(decided).map(([name, value]: [string, unknown]) => [
    name,
    off.includes(name as WorkaroundName) ? offValue(value) : value,
  ]);
  return Object.freeze(Object.fromEntries(entries)) as Workarounds;
}

function offValue(value: unknown): false | undefined {
  return typeof value === 'boolean' ? false : undefined;
}
