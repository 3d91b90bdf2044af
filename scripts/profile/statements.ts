/**
 * `npx tsx scripts/profile/statements.ts`: what an update costs on the database by statement and by
 * document, with no service around it. 8 merchants of 500 subscription-sized documents (as
 * `npm run load` seeds); each round pauses (then resumes) 200 documents as ten updateMany of 20
 * one after another, as one updateMany of 200, as one bulk write of ten updateMany of 20, and as
 * 200 statements of one document each in bulk writes of 16 (as a run's shared writes mostly are),
 * each with a mark and an outbox entry as a bulk command's update has; and reads 200 as ten finds
 * of 20 and as one of 200. PROFILE_ROUNDS (default 3) rounds. On FerretDB the first three updates
 * cost about the same: it costs mostly by document, not by round trip; a statement of its own for
 * each document costs about twice as much (docs/engine.md, "What a document costs").
 */
import type { AnyBulkWriteOperation, Filter, UpdateFilter } from 'mongodb';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { openScratchDatabase } from '../support.js';

const ROUNDS = Number(process.env.PROFILE_ROUNDS ?? 3);
interface Doc {
  _id: string;
  merchantId: string;
  status: string;
  bulkCommands: string[];
  outbox: { key: string; status: string; cause: { kind: string; requestId: string } }[];
  pad: string;
}
const log = createLogger('warn');
const scratch = await openScratchDatabase(loadConfig(), 'statements', log);
try {
  const docs = scratch.db.collection<Doc>('subs');
  await docs.insertMany(
    Array.from({ length: 8 * 500 }, (_, i) => ({
      _id: `m${i % 8}_${Math.floor(i / 8)}`,
      merchantId: `m${i % 8}`,
      status: 'fulfilled',
      bulkCommands: [],
      outbox: [],
      pad: 'x'.repeat(600),
    })),
  );
  const ids = (merchant: number, from: number, count: number) => Array.from({ length: count }, (_, i) => `m${merchant}_${from + i}`);
  const timed = async (fn: () => Promise<unknown>) => {
    const start = performance.now();
    await fn();
    return performance.now() - start;
  };
  const rows: Record<string, number[]> = {};
  const note = (name: string, ms: number) => (rows[name] ??= []).push(ms);
  for (let round = 0; round < ROUNDS; round++) {
    const [from, to] = round % 2 === 0 ? ['fulfilled', 'paused'] : ['paused', 'fulfilled'];
    const update = (k: number): UpdateFilter<Doc> => ({
      $set: { status: to },
      $push: {
        bulkCommands: `r${round}_${k}:applied`,
        outbox: { key: `r${round}_${k}`, status: to, cause: { kind: 'bulk', requestId: `r${round}_${k}` } },
      },
    });
    const filter = (merchant: number, k: number, count: number): Filter<Doc> => ({
      _id: { $in: ids(merchant, k * count, count) },
      merchantId: `m${merchant}`,
      status: from,
      bulkCommands: { $nin: ['none'] },
    });
    note(
      'ten updateMany of 20, one after another',
      await timed(async () => {
        for (let k = 0; k < 10; k++) await docs.updateMany(filter(0, k, 20), update(k));
      }),
    );
    note('one updateMany of 200', await timed(() => docs.updateMany(filter(1, 0, 200), update(0))));
    const bulk: AnyBulkWriteOperation<Doc>[] = Array.from({ length: 10 }, (_, k) => ({
      updateMany: { filter: filter(2, k, 20), update: update(k) },
    }));
    note('one bulk write of ten updateMany of 20', await timed(() => docs.bulkWrite(bulk, { ordered: false })));
    const single: AnyBulkWriteOperation<Doc>[] = Array.from({ length: 200 }, (_, k) => ({
      updateMany: { filter: filter(4, k, 1), update: update(k) },
    }));
    note(
      '200 updateMany of 1, in bulk writes of 16',
      await timed(async () => {
        for (let k = 0; k < single.length; k += 16) await docs.bulkWrite(single.slice(k, k + 16), { ordered: false });
      }),
    );
    note(
      'ten finds of 20',
      await timed(async () => {
        for (let k = 0; k < 10; k++) await docs.find({ _id: { $in: ids(3, k * 20, 20) }, merchantId: 'm3' }).toArray();
      }),
    );
    note('one find of 200', await timed(() => docs.find({ _id: { $in: ids(3, 0, 200) }, merchantId: 'm3' }).toArray()));
  }
  console.log(`engine: ${scratch.engine} ${scratch.version}; 200 documents each, ${ROUNDS} rounds (ms)`);
  console.log('| what | rounds (ms) |\n|---|---|');
  for (const [name, ms] of Object.entries(rows)) console.log(`| ${name} | ${ms.map((m) => m.toFixed(0)).join(', ')} |`);
} finally {
  await scratch.close();
}
