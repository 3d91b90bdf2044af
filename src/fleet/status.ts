/**
 * What the whole fleet is doing, read from the database: what `subsvc status` prints and what the
 * fleet-wide gauges of /metrics show (identical on every process: aggregate them with max()).
 *
 * Each figure is read by the store that owns its collection (src/main/composition.ts passes them
 * in: `fleetStatusOn`). Every query is bounded; what each costs:
 * - live processes: the whole `processes` collection (one small document per process);
 * - queued chunks: a count capped at COUNT_CAP of the unfinished jobs of `bulkJobs` (Agenda's
 *   collection, one job per chunk: src/db/agenda-jobs.ts, served by Agenda's index on MongoDB),
 *   and the oldest by `_id` (an ObjectId, so its creation time), served by `_id`;
 * - due schedules: a count capped at COUNT_CAP on `nextScheduledAt` (the due_schedules index);
 * - outbox: a count capped at COUNT_CAP of subscriptions holding entries (the sparse
 *   subscription_outbox index), and the oldest entry among the first OUTBOX_SAMPLE of them (no
 *   index orders the entries' times: an estimate, exact while the backlog is under the sample);
 * - disabled endpoints: a count capped at COUNT_CAP of `webhookEndpoints` by status (no index:
 *   endpoints are few per merchant).
 * FerretDB v1 uses no secondary index, so there each of these reads the whole collection it
 * counts (subscriptions included): fine for development, not what a large fleet runs on.
 */
import { nowTimestamp } from '../lib/clock.js';
import type { FleetReading } from '../observability/metrics.js';
import type { LiveProcess } from './heartbeat.js';

/** A count stops here: the figure means "at least this many". */
export const COUNT_CAP = 10_000;
const OUTBOX_SAMPLE = 500;

export interface FleetStatus extends FleetReading {
  readonly at: string;
  readonly live: readonly LiveProcess[];
  /** Counts that reached COUNT_CAP are "at least". */
  readonly countCap: number;
}

/** Where each figure is read: the stores of the collections they count. */
export interface FleetSources {
  /** The live processes from the heartbeats (heartbeat.ts). */
  live(now: number): Promise<LiveProcess[]>;
  /** Bulk chunks not finished, up to `cap`, and when the oldest was queued (src/db/agenda-jobs.ts). */
  chunksQueued(cap: number): Promise<number>;
  oldestChunkAt(): Promise<number | undefined>;
  /** The due and outbox stores: due schedules, outboxes and the oldest entry among a sample. */
  countDue(now: string, cap: number): Promise<number>;
  countOutboxes(cap: number): Promise<number>;
  oldestOutboxEntry(sample: number): Promise<number | undefined>;
  /** Webhook endpoints disabled, up to `cap` (endpoints.repository.ts). */
  countDisabledEndpoints(cap: number): Promise<number>;
}

const ageSeconds = (then: number | undefined, now: number) => (then === undefined ? 0 : Math.max(0, (now - then) / 1000));

export async function readFleetStatus(sources: FleetSources): Promise<FleetStatus> {
  const now = Date.now();
  const [live, chunksQueued, oldestChunkAt, schedulesDue, outboxBacklog, oldestOutboxAt, endpointsDisabled] = await Promise.all([
    sources.live(now),
    sources.chunksQueued(COUNT_CAP),
    sources.oldestChunkAt(),
    sources.countDue(nowTimestamp(), COUNT_CAP),
    sources.countOutboxes(COUNT_CAP),
    sources.oldestOutboxEntry(OUTBOX_SAMPLE),
    sources.countDisabledEndpoints(COUNT_CAP),
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
    ...status.live.map(
      (p) =>
        `${p.role.padEnd(7)} ${p.version.padEnd(10)} ${p.host.padEnd(24)} ${String(p.pid).padStart(7)}  ${p.startedAt.padEnd(24)} ${p.lastSeenAt}`,
    ),
    ...(status.live.length === 0 ? ['(no live process)'] : []),
    '',
    `bulk chunks queued          ${atLeast(status.chunksQueued)} (oldest ${status.oldestChunkAgeSeconds.toFixed(0)} s)`,
    `schedules due, not applied  ${atLeast(status.schedulesDue)}`,
    `events outbox backlog       ${atLeast(status.outboxBacklog)} subscriptions (oldest ${status.outboxOldestAgeSeconds.toFixed(0)} s)`,
    `webhook endpoints disabled  ${atLeast(status.endpointsDisabled)}`,
  ];
  return lines.join('\n');
}
