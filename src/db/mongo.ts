/**
 * The MongoDB connection: the official driver, the database named by the URI's path, and what
 * the server can guarantee, decided here once (docs/design.md §8).
 *
 * Two clients on the same server, because the driver (7.x) bounds waiting for a reply only per
 * client (`socketTimeoutMS`; its `timeoutMS` is ignored): `db` serves requests, each operation
 * bounded by DB_TIMEOUT_MS so that a hung database answers 503 quickly; `background` serves the
 * bulk workers and the job queue, bounded by BULK_DB_TIMEOUT_MS, since a chunk's write may
 * legitimately take longer than a request should wait.
 */
import { MongoClient, MongoServerError, type Db } from 'mongodb';
import { ConnectionString } from 'mongodb-connection-string-url';
import type { Logger } from '../logger.js';
import { workaroundsFor } from './workarounds.js';

export const DEFAULT_DB_NAME = 'subscriptions';

/** What the server guarantees; code asks these, never which engine it is. */
export interface Capabilities {
  /** TTL indexes expire documents by themselves (FerretDB v1: no). */
  readonly ttlIndexes: boolean;
  /** A conditional update is atomic against a concurrent one from another process (FerretDB v1: no). */
  readonly atomicConditionalUpdate: boolean;
  /** Writes from several connections proceed in parallel (FerretDB's SQLite backend: one writer per database). */
  readonly parallelWriters: boolean;
  /** A query on an indexed field other than `_id` is served by its index (FerretDB's SQLite backend pushes down only `_id`). */
  readonly secondaryIndexes: boolean;
}

export interface Database {
  /** For requests: every operation bounded by DB_TIMEOUT_MS. */
  readonly db: Db;
  /** For bulk workers and the job queue: bounded by BULK_DB_TIMEOUT_MS. */
  readonly background: Db;
  readonly capabilities: Capabilities;
  /** Which server answered, for logs and reports only. */
  readonly server: ServerInfo;
  /** The two clients (the same objects across reopen()), for the metrics' connection-pool listeners (instrumented by the composition root, src/main/composition.ts). */
  readonly clients: { readonly request: MongoClient; readonly background: MongoClient };
  /** Closes both clients and opens them again; `db` and `background` stay valid. */
  reopen(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseTimeouts {
  readonly dbTimeoutMs: number;
  readonly bulkDbTimeoutMs: number;
}

export function databaseName(uri: string): string {
  const path = new ConnectionString(uri).pathname.replace(/^\//, '');
  return decodeURIComponent(path) || DEFAULT_DB_NAME;
}

/** Which server answered, for logs and reports only: code branches on Capabilities. */
export interface ServerInfo {
  readonly engine: 'ferretdb' | 'mongodb';
  readonly version: string;
}

/** FerretDB answers buildInfo with its own version fields; it is the one engine known to lack these. */
export async function detectCapabilities(db: Db): Promise<{ capabilities: Capabilities; server: ServerInfo }> {
  const buildInfo = await db.admin().command({ buildInfo: 1 });
  const ferretdb = 'ferretdbVersion' in buildInfo || 'ferretdb' in buildInfo;
  const server: ServerInfo = { engine: ferretdb ? 'ferretdb' : 'mongodb', version: String(buildInfo.version) };
  return { capabilities: { ttlIndexes: !ferretdb, atomicConditionalUpdate: !ferretdb, parallelWriters: !ferretdb, secondaryIndexes: !ferretdb }, server };
}

/** Without command monitoring: the metrics read the pool's events, which cost far less (src/observability/metrics.ts). */
function client(uri: string, timeoutMs: number, pool: { maxPoolSize?: number } = {}): MongoClient {
  return new MongoClient(uri, {
    serverSelectionTimeoutMS: timeoutMs,
    connectTimeoutMS: timeoutMs,
    socketTimeoutMS: timeoutMs,
    ...(pool.maxPoolSize ? { maxPoolSize: pool.maxPoolSize, waitQueueTimeoutMS: timeoutMs } : {}),
    appName: 'subsvc',
  });
}

export async function connectDatabase(uri: string, timeouts: DatabaseTimeouts, log: Logger): Promise<Database> {
  let clients = [client(uri, timeouts.dbTimeoutMs), client(uri, timeouts.bulkDbTimeoutMs)];
  const close = async () => {
    await Promise.all(clients.map((c) => c.close(true)));
  };
  try {
    await Promise.all(clients.map((c) => c.connect()));
    const { capabilities, server } = await detectCapabilities(clients[0]!.db(databaseName(uri)));
    // The one workaround applied here, where the client is opened (db/workarounds.ts).
    const { requestPool } = workaroundsFor(capabilities);
    if (requestPool !== undefined) {
      await clients[0]!.close(true);
      clients = [client(uri, timeouts.dbTimeoutMs, { maxPoolSize: requestPool }), clients[1]!];
      await clients[0]!.connect();
    }
    const [db, background] = clients.map((c) => c.db(databaseName(uri))) as [Db, Db];
    log.info({ db: db.databaseName, server, capabilities }, 'database connected');
    const reopen = async () => {
      await close();
      await Promise.all(clients.map((c) => c.connect()));
    };
    return { db, background, capabilities, server, clients: { request: clients[0]!, background: clients[1]! }, reopen, close };
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
