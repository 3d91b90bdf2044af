/**
 * What the whole fleet is doing, read from the database: what `subsvc status` prints and what the
 * fleet-wide gauges of /metrics show (identical on every process: aggregate them with max()).
 *
 * Every query is bounded; what each costs:
 * - live processes: the whole `processes` collection (one small document per process);
 * - queued chunks: a count capped at COUNT_CAP of `bulkJobs` (Agenda's collection, one document
 *   per chunk not yet finished, served by Agenda's name/nextRunAt index on MongoDB), and the
 *   oldest by `_id` (an ObjectId, so its creation time), served by `_id`;
 * - due schedules: a count capped at COUNT_CAP on `nextScheduledAt` (the due_schedules index);
 * - outbox: a count capped at COUNT_CAP of subscriptions holding entries (the sparse
 *   subscription_outbox index), and the oldest entry among the first OUTBOX_SAMPLE of them (no
 *   index orders the entries' times: an estimate, exact while the backlog is under the sample);
 * - disabled endpoints: a count capped at COUNT_CAP of `webhookEndpoints` by status (no index:
 *   endpoints are few per merchant).
 * FerretDB v1 uses no secondary index, so there each of these reads the whole collection it
 * counts (subscriptions included): fine for development, not what a large fleet runs on.
 */
import type { Db, Document, ObjectId } from 'mongodb';
import { JOBS_COLLECTION, JOB_NAME } from '../bulk/bulk.queue.js';
import { nowTimestamp } from '../lib/clock.js';
import type { FleetReading } from '../observability/metrics.js';
import { liveProcesses, type LiveProcess } from './heartbeat.js';

/** A count stops here: the figure means "at least this many". */
export const COUNT_CAP = 10_000;
const OUTBOX_SAMPLE = 500;

export interface FleetStatus extends FleetReading {
  readonly at: string;
  readonly live: readonly LiveProcess[];
  /** Counts that reached COUNT_CAP are "at least". */
  readonly countCap: number;
}

const ageSeconds = (then: number | undefined, now: number) => (then === undefined ? 0 : Math.max(0, (now - then) / 1000));

async function oldestChunk(db: Db): Promise<number | undefined> {
  const doc = await db
    .collection(JOBS_COLLECTION)
    .find({ name: JOB_NAME, nextRunAt: { $ne: null } }, { projection: { _id: 1 } })
    .sort({ _id: 1 })
    .limit(1)
    .next();
  return doc ? (doc._id as ObjectId).getTimestamp().getTime() : undefined;
}

async function oldestOutboxEntry(db: Db): Promise<number | undefined> {
  const holders = await db
    .collection<Document>('subscriptions')
    .find({ 'outbox.key': { $exists: true } }, { projection: { 'outbox.at': 1 } })
    .limit(OUTBOX_SAMPLE)
    .toArray();
  let oldest: number | undefined;
  for (const holder of holders) {
    for (const entry of (holder.outbox ?? []) as { at: string }[]) {
      const at = Date.parse(entry.at);
      if (oldest === undefined || at < oldest) oldest = at;
    }
  }
  return oldest;
}

export async function readFleetStatus(db: Db, heartbeatIntervalMs: number): Promise<FleetStatus> {
  const now = Date.now();
  const capped = { limit: COUNT_CAP };
  const [live, chunksQueued, oldestChunkAt, schedulesDue, outboxBacklog, oldestOutboxAt, endpointsDisabled] = await Promise.all([
    liveProcesses(db, heartbeatIntervalMs, now),
    db.collection(JOBS_COLLECTION).countDocuments({ name: JOB_NAME, nextRunAt: { $ne: null } }, capped),
    oldestChunk(db),
    db.collection('subscriptions').countDocuments({ nextScheduledAt: { $lte: nowTimestamp() } }, capped),
    db.collection('subscriptions').countDocuments({ 'outbox.key': { $exists: true } }, capped),
    oldestOutboxEntry(db),
    db.collection('webhookEndpoints').countDocuments({ status: 'disabled' }, capped),
  ]);
  return {
    at: new Date(now).toISOString(),
    live,
    processes: { serve: live.filter((p) => p.role === 'serve').length, worker: live.filter((p) => p.role === 'worker').length },
    chunksQueued,
    oldestChunkAgeSeconds: ageSeconds(oldestChunkAt, now),
    schedulesDue,
    outboxBacklog,
    outboxOldestAgeSeconds: ageSeconds(oldestOutboxAt, now),
    endpointsDisabled,
    countCap: COUNT_CAP,
  };
}

/** `subsvc status` on a terminal: the same figures as the JSON, as a table. */
export function formatStatus(status: FleetStatus): string {
  const atLeast = (n: number) => (n >= status.countCap ? `${n}+` : String(n));
  const lines = [
    `fleet at ${status.at}`,
    '',
    `${'role'.padEnd(7)} ${'version'.padEnd(10)} ${'host'.padEnd(24)} ${'pid'.padStart(7)}  ${'started'.padEnd(24)} last seen`,
    ...status.live.map((p) => `${p.role.padEnd(7)} ${p.version.padEnd(10)} ${p.host.padEnd(24)} ${String(p.pid).padStart(7)}  ${p.startedAt.padEnd(24)} ${p.lastSeenAt}`),
    ...(status.live.length === 0 ? ['(no live process)'] : []),
    '',
    `bulk chunks queued          ${atLeast(status.chunksQueued)} (oldest ${status.oldestChunkAgeSeconds.toFixed(0)} s)`,
    `schedules due, not applied  ${atLeast(status.schedulesDue)}`,
    `events outbox backlog       ${atLeast(status.outboxBacklog)} subscriptions (oldest ${status.outboxOldestAgeSeconds.toFixed(0)} s)`,
    `webhook endpoints disabled  ${atLeast(status.endpointsDisabled)}`,
  ];
  return lines.join('\n');
}
