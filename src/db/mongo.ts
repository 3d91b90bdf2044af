/**
 * The MongoDB connection: the official driver, the database named by the URI's path, and what
 * the server can guarantee, decided here once (docs/design.md §8).
 *
 * Two clients on the same server, because the driver (7.x) bounds waiting for a reply only per
 * client (`socketTimeoutMS`; its `timeoutMS` is ignored): `db` serves requests; `background` serves
 * the bulk workers and the job queue, bounded by BULK_DB_TIMEOUT_MS, since a chunk's write may
 * legitimately take longer than a request should wait.
 *
 * A request's client tells a database that is unreachable from one that is slow (docs/reliability.md,
 * "Slow is not unreachable"): reaching the server is bounded by DB_TIMEOUT_MS (server selection,
 * connecting, and the driver's monitor, which checks the server with a `hello` on its own connection
 * every HEARTBEAT_MS: a `hello` unanswered within DB_TIMEOUT_MS interrupts every operation in flight,
 * and they answer 503), while an answer from a server that is reachable, or a free connection of the
 * pool, is waited for up to DB_SLOW_CAP_MS.
 */
import { MongoClient, MongoServerError, type Db } from 'mongodb';
import { ConnectionString } from 'mongodb-connection-string-url';
import type { Logger } from '../logger.js';
import type { DbWorkarounds } from '../config.js';
import { detectCapabilities, type Capabilities, type ServerInfo } from './capabilities.js';
import { switchOff, workaroundsFor } from './workarounds.js';

export const DEFAULT_DB_NAME = 'subscriptions';

export interface Database {
  /** For requests: reaching the server bounded by DB_TIMEOUT_MS, its answer by DB_SLOW_CAP_MS. */
  readonly db: Db;
  /** For bulk workers and the job queue: bounded by BULK_DB_TIMEOUT_MS. */
  readonly background: Db;
  readonly capabilities: Capabilities;
  /** Which server answered, for logs and reports only. */
  readonly server: ServerInfo;
  /** The two clients (the same objects across reopen()), for the metrics' connection-pool listeners (instrumented by the composition root, src/main/composition.ts). */
  readonly clients: { readonly request: MongoClient; readonly background: MongoClient };
  /** Whether the server answered the request client's latest check (a `hello` every HEARTBEAT_MS): reachable, however slow its answers to operations. */
  reachable(): boolean;
  /** Closes both clients and opens them again; `db` and `background` stay valid. */
  reopen(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseTimeouts {
  readonly dbTimeoutMs: number;
  /** How long a request waits for an answer (or a pooled connection) while the server is reachable; never less than dbTimeoutMs (default: dbTimeoutMs). */
  readonly dbSlowCapMs?: number;
  readonly bulkDbTimeoutMs: number;
  /** Engine workarounds switched off (DB_WORKAROUNDS; default: none). */
  readonly dbWorkarounds?: DbWorkarounds;
}

export function databaseName(uri: string): string {
  const path = new ConnectionString(uri).pathname.replace(/^\//, '');
  return decodeURIComponent(path) || DEFAULT_DB_NAME;
}

/** How often the request client's monitor checks that the server answers (the driver's minimum). */
export const HEARTBEAT_MS = 500;

interface ClientOptions {
  /** Reaching the server: selection, connecting, the monitor's `hello`. */
  readonly reachMs: number;
  /** An answer, or a free pooled connection, from a server that is reachable. */
  readonly answerMs: number;
  readonly maxPoolSize?: number;
  /** Check the server every HEARTBEAT_MS (the request client); else the driver's default. */
  readonly watchful?: boolean;
}

/** Without command monitoring: the metrics read the pool's events, which cost far less (src/observability/metrics.ts). */
function client(uri: string, options: ClientOptions): MongoClient {
  return new MongoClient(uri, {
    serverSelectionTimeoutMS: options.reachMs,
    connectTimeoutMS: options.reachMs,
    socketTimeoutMS: options.answerMs,
    ...(options.maxPoolSize ? { maxPoolSize: options.maxPoolSize, waitQueueTimeoutMS: options.answerMs } : {}),
    // Polled, not streamed: each check is one `hello` bounded by connectTimeoutMS, so a hang is seen within HEARTBEAT_MS + DB_TIMEOUT_MS.
    ...(options.watchful ? { heartbeatFrequencyMS: HEARTBEAT_MS, serverMonitoringMode: 'poll' as const } : {}),
    appName: 'subsvc',
  });
}

export async function connectDatabase(uri: string, timeouts: DatabaseTimeouts, log: Logger): Promise<Database> {
  const request = (maxPoolSize?: number) =>
    client(uri, {
      reachMs: timeouts.dbTimeoutMs,
      answerMs: Math.max(timeouts.dbTimeoutMs, timeouts.dbSlowCapMs ?? 0),
      maxPoolSize,
      watchful: true,
    });
  let clients = [request(), client(uri, { reachMs: timeouts.bulkDbTimeoutMs, answerMs: timeouts.bulkDbTimeoutMs })];
  const close = async () => {
    await Promise.all(clients.map((c) => c.close(true)));
  };
  try {
    await Promise.all(clients.map((c) => c.connect()));
    const { capabilities, server } = await detectCapabilities(clients[0]!.db(databaseName(uri)));
    // The one workaround applied here, where the client is opened (db/workarounds.ts).
    const { requestPool } = switchOff(workaroundsFor(capabilities), timeouts.dbWorkarounds);
    if (requestPool !== undefined) {
      await clients[0]!.close(true);
      clients = [request(requestPool), clients[1]!];
      await clients[0]!.connect();
    }
    const [db, background] = clients.map((c) => c.db(databaseName(uri))) as [Db, Db];
    log.info({ db: db.databaseName, server, capabilities }, 'database connected');
    let reachable = true;
    clients[0]!.on('serverHeartbeatSucceeded', () => (reachable = true)).on('serverHeartbeatFailed', () => (reachable = false));
    const reopen = async () => {
      await close();
      await Promise.all(clients.map((c) => c.connect()));
    };
    return {
      db,
      background,
      capabilities,
      server,
      clients: { request: clients[0]!, background: clients[1]! },
      reachable: () => reachable,
      reopen,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** A write refused for a duplicate `_id` or unique key (for a bulk insert: every document refused so). */
export function isDuplicateKeyError(error: unknown): boolean {
  if (!(error instanceof MongoServerError)) return false;
  const writeErrors = (error as { writeErrors?: { code: number }[] }).writeErrors;
  return error.code === 11000 || (writeErrors !== undefined && writeErrors.length > 0 && writeErrors.every((e) => e.code === 11000));
}
