/**
 * Upserts by `_id` that race each other: MongoDB retries an upsert whose insert lost to another's
 * (since 4.2, for an equality on a unique index); FerretDB answers E11000 instead. The repositories'
 * grouped writes (src/db/mongo-helpers.ts#bulkWriteInParts) send such an upsert once more, so
 * neither writer fails, on either engine. Real concurrency: clients of their own on the tests' server.
 */
import { randomUUID } from 'node:crypto';
import { MongoClient, type Collection } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkWriteInParts } from '../../src/db/mongo-helpers.js';
import { databaseUri } from '../support/service.js';

const WRITERS = 6;
const ROUNDS = 15;
const clients: MongoClient[] = [];
let collections: Collection<{ _id: string; [field: string]: unknown }>[];
beforeAll(async () => {
  const uri = databaseUri(`upsert_races_${randomUUID().slice(0, 8)}`);
  for (let i = 0; i < WRITERS; i++) clients.push(await new MongoClient(uri).connect());
  collections = clients.map((c) => c.db().collection('races'));
});
afterAll(async () => {
  await clients[0]?.db().dropDatabase();
  await Promise.all(clients.map((c) => c.close()));
});

describe('bulkWriteInParts with upserts of one new _id at once', () => {
  it('none fails with a duplicate key, and the document is there once', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const _id = randomUUID();
      await Promise.all(
        collections.map((collection, writer) =>
          bulkWriteInParts(collection, [
            { updateOne: { filter: { _id }, update: { $setOnInsert: { first: true }, $set: { [`w${writer}`]: round } }, upsert: true } },
          ]),
        ),
      );
      // (Which writers' $set survive is the engine's: FerretDB's concurrent updates of one document can undo each other.)
      expect(await collections[0]!.find({ _id }).toArray()).toEqual([expect.objectContaining({ _id, first: true })]);
    }
  });
});
