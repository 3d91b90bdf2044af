/** Bench (c)'s baseline, shared by scripts/bench.ts and scripts/profile/service.ts, and how the bench runs each side of (c) in a process of its own. */
import { execFileSync, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Db } from 'mongodb';
import { nowTimestamp } from '../src/lib/clock.js';
import { projectRoot } from '../src/lib/project-root.js';

/** The same work as a single pause, on a bare node:http server: the conditional update, then a read if it matched nothing. */
export function bareServer(db: Db, merchantId: string): Server {
  const subscriptions = db.collection('subscriptions');
  return createServer((req, res) => {
    const id = req.url!.split('/')[3]!;
    void (async () => {
      const changed = await subscriptions.findOneAndUpdate(
        { _id: id as never, merchantId, status: 'fulfilled' },
        { $set: { status: 'paused', modifiedAt: nowTimestamp() } },
        { returnDocument: 'after' },
      );
      const doc = changed ?? (await subscriptions.findOne({ _id: id as never, merchantId }));
      res.writeHead(doc ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
    })().catch(() => res.writeHead(500).end());
  });
}

/** A side of bench (c) in a process of its own (scripts/bench-server.ts): where it listens, and the CPU it has used. */
export interface ServerProcess {
  readonly url: string;
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

let built = false;

/** The compiled build of the sources as they are now, made once per bench run (`npm run build`). */
export function buildOnce(): void {
  if (built || SERVICE_FROM_SOURCES) return;
  execFileSync(process.execPath, [join(projectRoot(), 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: projectRoot(), stdio: 'inherit' });
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
  const lines = createInterface({ input: child.stdout! });
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
    child.stdin!.write('cpu\n');
    return answer;
  };
  return {
    ...started,
    cpu,
    async cpuUs() {
      return (await cpu()).cpuUs;
    },
    async stop() {
      child.stdin!.end();
      await exited;
    },
  };
}
