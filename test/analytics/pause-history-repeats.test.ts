/**
 * The pause history recorded twice over steps that overlap (two relays that took the same events
 * in different batches, or a record repeated with more events than its first try had): each pause
 * counts once, whatever each record held and in whichever order they ran. On the real database,
 * through the repository the relay records with.
 */
import { randomUUID } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PauseHistoryRepository, type PauseStep } from '../../src/analytics/pause-history.repository.js';
import { databaseUri } from '../support/service.js';

let client: MongoClient;
let db: Db;
beforeAll(async () => {
  client = await new MongoClient(databaseUri(`pause_repeats_${randomUUID().slice(0, 8)}`)).connect();
  db = client.db();
});
afterAll(async () => {
  await db?.dropDatabase();
  await client?.close();
});

/** The first n of a merchant's pauses, as the events of one batch tell them. */
const started = (merchantId: string, n: number, at: string): PauseStep[] =>
  Array.from({ length: n }, (_, i) => ({
    start: {
      eventId: `${merchantId}-pause-${i}`,
      subscriptionId: `sub-${i}`,
      at,
      reason: null,
      cause: 'merchant' as const,
      planId: 'plan',
    },
  }));

describe('a record repeated over more steps than its first try', () => {
  it.each([
    ['the smaller first', [2, 5]],
    ['the larger first', [5, 2]],
  ])('counts each pause once (%s)', async (_, sizes) => {
    const history = new PauseHistoryRepository(db, 100);
    const merchantId = randomUUID();
    const at = '2026-11-20T10:00:00.000000Z';
    for (const n of sizes) await history.record(merchantId, started(merchantId, n, at));
    const [day] = await history.daysBetween(merchantId, '2026-11-20', '2026-11-20');
    expect(day?.cells.reduce((sum, cell) => sum + cell.started, 0)).toBe(5);
  });
});
