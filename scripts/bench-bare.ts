/** Bench (c)'s baseline, shared by scripts/bench.ts and scripts/profile/service.ts, and how the bench runs each side of (c) in a process of its own. */
import { execFileSync, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { randomUUID } from 'node:crypto';
import type { Db, Document } from 'mongodb';
import { uuidv7Named } from '../src/lib/ids.js';
import { nowTimestamp } from '../src/lib/clock.js';
import { projectRoot } from '../src/lib/project-root.js';
import { KEPT_PAUSE_TIMES } from '../src/pause-policy/pause-policy.rules.js';

/**
 * The same database work as a single pause, on a bare node:http server, with raw driver calls: the
 * service's conditional update (the same filter, and the same update: the status, `recentPauses`
 * and the change's outbox entry pushed with it), a read when it matched nothing, and the events
 * relay's writes for the changes of every 50 ms: the events inserted, the merchant's webhook
 * endpoints looked up, the outbox entries pulled (`scripts/profile/count-commands.ts` counts both
 * sides' commands). `events: false` is the baseline (c) had until 2026-11-25: the status alone,
 * no event recorded, the contract's event work left out (bench (f) measures what events cost).
 */
export function bareServer(db: Db, merchantId: string, events = true): Server {
  const subscriptions = db.collection('subscriptions');
  const relay = events ? bareRelay(db, merchantId) : undefined;
  return createServer((req, res) => {
    const id = req.url!.split('/')[3]!;
    void (async () => {
      const at = nowTimestamp();
      const entry = relay
        ? {
            key: randomUUID(),
            type: 'subscription.paused',
            seq: 0,
            status: 'paused',
            previousStatus: 'fulfilled',
            at,
            cause: { kind: 'api', apiKeyId: BARE_KEY_ID },
            subscription: { status: 'paused', modifiedAt: at },
          }
        : undefined;
      const changed = await subscriptions.findOneAndUpdate(
        relay
          ? { _id: id as never, merchantId, status: 'fulfilled', pauseAt: null, resumeAt: null, pauseReason: null }
          : { _id: id as never, merchantId, status: 'fulfilled' },
        relay
          ? {
              $set: { status: 'paused', modifiedAt: at },
              $unset: { pauseAt: '' },
              $push: { recentPauses: { $each: [at], $slice: -KEPT_PAUSE_TIMES }, outbox: { $each: [entry] } } as never,
            }
          : { $set: { status: 'paused', modifiedAt: at } },
        { returnDocument: 'after' },
      );
      if (changed && entry) relay!(changed as Document as ChangedDocument, entry);
      const doc =
        changed ??
        (await subscriptions.findOne(
          { _id: id as never, merchantId },
          relay ? { projection: { outbox: 0, bulkCommands: 0, scheduleRun: 0 } } : {},
        ));
      res.writeHead(doc ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
    })().catch(() => res.writeHead(500).end());
  });
}

const BARE_KEY_ID = '01a21151-6e11-7aee-b456-8f271926d8af';

/** The fields of a changed subscription the bare relay writes into its event. */
interface ChangedDocument {
  readonly _id: string;
  readonly planId: string;
  readonly cycle: unknown;
  readonly createdAt: string;
}

/** The outbox entry the bare server pushed with the change. */
interface OutboxEntry {
  readonly key: string;
  readonly type: string;
  readonly at: string;
  readonly previousStatus: string;
  readonly cause: unknown;
}

/** The relay's writes as the service makes them for (c)'s changes: gathered 50 ms, one batch at a time. */
function bareRelay(db: Db, merchantId: string): (doc: ChangedDocument, entry: OutboxEntry) => void {
  const waiting: { doc: ChangedDocument; entry: OutboxEntry }[] = [];
  let relaying = false;
  const relayAll = async () => {
    while (waiting.length > 0) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const batch = waiting.splice(0, 400);
      const expiresAt = new Date(Date.now() + 30 * 86_400_000);
      await db.collection('events').insertMany(
        batch.map(({ doc, entry }) => ({
          _id: uuidv7Named(`${entry.key}:${doc._id}`, Date.parse(entry.at), 0) as never,
          merchantId,
          type: entry.type,
          createdAt: entry.at,
          data: {
            subscription: {
              id: doc._id,
              merchantId,
              planId: doc.planId,
              status: 'paused',
              cycle: doc.cycle,
              createdAt: doc.createdAt,
              modifiedAt: entry.at,
              livemode: true,
            },
            previousStatus: entry.previousStatus,
            cause: entry.cause,
          },
          expiresAt,
        })),
        { ordered: false },
      );
      await db
        .collection('webhookEndpoints')
        .find({ merchantId, status: 'enabled', events: { $in: ['*', 'subscription.paused'] } }, { projection: { _id: 1 } })
        .toArray();
      await db
        .collection('subscriptions')
        .updateMany(
          { merchantId, _id: { $in: batch.map(({ doc }) => doc._id as never) } },
          { $pullAll: { outbox: batch.map(({ entry }) => entry) } as never },
        );
    }
  };
  return (doc, entry) => {
    waiting.push({ doc, entry });
    if (relaying) return;
    relaying = true;
    // A failed batch would leave the bare side with less work than the service's: said, not hidden.
    void relayAll()
      .catch((error: unknown) => console.error('bench (c) bare relay failed:', error))
      .finally(() => (relaying = false));
  };
}

/** A side of bench (c) in a process of its own (scripts/bench-server.ts): where it listens, and the CPU it has used. */
export interface ServerProcess {
  readonly url: string;
  /** Its process id (bench (j) reads its resident memory). */
  readonly pid: number;
  readonly apiKey?: string;
  readonly merchantId: string;
  /** CPU the process has used so far (user + system, µs). */
  cpuUs(): Promise<number>;
  /** The same, with its user and system parts. */
  cpu(): Promise<{ cpuUs: number; userUs: number; systemUs: number }>;
  stop(): Promise<void>;
}

/** BENCH_SERVICE_FROM=src: the service side runs its sources through tsx rather than the compiled build (scripts/bench-server.ts). */
export const SERVICE_FROM_SOURCES = process.env.BENCH_SERVICE_FROM === 'src';

/**
 * The service's modules that the bench and the profiler start it with, all from one tree (its
 * logger's request context is its own module's): the compiled build (dist/), the sources with
 * BENCH_SERVICE_FROM=src, or `distSrc`, another compiled tree's src/ (scripts/profile/compare-builds.ts
 * runs a saved build beside the current one).
 */
export async function serviceModules(distSrc?: string) {
  const root = distSrc ? pathToFileURL(distSrc).href : SERVICE_FROM_SOURCES ? '../src' : '../dist/src';
  const [{ connectDatabase }, { startService }, { createLogger }] = await Promise.all([
    import(`${root}/db/mongo.js`) as Promise<typeof import('../src/db/mongo.js')>,
    import(`${root}/main/composition.js`) as Promise<typeof import('../src/main/composition.js')>,
    import(`${root}/logger.js`) as Promise<typeof import('../src/logger.js')>,
  ]);
  return { connectDatabase, startService, createLogger };
}

let built = false;

/** The compiled build of the sources as they are now, made once per bench run (`npm run build`). */
export function buildOnce(): void {
  if (built || SERVICE_FROM_SOURCES) return;
  execFileSync(process.execPath, [join(projectRoot(), 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
    cwd: projectRoot(),
    stdio: 'inherit',
  });
  built = true;
}

export async function spawnBenchServer(side: 'service' | 'bare', uri: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  if (side === 'service' && !env.BENCH_SERVICE_DIST) buildOnce();
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/bench-server.ts', side], {
    cwd: projectRoot(),
    env: { ...process.env, ...env, MONGODB_URI: uri },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const lines = createInterface({ input: child.stdout });
  // Its log goes to stdout too (level warn): its own lines are JSON objects with the field asked for.
  const next = <T>(field: string) =>
    new Promise<T>((resolve, reject) => {
      const take = (line: string) => {
        if (!line.startsWith(`{"${field}"`)) return;
        lines.off('line', take);
        resolve(JSON.parse(line) as T);
      };
      lines.on('line', take);
      void exited.then((code) => reject(new Error(`bench ${side} server exited (${code})`)));
    });
  const started = await next<{ url: string; apiKey?: string; merchantId: string }>('url');
  const cpu = () => {
    const answer = next<{ cpuUs: number; userUs: number; systemUs: number }>('cpuUs');
    child.stdin.write('cpu\n');
    return answer;
  };
  return {
    ...started,
    pid: child.pid!,
    cpu,
    async cpuUs() {
      return (await cpu()).cpuUs;
    },
    async stop() {
      child.stdin.end();
      await exited;
    },
  };
}
