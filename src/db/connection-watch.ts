/**
 * Recovery from outages the driver does not recover from by itself. After an outage during
 * which the database's port accepted connections and closed them (a proxy or load balancer in
 * front of a dead database), the driver's monitor was seen to wedge: no connection attempt for
 * ten minutes, /readyz at 503 while /healthz said 200. So the process pings on its own; when
 * the database has been unreachable for `dbReconnectAfterMs` it closes the clients and opens
 * them again (again after as long, while it stays unreachable), and once unreachable for
 * `dbUnhealthyAfterMs` it reports itself unhealthy so that an orchestrator restarts it.
 */
import type { Config } from '../config.js';
import { Periodic } from '../lib/periodic.js';
import type { Logger } from '../logger.js';
import type { Database } from './mongo.js';

export interface ConnectionWatch {
  /** False once the database has been unreachable for dbUnhealthyAfterMs. */
  healthy(): boolean;
  stop(): void;
}

type WatchConfig = Pick<Config, 'dbTimeoutMs' | 'dbReconnectAfterMs' | 'dbUnhealthyAfterMs'>;

export function watchConnection(database: Database, config: WatchConfig, log: Logger): ConnectionWatch {
  const everyMs = Math.min(config.dbTimeoutMs, 1_000);
  let unreachableSince: number | undefined;
  let lastReopen = 0;

  const check = async () => {
    try {
      await database.db.command({ ping: 1 });
      if (unreachableSince !== undefined) log.info({ afterMs: Date.now() - unreachableSince }, 'database reachable again');
      unreachableSince = undefined;
    } catch (error) {
      const now = Date.now();
      unreachableSince ??= now;
      if (now - unreachableSince >= config.dbReconnectAfterMs && now - lastReopen >= config.dbReconnectAfterMs) {
        lastReopen = now;
        log.warn({ err: error, unreachableMs: now - unreachableSince }, 'database unreachable: reopening the client');
        await database.reopen().catch((reopenError: unknown) => log.warn({ err: reopenError }, 'reopening the database client failed'));
      }
    }
  };
  // No jitter: a process's pings reach no shared document, so processes need not drift apart.
  const pings = new Periodic(check, { everyMs, jitter: 0, failed: (error) => log.warn({ err: error }, 'database check failed') });
  pings.start();
  return {
    healthy: () => unreachableSince === undefined || Date.now() - unreachableSince < config.dbUnhealthyAfterMs,
    // Not awaited: shutdown closes the clients next, and a ping in flight only fails.
    stop: () => void pings.stop(),
  };
}
