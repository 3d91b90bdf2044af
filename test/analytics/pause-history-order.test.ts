/**
 * The pause history pairs each pause with the end that follows it in its subscription's events,
 * whatever order the relays record them in (docs/analytics.md#how-the-figures-are-kept): an end
 * recorded again after the next pause began, an end recorded after a later pause, an end before
 * its pause, and random histories recorded in shuffled, repeated and concurrent batches. On the
 * real database, through the repository the relay records with.
 */
import { randomUUID } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { cellsOf, type PauseEnd } from '../../src/analytics/analytics.rules.js';
import { PauseHistoryRepository, type PauseStep } from '../../src/analytics/pause-history.repository.js';
import { loadConfig } from '../../src/config.js';
import { engineFor } from '../../src/main/compose-stores.js';
import { databaseUri } from '../support/service.js';
import { cannotHoldWithout } from '../support/workarounds.js';
import { seededRandom } from '../support/seeded-random.js';

let client: MongoClient;
let db: Db;
beforeAll(async () => {
  client = await new MongoClient(databaseUri(`pause_order_${randomUUID().slice(0, 8)}`)).connect();
  db = client.db();
});
afterAll(async () => {
  await db?.dropDatabase();
  await client?.close();
});

/** The repository as the service makes it on this run's engine (its statements per command, its per-document queue). */
function historyOnThisEngine(): PauseHistoryRepository {
  const engine = engineFor(inject('dbCapabilities'), loadConfig({ DB_WORKAROUNDS: process.env.DB_WORKAROUNDS }).dbWorkarounds);
  return new PauseHistoryRepository(db, engine.workarounds.statementsPerCommand, engine.mutex);
}

const DAY = 86_400_000;
const BASE = Date.parse('2026-11-02T08:00:00.000Z');
/** Each test's own event ids (a pause's id is its event's, across merchants). */
let tag = '';
beforeEach(() => {
  tag = randomUUID().slice(0, 8);
});
/** An event's id and time: ids sort as the events list orders them (by time). */
const stamp = (ms: number, name: string) => ({
  eventId: `${ms.toString(36).padStart(10, '0')}-${name}-${tag}`,
  at: new Date(ms).toISOString(),
});
const start = (subscriptionId: string, ms: number, name: string): PauseStep => ({
  start: { ...stamp(ms, name), subscriptionId, reason: null, cause: 'merchant', planId: 'plan' },
});
const end = (subscriptionId: string, ms: number, name: string, by: PauseEnd = 'customer'): PauseStep => ({
  end: { ...stamp(ms, name), subscriptionId, by },
});

interface StoredPause {
  _id: string;
  endEventId?: string;
  endedBy?: string;
}
async function pausesOf(merchantId: string): Promise<Map<string, { endEventId?: string; endedBy?: string }>> {
  const stored = await db.collection<StoredPause>('pauses').find({ merchantId }).sort({ _id: 1 }).toArray();
  return new Map(stored.map((p) => [p._id, { ...(p.endEventId ? { endEventId: p.endEventId, endedBy: p.endedBy } : {}) }]));
}

const idOf = (step: PauseStep) => ('start' in step ? step.start.eventId : step.end.eventId);

/** What each pause should hold, from the steps in event order: the end right after a start is its end. */
function expectedPauses(steps: readonly PauseStep[]) {
  const bySubscription = new Map<string, PauseStep[]>();
  for (const step of steps) {
    const id = 'start' in step ? step.start.subscriptionId : step.end.subscriptionId;
    bySubscription.set(id, [...(bySubscription.get(id) ?? []), step]);
  }
  const pauses = new Map<string, { endEventId?: string; endedBy?: string }>();
  for (const ordered of bySubscription.values()) {
    ordered.sort((a, b) => idOf(a).localeCompare(idOf(b)));
    ordered.forEach((step, i) => {
      if (!('start' in step)) return;
      const next = ordered[i + 1];
      pauses.set(step.start.eventId, next && 'end' in next ? { endEventId: next.end.eventId, endedBy: next.end.by } : {});
    });
  }
  return pauses;
}

describe('steps recorded out of their order', () => {
  it('an end recorded again after the next pause began leaves that pause open', async () => {
    const history = historyOnThisEngine();
    const merchantId = randomUUID();
    const [s0, e0, s1] = [start('sub', BASE, 's0'), end('sub', BASE + 60_000, 'e0'), start('sub', BASE + 120_000, 's1')];
    // Two relays took the resume: one recorded it, then the next pause was recorded, then the other relay.
    for (const batch of [[s0], [e0], [s1], [e0]]) await history.record(merchantId, batch);
    const pauses = await pausesOf(merchantId);
    expect(pauses).toEqual(expectedPauses([s0, e0, s1]));
    expect([...pauses.values()]).toEqual([{ endEventId: idOf(e0), endedBy: 'customer' }, {}]);
  });

  it.each([
    ['an end recorded after the next pause', ['s0', 's1', 'e0']],
    ['an end recorded before its pause', ['e0', 's0', 's1']],
    ['a pause and its end recorded after the next ones', ['s1', 'e1', 's0', 'e0']],
    ['the middle of a history recorded last', ['s0', 'e1', 'e0', 's1']],
  ])('%s: each pause ends with the end that follows it', async (_, order) => {
    const history = historyOnThisEngine();
    const merchantId = randomUUID();
    const steps = {
      s0: start('sub', BASE, 's0'),
      e0: end('sub', BASE + DAY, 'e0', 'hold'),
      s1: start('sub', BASE + 2 * DAY, 's1'),
      e1: end('sub', BASE + 3 * DAY, 'e1', 'cancelled'),
    } as Record<string, PauseStep>;
    for (const name of order) await history.record(merchantId, [steps[name]!]);
    expect(await pausesOf(merchantId)).toEqual(expectedPauses(order.map((name) => steps[name]!)));
  });
});

describe("a subscription's steps kept", () => {
  it('are its latest 16: a long history stays small, and an old end recorded again changes nothing', async () => {
    const history = historyOnThisEngine();
    const merchantId = randomUUID();
    const steps = Array.from({ length: 40 }, (_, k) =>
      k % 2 === 0 ? start('sub', BASE + k * 3_600_000, `s${k}`) : end('sub', BASE + k * 3_600_000, `e${k}`, 'merchant'),
    );
    for (const step of steps) await history.record(merchantId, [step]);
    await history.record(merchantId, [steps[1]!, steps[3]!]);
    expect(await pausesOf(merchantId)).toEqual(expectedPauses(steps));
    const kept = await db.collection<{ steps: unknown[] }>('pauseSteps').findOne({ _id: `${merchantId}:sub` as never });
    expect(kept?.steps).toHaveLength(16);
  });
});

describe('reads while records are made', () => {
  it.skipIf(cannotHoldWithout('keyedMutex', 'reads beside records of one merchant'))(
    "a read's stored cells never undo a record's mark of the day: the figures end counting every pause",
    async () => {
      const history = historyOnThisEngine();
      const merchantId = randomUUID();
      let recording = true;
      const reads = (async () => {
        while (recording) await history.daysBetween(merchantId, '2026-11-02', '2026-11-02');
      })();
      for (let k = 0; k < 40; k++) await history.record(merchantId, [start(`sub-${k}`, BASE + k * 1000, `s${k}`)]);
      recording = false;
      await reads;
      const [day] = await history.daysBetween(merchantId, '2026-11-02', '2026-11-02');
      expect(day?.cells.reduce((sum, cell) => sum + cell.started, 0)).toBe(40);
    },
  );
});

describe('random histories recorded in shuffled, repeated and concurrent batches', () => {
  it.skipIf(cannotHoldWithout('keyedMutex', 'records of one merchant at once')).each([1, 2, 3, 4])(
    'pair every pause as the events order it, with the figures to match (seed %i)',
    async (seed) => {
      const next = seededRandom(seed);
      const history = historyOnThisEngine();
      const merchantId = randomUUID();
      const ends: PauseEnd[] = ['merchant', 'schedule', 'hold', 'customer', 'billing', 'cancelled'];
      const steps: PauseStep[] = [];
      for (let sub = 0; sub < 30; sub++) {
        // Pauses and their ends alternate, a few hours apart, over a few days; some end with a pause still open.
        let ms = BASE + Math.floor(next() * DAY);
        const length = 1 + Math.floor(next() * 8);
        for (let k = 0; k < length; k++) {
          ms += Math.floor(next() * 10 * 3_600_000) + 1;
          steps.push(
            k % 2 === 0
              ? start(`sub-${sub}`, ms, `${sub}-${k}`)
              : end(`sub-${sub}`, ms, `${sub}-${k}`, ends[Math.floor(next() * ends.length)]),
          );
        }
      }
      // Batches as relays take them: mostly in order, some late, some taken twice.
      const shuffled = steps.map((step, i) => ({ step, key: i + next() * 40 })).sort((a, b) => a.key - b.key);
      const batches: PauseStep[][] = [];
      for (let i = 0; i < shuffled.length;) {
        const size = 1 + Math.floor(next() * 12);
        const batch = shuffled.slice(i, i + size).map((s) => s.step);
        batches.push(batch);
        if (next() < 0.2) batches.push(batch.filter(() => next() < 0.6));
        i += size;
      }
      // Three relays at once, each taking the next batch when its last is recorded.
      let taken = 0;
      const relay = async () => {
        while (taken < batches.length) {
          const batch = batches[taken++]!;
          if (batch.length > 0) await history.record(merchantId, batch);
        }
      };
      await Promise.all([relay(), relay(), relay()]);

      const expected = expectedPauses(steps);
      expect(await pausesOf(merchantId)).toEqual(expected);
      // The figures a read shows are those of the pauses in event order.
      const [from, to] = ['2026-11-01', '2026-11-12'];
      const days = await history.daysBetween(merchantId, from, to);
      const startedSteps = steps.flatMap((s) => ('start' in s ? [s.start] : []));
      const endOf = new Map(steps.flatMap((s) => ('end' in s ? [[s.end.eventId, s.end] as const] : [])));
      const pauses = startedSteps.map((s) => {
        const ended = endOf.get(expected.get(s.eventId)?.endEventId ?? '');
        return {
          day: s.at.slice(0, 10),
          startedAt: s.at,
          reason: s.reason,
          cause: s.cause,
          planId: s.planId,
          ...(ended ? { endedAt: ended.at, endedBy: ended.by } : {}),
        };
      });
      const byDay = [...new Set(pauses.map((p) => p.day))].sort();
      expect(days.map((d) => d.day)).toEqual(byDay);
      const sorted = (cells: readonly object[]) => cells.map((c) => JSON.stringify(c)).sort();
      for (const day of days) expect(sorted(day.cells)).toEqual(sorted(cellsOf(pauses.filter((p) => p.day === day.day))));
    },
  );
});
