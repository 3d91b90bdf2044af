/**
 * The patched FerretDB (patches/ferretdb-v1.24.2-id-pushdown.patch, and update-batch, which writes
 * the documents an update statement modifies in one transaction) gives the same answers as
 * FerretDB v1.24.2 as released (the other patch, push-slice, changes answers only where a `$push`
 * passes its `$slice`, which no case here does: test/subscriptions/bounded-lists.test.ts checks that): both run
 * side by side on identical data, every query and write shape the repositories use runs against
 * both, and the results and then every collection are compared document by document. A new shape
 * is one more entry in `cases`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BSON, MongoClient, ObjectId, type Db } from 'mongodb';
import { CACHE_DIR } from '../../src/db/embedded.js';
import { ensureFerretdbBinary, ferretdbBinaryPath, type RunningFerretdb, startFerretdb } from '../../src/db/ferretdb.js';
import { createLogger } from '../../src/logger.js';

const UNPATCHED = { patches: [] };
const hasGo = !spawnSync('go', ['version']).error;
const cached = existsSync(ferretdbBinaryPath(CACHE_DIR)) && existsSync(ferretdbBinaryPath(CACHE_DIR, UNPATCHED));
const runnable = hasGo || cached;
if (!runnable)
  console.log(
    'skipping the engine equivalence test: no Go toolchain (`go`) to build the patched and unpatched FerretDB, and neither is cached',
  );

const AT = '2026-11-23T00:00:00.000Z';
const STATUSES = ['fulfilled', 'paused', 'cancelled'] as const;
/** _id strings whose JSON text is escaped or multi-byte: the pushdown compares JSON text. */
const ODD_IDS = ['sub <&> "quoted"', 'sub\\back', 'sub é ü', 'sub 🙂', 'sub\u2028line', 'sub\ttab', ''];
const ids = (merchant: string, from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `sub_${merchant}_${String(from + i).padStart(3, '0')}`);
const oid = (n: number) => ObjectId.createFromHexString(n.toString(16).padStart(24, '0'));

const subs = (db: Db) => db.collection('subscriptions');
const keys = (db: Db) => db.collection('idempotencyKeys');
const jobs = (db: Db) => db.collection('jobs');
const events = (db: Db) => db.collection('events');
/** merchantId values an equality pushed down on the merchant index must still treat as MongoDB does (an array holding the value matches). */
const ODD_MERCHANTS: unknown[] = [['m1', 'm2'], ['m3'], [], 7, { m: 'm1' }, null, 'm1 <&> "q"', 'm1 é', '', '[m1]', '\\m1', 'm1\ttab'];

async function seed(db: Db): Promise<void> {
  await subs(db).createIndex({ merchantId: 1, _id: 1 }, { name: 'merchant_subscriptions' });
  await db.collection('merchants').createIndex({ apiKeyHash: 1 }, { unique: true, name: 'api_key_hash' });
  await db
    .collection('merchants')
    .insertMany(['m1', 'm2'].map((m) => ({ _id: m as never, name: m, apiKeyHash: `hash-${m}`, createdAt: new Date(AT) })));
  const key = (id: string, expiresAt: string | null) => ({ id, hash: `hash-${id}`, prefix: 'sk_abc', createdAt: AT, expiresAt });
  await db.collection('merchants').insertOne({
    _id: 'm3' as never,
    name: 'm3',
    createdAt: new Date(AT),
    keys: [key('k1', null), key('k2', AT)],
    keysVersion: 1,
    keysLastUsedAt: { k1: AT },
  });
  const subscription = (merchantId: string) => (_id: string, i: number) => ({
    _id,
    merchantId,
    planId: 'plan',
    status: STATUSES[i % 3],
    cycle: i,
    createdAt: AT,
    modifiedAt: AT,
  });
  await subs(db).insertMany([
    ...ids('m1', 0, 150).map(subscription('m1')),
    ...ODD_IDS.map(subscription('m1')),
    ...ids('m2', 0, 150).map(subscription('m2')),
  ] as never[]);
  await keys(db).insertMany(
    Array.from({ length: 20 }, (_, i) => ({
      _id: `m1:key${i}`,
      fingerprint: `f${i}`,
      state: i % 2 ? 'done' : 'in_flight',
      createdAt: new Date(Date.parse(AT) - i * 3_600_000),
      expiresAt: new Date(Date.parse(AT) + (i - 10) * 3_600_000),
    })) as never[],
  );
  await events(db).createIndex({ merchantId: 1, _id: -1 }, { name: 'merchant_events' });
  await events(db).createIndex({ merchantId: 1, type: 1, _id: -1 }, { name: 'merchant_events_by_type' });
  await events(db).insertMany([
    ...Array.from({ length: 60 }, (_, i) => ({
      _id: `evt_${String(i).padStart(3, '0')}`,
      merchantId: i % 3 ? 'm1' : 'm2',
      type: i % 2 ? 'subscription.paused' : 'subscription.resumed',
    })),
    ...ODD_MERCHANTS.map((merchantId, i) => ({ _id: `odd_${i}`, merchantId, type: 'subscription.paused' })),
    { _id: 'odd_absent', type: 'subscription.paused' },
  ] as never[]);
  await jobs(db).insertMany(
    Array.from({ length: 30 }, (_, i) => ({ _id: oid(i + 1), name: 'chunk', lockedAt: i % 2 ? new Date(AT) : null })),
  );
}

const owned = ids('m1', 0, 40);
const mixed = [...ids('m1', 100, 120), ...ids('m2', 0, 10), 'absent-1', 'absent-2', ...ODD_IDS];
const page = (db: Db, after: string, limit: number) =>
  subs(db)
    .find({ merchantId: 'm1', _id: { $gt: after as never } })
    .sort({ _id: 1 })
    .limit(limit)
    .toArray();

interface Case {
  readonly name: string;
  readonly run: (db: Db) => Promise<unknown>;
  /** The answer's order is part of it (a sort); otherwise, as on MongoDB, it is not, and documents are compared by _id. */
  readonly ordered?: boolean;
}

// Run in this order on both engines; each write is followed by a comparison of every collection.
const cases: Case[] = [
  { name: 'find {_id, merchantId}: own', run: (db) => subs(db).findOne({ _id: 'sub_m1_007' as never, merchantId: 'm1' }) },
  { name: 'find {_id, merchantId}: foreign merchant', run: (db) => subs(db).findOne({ _id: 'sub_m2_007' as never, merchantId: 'm1' }) },
  { name: 'find {_id, merchantId}: absent id', run: (db) => subs(db).findOne({ _id: 'absent' as never, merchantId: 'm1' }) },
  {
    name: 'find {_id, merchantId}: escaped and multi-byte ids',
    run: (db) => Promise.all(ODD_IDS.map((_id) => subs(db).findOne({ _id: _id as never, merchantId: 'm1' }))),
  },
  { name: 'find {_id: {$eq}, merchantId}', run: (db) => subs(db).findOne({ _id: { $eq: 'sub_m1_008' as never }, merchantId: 'm1' }) },
  {
    name: 'find {_id: {$eq: <a document>}} compares with the document',
    run: (db) =>
      subs(db)
        .find({ _id: { $eq: { $in: ['sub_m1_001'] } as never } })
        .toArray(),
  },
  {
    name: 'ownedStatuses: {_id: {$in}, merchantId}, projection _id, status',
    run: (db) =>
      subs(db)
        .find({ _id: { $in: mixed as never[] }, merchantId: 'm1' }, { projection: { _id: 1, status: 1 } })
        .toArray(),
  },
  {
    name: 'findMany: {_id: {$in}, merchantId}, own, foreign and absent ids',
    run: (db) =>
      subs(db)
        .find({ _id: { $in: mixed as never[] }, merchantId: 'm1' })
        .toArray(),
  },
  {
    name: '{_id: {$in}, merchantId}: foreign merchant only',
    run: (db) =>
      subs(db)
        .find({ _id: { $in: ids('m2', 0, 20) as never[] }, merchantId: 'm1' })
        .toArray(),
  },
  {
    name: '{_id: {$in}, merchantId}: no id exists',
    run: (db) =>
      subs(db)
        .find({ _id: { $in: ['x', 'y'] as never[] }, merchantId: 'm1' })
        .toArray(),
  },
  {
    name: '{_id: {$in: []}}',
    run: (db) =>
      subs(db)
        .find({ _id: { $in: [] as never[] }, merchantId: 'm1' })
        .toArray(),
  },
  {
    name: '{_id: {$in}} with a number among the ids',
    run: (db) =>
      subs(db)
        .find({ _id: { $in: ['sub_m1_001', 7] as never[] } })
        .toArray(),
  },
  {
    name: '{_id: {$in}, merchantId, status}',
    run: (db) =>
      subs(db)
        .find({ _id: { $in: owned as never[] }, merchantId: 'm1', status: 'fulfilled' })
        .toArray(),
  },
  {
    name: 'aggregate [$match {_id: {$in}, merchantId}, $group by status]',
    run: (db) =>
      subs(db)
        .aggregate([{ $match: { _id: { $in: mixed }, merchantId: 'm1' } }, { $group: { _id: '$status', n: { $sum: 1 } } }])
        .toArray(),
  },
  {
    name: 'merchants.exists: countDocuments {_id}, limit 1',
    run: (db) => Promise.all(['m1', 'm3'].map((_id) => db.collection('merchants').countDocuments({ _id: _id as never }, { limit: 1 }))),
  },
  {
    name: 'merchants.findByKeyHash: {keys.hash}, projection',
    run: (db) =>
      Promise.all(
        ['hash-k1', 'hash-k2', 'hash-none'].map((hash) =>
          db.collection('merchants').findOne({ 'keys.hash': hash }, { projection: { keys: 1 } }),
        ),
      ),
  },
  {
    name: 'idempotency findOne {_id}',
    run: (db) => Promise.all(['m1:key3', 'm1:none'].map((_id) => keys(db).findOne({ _id: _id as never }))),
  },
  {
    name: 'ObjectId _id: equality and $in with a condition',
    run: (db) =>
      Promise.all([
        jobs(db).findOne({ _id: oid(3) }),
        jobs(db)
          .find({ _id: { $in: [oid(1), oid(2), oid(99)] }, lockedAt: null })
          .toArray(),
      ]),
  },
  {
    name: 'page by {merchantId, _id: {$gt}} sorted by _id, limit',
    ordered: true,
    run: async (db) => [await page(db, '', 5), await page(db, 'sub_m1_145', 5), await page(db, 'sub_m1_148', 10), await page(db, '~', 5)],
  },
  {
    name: 'events page {merchantId, _id: {$lt}} sorted by _id desc, limit',
    ordered: true,
    run: (db) =>
      Promise.all(
        ['~', 'evt_040', 'evt_002', 'a'].map((before) =>
          events(db)
            .find({ merchantId: 'm1', _id: { $lt: before as never } })
            .sort({ _id: -1 })
            .limit(4)
            .toArray(),
        ),
      ),
  },
  {
    name: 'events page by type {merchantId, type, _id: {$lt}}',
    ordered: true,
    run: (db) =>
      events(db)
        .find({ merchantId: 'm2', type: 'subscription.paused', _id: { $lt: 'odd' as never } })
        .sort({ _id: -1 })
        .limit(5)
        .toArray(),
  },
  {
    name: '{merchantId}: arrays holding it, numbers, documents, null, absent',
    run: (db) => Promise.all(['m1', 'm2', 'm3'].map((merchantId) => events(db).find({ merchantId }).toArray())),
  },
  {
    name: '{merchantId: {$eq}}',
    run: (db) =>
      events(db)
        .find({ merchantId: { $eq: 'm2' } })
        .toArray(),
  },
  {
    name: '{merchantId}: escaped, multi-byte, empty and bracketed strings',
    run: (db) =>
      Promise.all(ODD_MERCHANTS.filter((m) => typeof m === 'string').map((merchantId) => events(db).find({ merchantId }).toArray())),
  },
  {
    name: '{merchantId}: a merchant with nothing stored',
    run: (db) =>
      events(db)
        .find({ merchantId: 'm9', _id: { $lt: '~' as never } })
        .sort({ _id: -1 })
        .limit(1)
        .toArray(),
  },
  {
    name: '{merchantId: {$ne}} and {merchantId: {$in}} (not pushed down)',
    run: (db) =>
      Promise.all([
        events(db)
          .find({ merchantId: { $ne: 'm1' } })
          .toArray(),
        events(db)
          .find({ merchantId: { $in: ['m2', 'm3'] } })
          .toArray(),
      ]),
  },
  {
    name: 'count {merchantId}, and a field that leads no index {type}',
    run: (db) =>
      Promise.all([events(db).countDocuments({ merchantId: 'm1' }), events(db).countDocuments({ type: 'subscription.resumed' })]),
  },
  {
    name: 'subscriptions page {merchantId, status, _id: {$gt}}',
    ordered: true,
    run: (db) =>
      subs(db)
        .find({ merchantId: 'm2', status: 'paused', _id: { $gt: 'sub_m2_050' as never } })
        .sort({ _id: 1 })
        .limit(5)
        .toArray(),
  },
  // Writes.
  {
    name: 'updateMany and deleteMany {merchantId, type} on events',
    run: async (db) => [
      await events(db).updateMany({ merchantId: 'm1', type: 'subscription.paused' }, { $set: { seen: true } }),
      await events(db).deleteMany({ merchantId: 'm3' }),
    ],
  },
  {
    name: 'transition: findOneAndUpdate {_id, merchantId, status}, returnDocument after',
    run: (db) =>
      subs(db).findOneAndUpdate(
        { _id: 'sub_m1_000' as never, merchantId: 'm1', status: 'fulfilled' },
        { $set: { status: 'paused', modifiedAt: 'T1' } },
        { returnDocument: 'after' },
      ),
  },
  {
    name: 'transition: status already changed',
    run: (db) =>
      subs(db).findOneAndUpdate(
        { _id: 'sub_m1_000' as never, merchantId: 'm1', status: 'fulfilled' },
        { $set: { status: 'paused', modifiedAt: 'T2' } },
        { returnDocument: 'after' },
      ),
  },
  {
    name: 'transition: foreign merchant',
    run: (db) =>
      subs(db).findOneAndUpdate(
        { _id: 'sub_m2_003' as never, merchantId: 'm1', status: 'fulfilled' },
        { $set: { status: 'paused', modifiedAt: 'T3' } },
        { returnDocument: 'after' },
      ),
  },
  {
    name: 'transition: escaped id',
    run: (db) =>
      subs(db).findOneAndUpdate(
        { _id: ODD_IDS[0] as never, merchantId: 'm1', status: 'fulfilled' },
        { $set: { status: 'paused', modifiedAt: 'T4' } },
        { returnDocument: 'after' },
      ),
  },
  {
    name: 'transitionMany: updateMany {_id: {$in}, merchantId, status}',
    run: (db) =>
      subs(db).updateMany(
        { _id: { $in: mixed as never[] }, merchantId: 'm1', status: 'fulfilled' },
        { $set: { status: 'paused', modifiedAt: 'T5' } },
      ),
  },
  {
    name: 'updateMany {_id: {$in}, merchantId, status}: nothing matches',
    run: (db) =>
      subs(db).updateMany(
        { _id: { $in: ids('m2', 0, 30) as never[] }, merchantId: 'm1', status: 'fulfilled' },
        { $set: { status: 'paused' } },
      ),
  },
  {
    name: 'bulk command: updateMany {_id: {$in}, merchantId, status, marks $nin} with $set and $push $each $slice, twice',
    run: async (db) => {
      const notReached = { _id: { $in: mixed as never[] }, merchantId: 'm1', bulkCommands: { $nin: ['r1:applied', 'r1:noop'] } };
      const mark = (kind: string) => ({ bulkCommands: { $each: [`r1:${kind}`], $slice: -32 } }) as never;
      const once = () =>
        subs(db).updateMany(
          { ...notReached, status: 'fulfilled' },
          { $set: { status: 'paused', modifiedAt: 'T6' }, $push: mark('applied') },
        );
      return [await once(), await subs(db).updateMany({ ...notReached, status: 'paused' }, { $push: mark('noop') }), await once()];
    },
  },
  {
    name: 'bulk command states: find {_id: {$in}, merchantId}, projection status and marks',
    run: (db) =>
      subs(db)
        .find({ _id: { $in: mixed as never[] }, merchantId: 'm1' }, { projection: { status: 1, bulkCommands: 1 } })
        .toArray(),
  },
  { name: 'finished chunks: countDocuments {_id: {$in}}', run: (db) => subs(db).countDocuments({ _id: { $in: mixed as never[] } }) },
  {
    name: 'insertMany unordered with duplicate ids',
    run: (db) =>
      subs(db).insertMany(
        [
          { _id: 'sub_m1_001', merchantId: 'm1' },
          { _id: 'new-1', merchantId: 'm1' },
          { _id: 'new-1', merchantId: 'm1' },
        ] as never[],
        { ordered: false },
      ),
  },
  {
    name: 'idempotency claim: insertOne new, then the same _id',
    run: async (db) => [
      await keys(db).insertOne({ _id: 'm1:new' as never, state: 'in_flight' }),
      await keys(db)
        .insertOne({ _id: 'm1:new' as never, state: 'in_flight' })
        .catch(errorOf),
    ],
  },
  {
    name: 'idempotency complete: updateOne {_id}',
    run: (db) => keys(db).updateOne({ _id: 'm1:new' as never }, { $set: { state: 'done', status: 202, body: { a: 1 } } }),
  },
  {
    name: 'idempotency release: deleteOne {_id, state}: state differs, then matches',
    run: async (db) => [
      await keys(db).deleteOne({ _id: 'm1:key1' as never, state: 'in_flight' }),
      await keys(db).deleteOne({ _id: 'm1:key2' as never, state: 'in_flight' }),
    ],
  },
  {
    name: 'idempotency reclaim: deleteOne {_id, createdAt}',
    run: (db) => keys(db).deleteOne({ _id: 'm1:key4' as never, createdAt: new Date(Date.parse(AT) - 4 * 3_600_000) }),
  },
  { name: 'deleteExpired: deleteMany {expiresAt: {$lte}}', run: (db) => keys(db).deleteMany({ expiresAt: { $lte: new Date(AT) } }) },
  {
    name: 'deleteMany {_id: {$in}, merchantId}',
    run: (db) => subs(db).deleteMany({ _id: { $in: [...ids('m1', 140, 145), ...ids('m2', 140, 145)] as never[] }, merchantId: 'm1' }),
  },
  {
    name: 'merchants.replaceKeys: updateOne {_id, keysVersion} $set keys and version, $unset a last-used entry; a stale version matches nothing',
    run: async (db) => {
      const merchants = db.collection('merchants');
      const keys = [{ id: 'k3', hash: 'hash-k3', prefix: 'sk_def', createdAt: AT, expiresAt: null }];
      const replace = (_id: string, version: unknown) =>
        merchants.updateOne(
          { _id: _id as never, keysVersion: version },
          { $set: { keys, keysVersion: 2 }, $unset: { 'keysLastUsedAt.k1': '' } },
        );
      return [await replace('m3', 1), await replace('m3', 1)];
    },
  },
  {
    name: 'merchants.recordLastUsed: bulkWrite updateOne {_id} $max keysLastUsedAt.<id>, later then earlier',
    run: (db) =>
      db.collection('merchants').bulkWrite(
        ['2026-11-23T10:00:00.000000Z', '2026-11-23T09:00:00.000000Z'].map((at) => ({
          updateOne: { filter: { _id: 'm3' as never }, update: { $max: { 'keysLastUsedAt.k3': at } } },
        })),
        { ordered: false },
      ),
  },
  // update-batch writes a statement's documents 256 at a time, and those modified before an error as upstream did.
  {
    name: 'updateMany of every subscription (more than one batch of 256), then a count of them',
    run: async (db) => [await subs(db).updateMany({}, { $set: { touched: 1 } }), await subs(db).countDocuments({ touched: 1 })],
  },
  {
    name: 'updateMany that fails part way ($inc on a string): the documents before it stay written, the rest not',
    run: async (db) => {
      const counters = db.collection('counters');
      await counters.insertMany([
        { _id: 'a', n: 1 },
        { _id: 'b', n: 2 },
        { _id: 'c', n: 'x' },
        { _id: 'd', n: 3 },
      ] as never[]);
      return [await counters.updateMany({}, { $inc: { n: 1 } }).catch(errorOf), await counters.find().sort({ _id: 1 }).toArray()];
    },
  },
  {
    name: 'ObjectId _id: updateOne and deleteOne with a condition',
    run: async (db) => [
      await jobs(db).updateOne({ _id: oid(4), lockedAt: null }, { $set: { lockedAt: new Date(AT) } }),
      await jobs(db).deleteOne({ _id: oid(5), lockedAt: null }),
    ],
  },
];

/** What a caller sees of a failed write: the error code and which writes failed. */
function errorOf(error: unknown): unknown {
  const e = error as { code?: number; writeErrors?: { index: number; code: number }[] | { index: number; code: number } };
  const writeErrors = e.writeErrors === undefined ? undefined : [e.writeErrors].flat().map((w) => [w.index, w.code]);
  return { error: e.code, writeErrors };
}

const byId = (a: unknown, b: unknown) => {
  const key = (d: unknown) => JSON.stringify(BSON.EJSON.serialize({ id: (d as { _id?: unknown })?._id ?? null }));
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
};
/** Canonical Extended JSON; unsorted answers with their documents in _id order. */
function canonical(value: unknown, ordered: boolean): unknown {
  const sortDeep = (v: unknown): unknown =>
    Array.isArray(v) ? (v.every((d) => d && typeof d === 'object' && '_id' in d) ? [...v].sort(byId) : v.map(sortDeep)) : v;
  return BSON.EJSON.serialize(ordered ? value : sortDeep(value), { relaxed: false });
}

async function dump(db: Db): Promise<unknown> {
  const names = (await db.listCollections().toArray()).map((c) => c.name).sort();
  return Object.fromEntries(await Promise.all(names.map(async (n) => [n, canonical(await db.collection(n).find().toArray(), false)])));
}

describe.skipIf(!runnable)('patched FerretDB answers as FerretDB v1.24.2 as released', () => {
  const log = createLogger('warn');
  const engines: { server: RunningFerretdb; client: MongoClient; db: Db }[] = [];
  beforeAll(async () => {
    for (const build of [UNPATCHED, undefined]) {
      const server = await startFerretdb(await ensureFerretdbBinary(CACHE_DIR, log, build), log);
      const client = await new MongoClient(server.uri).connect();
      engines.push({ server, client, db: client.db('equivalence') });
    }
    for (const { db } of engines) await seed(db);
  });
  afterAll(async () => {
    for (const { server, client } of engines) await client.close().then(() => server.stop());
  });

  it('the patched engine serves _id equality and $in from the _id index; the released one scans', async () => {
    const plans = await Promise.all(
      engines.map(({ db }) =>
        subs(db)
          .find({ _id: { $in: owned as never[] }, merchantId: 'm1' })
          .explain(),
      ),
    );
    expect(JSON.stringify(plans[0]!.queryPlanner)).toMatch(/SCAN/);
    expect(JSON.stringify(plans[1]!.queryPlanner)).toMatch(/USING INDEX \S+__id_/);
  });

  it("the patched engine serves a merchant's page {merchantId, _id: {$lt}} from the merchant index; the released one scans", async () => {
    const plans = await Promise.all(
      engines.map(({ db }) =>
        events(db)
          .find({ merchantId: 'm1', _id: { $lt: 'evt_040' as never } })
          .sort({ _id: -1 })
          .limit(2)
          .explain(),
      ),
    );
    expect(JSON.stringify(plans[0]!.queryPlanner)).toMatch(/SCAN/);
    expect(JSON.stringify(plans[1]!.queryPlanner)).toMatch(/USING INDEX \S+_merchant_events/);
    expect(JSON.stringify(plans[1]!.queryPlanner)).not.toMatch(/SCAN/);
  });

  it.each(cases)('$name: same answer and, after it, the same data', async ({ run, ordered = false }) => {
    const answers: unknown[] = [];
    for (const { db } of engines) answers.push(canonical(await run(db).catch(errorOf), ordered));
    expect(answers[1]).toEqual(answers[0]);
    const dumps = await Promise.all(engines.map(({ db }) => dump(db)));
    expect(dumps[1]).toEqual(dumps[0]);
  });
});
