/**
 * The outbox clear's cost on the embedded FerretDB, per cleared document (docs/performance.md, "Where the
 * time goes today"): 1000 subscriptions; each repetition pushes one entry into each of
 * a batch's documents, then clears them one way, and adds up the database server's CPU
 * (scripts/db-process.ts) across the clears alone. Three rounds of each variant, alternating.
 *   npx tsx scripts/profile/outbox-clear.ts            (BATCH=100 REPS=20 VARIANTS=none,pullAll,...)
 * `none` is an `$unset` by `_id $in` that compares nothing (unsafe as a clear: for scale only).
 */
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { createLogger } from '../../src/logger.js';
import { CACHE_DIR } from '../../src/db/embedded.js';
import { ensureFerretdbBinary, startFerretdb } from '../../src/db/ferretdb.js';
import { databaseProcess } from '../db-process.js';

const log = createLogger('warn');
const binary = await ensureFerretdbBinary(CACHE_DIR, log);
const db0 = await startFerretdb(binary, log);
const client = await MongoClient.connect(db0.uri);
interface Entry {
  key: string;
  type: string;
  seq: number;
  status: string;
  previousStatus: string;
  at: string;
  cause: { kind: string };
  subscription: { status: string; modifiedAt: string };
}
interface Doc {
  _id: string;
  merchantId: string;
  planId: string;
  status: string;
  cycle: number;
  createdAt: string;
  modifiedAt: string;
  recentPauses: string[];
  bulkCommands: string[];
  outbox?: Entry[];
}
const coll = client.db('micro').collection<Doc>('subscriptions');
const proc = databaseProcess(db0.uri)!;
const merchantId = 'mer_micro';
const N = 1000;
const now = new Date().toISOString();
await coll.insertMany(
  Array.from({ length: N }, (_, i) => ({
    _id: `sub_${String(i).padStart(6, '0')}${randomUUID().slice(0, 8)}`,
    merchantId,
    planId: 'plan_basic',
    status: 'active',
    cycle: 1,
    createdAt: now,
    modifiedAt: now,
    recentPauses: [now, now, now],
    bulkCommands: [],
  })),
);
const ids = (await coll.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id);
const entryFor = (): Entry => ({
  key: randomUUID(),
  type: 'subscription.paused',
  seq: 0,
  status: 'paused',
  previousStatus: 'active',
  at: new Date().toISOString(),
  cause: { kind: 'api' },
  subscription: { status: 'paused', modifiedAt: new Date().toISOString() },
});

type Holder = { _id: string; outbox: Entry[] };
async function push(batch: string[]): Promise<Holder[]> {
  const holders: Holder[] = [];
  for (const id of batch) holders.push({ _id: id, outbox: [entryFor()] });
  await coll.bulkWrite(
    holders.map((h) => ({ updateOne: { filter: { _id: h._id, merchantId }, update: { $push: { outbox: { $each: h.outbox } } } } })),
    { ordered: false },
  );
  return holders;
}
const variants: Record<string, ((h: Holder[]) => Promise<unknown>) | undefined> = {
  none: undefined,
  pullAll: (h) => coll.updateMany({ merchantId, _id: { $in: h.map((x) => x._id) } }, { $pullAll: { outbox: h.flatMap((x) => x.outbox) } }),
  chunk10: (h) =>
    coll.bulkWrite(
      chunks(h, 10).map((c) => ({
        updateMany: {
          filter: { merchantId, _id: { $in: c.map((x) => x._id) } },
          update: { $pullAll: { outbox: c.flatMap((x) => x.outbox) } },
        },
      })),
      { ordered: false },
    ),
  orExact: (h) => coll.updateMany({ merchantId, $or: h.map((x) => ({ _id: x._id, outbox: x.outbox })) }, { $unset: { outbox: '' } }),
  chunk25: (h) =>
    coll.bulkWrite(
      chunks(h, 25).map((c) => ({
        updateMany: {
          filter: { merchantId, _id: { $in: c.map((x) => x._id) } },
          update: { $pullAll: { outbox: c.flatMap((x) => x.outbox) } },
        },
      })),
      { ordered: false },
    ),
  sizeKeys: (h) =>
    coll.updateMany(
      {
        merchantId,
        _id: { $in: h.map((x) => x._id) },
        outbox: { $size: 1 },
        'outbox.key': { $in: h.flatMap((x) => x.outbox.map((e) => e.key)) },
      },
      { $unset: { outbox: '' } },
    ),
  keysPullAllOne: (h) =>
    coll.bulkWrite(
      h.map((x) => ({ updateOne: { filter: { _id: x._id, merchantId }, update: { $pullAll: { outbox: x.outbox } } } })),
      { ordered: false },
    ),
};
function chunks<T>(a: T[], k: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < a.length; i += k) out.push(a.slice(i, i + k));
  return out;
}
const BATCH = Number(process.env.BATCH ?? 100);
const REPS = Number(process.env.REPS ?? 20);
const names = (process.env.VARIANTS ?? Object.keys(variants).join(',')).split(',');
const results: Record<string, number[]> = {};
for (let round = 0; round < 3; round++) {
  for (const name of names) {
    const clear = variants[name];
    let used = 0;
    for (let r = 0; r < REPS; r++) {
      const start = (r * BATCH * 7 + round * 13) % (N - BATCH);
      const held = await push(ids.slice(start, start + BATCH));
      await new Promise((res) => setTimeout(res, 5));
      const cpu0 = proc.cpuUs();
      if (clear) await clear(held);
      else await coll.updateMany({ merchantId, _id: { $in: held.map((x) => x._id) } }, { $unset: { outbox: '' } });
      used += proc.cpuUs() - cpu0;
    }
    const left = await coll.countDocuments({ 'outbox.key': { $exists: true } });
    if (left > 0) {
      console.log(`${name}: ${left} outboxes left (not cleared)`);
      await coll.updateMany({}, { $unset: { outbox: '' } });
    }
    (results[name] ??= []).push(used / (REPS * BATCH));
  }
}
for (const [name, v] of Object.entries(results))
  console.log(name.padEnd(16), v.map((x) => x.toFixed(0)).join(' '), 'µs of database CPU per cleared document');
await client.close();
await db0.stop();
