/**
 * The fleet knows itself: every `serve` and `worker` process records a heartbeat (role, version,
 * host, pid, started, last seen) in the `processes` collection every HEARTBEAT_INTERVAL_MS, one
 * document per process by its own `_id` (an upsert served by `_id`). A process unseen for
 * STALE_INTERVALS intervals is taken as gone: every read filters on `lastSeenAt`, so a killed
 * process drops out of the list within that bound, whatever the clean-up does. The clean-up is
 * a TTL index on `expiresAt` where the server has one (MongoDB removes within about a minute
 * after), else (expirySweeps, src/db/workarounds.ts) the retention sweeper of worker processes (db/retention.ts) deletes
 * the expired ones (`expiredHeartbeats`). A
 * process that stops cleanly deletes its own document at once.
 *
 * The collection holds one small document per process, so reading all of it is cheap on any
 * engine (no index needed beyond `_id`); it is not merchant-owned and not sharded.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Collection, Db } from 'mongodb';
import { ensureTtlIndex } from '../db/retention.js';
import type { Expiring } from '../db/retention.js';
import { Periodic } from '../lib/periodic.js';
import type { Logger } from '../logger.js';

export const PROCESSES_COLLECTION = 'processes';
/** A process unseen for this many intervals is gone. */
export const STALE_INTERVALS = 3;

export type ProcessRole = 'serve' | 'worker';

interface ProcessDocument {
  _id: string;
  role: ProcessRole;
  /** Whether it answers HTTP requests (serve; the rate limit is shared among these). */
  http: boolean;
  version: string;
  host: string;
  pid: number;
  startedAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
}

export interface LiveProcess {
  readonly id: string;
  readonly role: ProcessRole;
  readonly http: boolean;
  readonly version: string;
  readonly host: string;
  readonly pid: number;
  readonly startedAt: string;
  readonly lastSeenAt: string;
}

export function staleAfterMs(intervalMs: number): number {
  return intervalMs * STALE_INTERVALS;
}

/** The live processes, oldest first: one read of the whole (small) collection, filtered by last seen. */
export async function liveProcesses(db: Db, intervalMs: number, now = Date.now()): Promise<LiveProcess[]> {
  const docs = await db
    .collection<ProcessDocument>(PROCESSES_COLLECTION)
    .find({ lastSeenAt: { $gt: new Date(now - staleAfterMs(intervalMs)) } })
    .toArray();
  return docs
    .sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime())
    .map((d) => ({
      id: d._id,
      role: d.role,
      http: d.http,
      version: d.version,
      host: d.host,
      pid: d.pid,
      startedAt: d.startedAt.toISOString(),
      lastSeenAt: d.lastSeenAt.toISOString(),
    }));
}

/** Heartbeats past their expiry (gone processes), for the retention sweeper where no TTL index deletes them (db/retention.ts). */
export function expiredHeartbeats(db: Db): Expiring {
  const collection = db.collection<ProcessDocument>(PROCESSES_COLLECTION);
  return { deleteExpired: async (now = new Date()) => (await collection.deleteMany({ expiresAt: { $lte: now } })).deletedCount };
}

export interface HeartbeatOptions {
  readonly role: ProcessRole;
  readonly http: boolean;
  readonly version: string;
  readonly intervalMs: number;
  readonly ttlIndexes: boolean;
  /** Told the live processes after every beat (the shared rate limit takes its share from them). */
  readonly onFleet?: (processes: readonly LiveProcess[]) => void;
}

export class Heartbeat {
  readonly id = randomUUID();
  private readonly collection: Collection<ProcessDocument>;
  private readonly startedAt = new Date();
  private readonly beats: Periodic;
  private readonly log: Logger;

  constructor(
    private readonly db: Db,
    private readonly options: HeartbeatOptions,
    log: Logger,
  ) {
    this.collection = db.collection<ProcessDocument>(PROCESSES_COLLECTION);
    this.log = log.child({ component: 'fleet' });
    // Every interval exactly: the processes' list counts a process stale after a number of them.
    this.beats = new Periodic(() => this.beat(), {
      everyMs: options.intervalMs,
      jitter: 0,
      failed: (error) => this.log.warn({ err: error }, 'heartbeat failed; retried at the next'),
    });
  }

  /** Records the first beat (so that this process counts before it takes requests), then one every interval. */
  async start(): Promise<void> {
    await ensureTtlIndex(this.collection, this.options.ttlIndexes);
    await this.beat();
    this.beats.start();
  }

  private async beat(): Promise<void> {
    const now = new Date();
    const { role, http, version, intervalMs } = this.options;
    await this.collection.updateOne(
      { _id: this.id },
      {
        $set: { lastSeenAt: now, expiresAt: new Date(now.getTime() + staleAfterMs(intervalMs)) },
        $setOnInsert: { role, http, version, host: hostname(), pid: process.pid, startedAt: this.startedAt },
      },
      { upsert: true },
    );
    if (this.options.onFleet) this.options.onFleet(await liveProcesses(this.db, intervalMs, now.getTime()));
  }

  /** Stops beating and leaves the list at once. */
  async stop(): Promise<void> {
    await this.beats.stop();
    await this.collection
      .deleteOne({ _id: this.id })
      .catch((error: unknown) => this.log.warn({ err: error }, 'could not remove the heartbeat; it drops out by itself'));
  }
}

export const DEFAULT_HEARTBEAT_MS = 5_000;
