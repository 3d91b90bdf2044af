/**
 * Probes for orchestrators, without an API key and outside /v2 (like /docs, they are not API
 * operations): /healthz that the process answers and has not lost the database for good (see
 * db/connection-watch.ts: after DB_UNHEALTHY_AFTER_MS of outage a restart is the remedy left);
 * /readyz that the database answers a ping within the request timeout (or, when the ping waits
 * longer for one of the request pool's connections, that the server answered the driver's latest
 * check: slow is not unreachable, docs/reliability.md) and, where this process runs workers, that
 * they are running.
 */
import Router from '@koa/router';
import type { Db } from 'mongodb';
import { Problems, ProblemError } from '../errors.js';

export interface Readiness {
  readonly db: Db;
  readonly timeoutMs: number;
  /** Whether the server answered the driver's latest check (src/db/mongo.ts): what a ping still waiting at timeoutMs is taken to mean. */
  readonly reachable?: () => boolean;
  /** False once the database has been lost for longer than a reconnect can fix. */
  readonly healthy: () => boolean;
  /** undefined for a process that runs no workers. */
  readonly workersRunning: () => boolean | undefined;
  /** True once the process is stopping (SIGTERM): not ready, while in-flight requests finish. */
  readonly stopping?: () => boolean;
}

async function databaseAnswers(db: Db, timeoutMs: number, reachable: () => boolean): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(reachable()), timeoutMs);
  });
  const ping = db.command({ ping: 1 }).then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([ping, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** What /readyz answers (and the metrics' subsvc_ready shows). */
export async function readinessState({
  db,
  timeoutMs,
  reachable = () => false,
  workersRunning,
  stopping,
}: Readiness): Promise<{ database: string; queue: string; ready: boolean }> {
  if (stopping?.()) return { database: 'not checked', queue: 'stopping', ready: false };
  const database = (await databaseAnswers(db, timeoutMs, reachable)) ? 'ok' : 'unreachable';
  const running = workersRunning();
  const queue = running === undefined ? 'none' : running ? 'running' : 'stopped';
  return { database, queue, ready: database === 'ok' && queue !== 'stopped' };
}

export function healthRouter(readiness: Readiness): Router {
  const { healthy } = readiness;
  const router = new Router();
  router.get('/healthz', (ctx) => {
    if (!healthy())
      throw new ProblemError(Problems.unavailable, 'Unhealthy: the database has been unreachable for too long; restart the process.');
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const { database, queue, ready } = await readinessState(readiness);
    if (!ready) {
      throw new ProblemError(
        Problems.unavailable,
        queue === 'stopping' ? 'Not ready: stopping.' : `Not ready: database ${database}, bulk workers ${queue}.`,
      );
    }
    ctx.body = { status: 'ready', database, workers: queue };
  });
  return router;
}
