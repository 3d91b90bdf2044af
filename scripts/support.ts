/** What the scripts that run the service (bench, load, fuzz) share: a scratch database and a loopback server. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MongoClient, type Db } from 'mongodb';
import { startService, type ListenOptions, type Service } from '../src/main/composition.js';
import type { Config } from '../src/config.js';
import { startEmbeddedDatabase } from '../src/db/embedded.js';
import { connectDatabase, type Database } from '../src/db/mongo.js';
import type { Logger } from '../src/logger.js';

export interface ScratchDatabase {
  /** For the service: its clients, with the configured timeouts. */
  readonly database: Database;
  /** For the scripts' own raw-driver baselines and clean-ups: a client without timeouts (FerretDB's raw baselines take minutes). */
  readonly db: Db;
  /** Its URI, for another connection to the same database (bench (c) without metrics). */
  readonly uri: string;
  /** Which server, for the printed table and the results file; code branches on database.capabilities. */
  readonly engine: 'ferretdb' | 'mongodb';
  readonly version: string;
  /** Where it runs, for the printed table: the embedded engine and why, or MONGODB_URI. */
  readonly source: string;
  /** Drops the scratch database and stops what was started. */
  close(): Promise<void>;
}

/** A fresh database named `<prefix>_<time>` on MONGODB_URI's server, or on an embedded one. */
export async function openScratchDatabase(config: Config, prefix: string, log: Logger): Promise<ScratchDatabase> {
  const embedded = config.mongodbUri ? undefined : await startEmbeddedDatabase(config.embeddedEngine, config.downloadProxy, log);
  const serverUri = new URL(config.mongodbUri ?? embedded!.uri);
  serverUri.pathname = `/${prefix}_${Date.now()}`;
  const opened = await openDatabaseAt(serverUri, config, log);
  return {
    ...opened,
    ...opened.database.server,
    source: embedded ? `embedded: ${embedded.reason}` : `MONGODB_URI, scratch database ${opened.db.databaseName}`,
    async close() {
      await opened.close();
      await embedded?.stop();
    },
  };
}

/**
 * Another fresh database on the scratch database's server (`<its name>_<suffix>`), with the
 * service's clients and a raw one: for the bench's axes that measure two sizes in alternating
 * rounds, each size in a database of its own. `close` drops it.
 */
export async function openSiblingDatabase(scratch: ScratchDatabase, suffix: string, config: Config, log: Logger): Promise<Pick<ScratchDatabase, 'database' | 'db' | 'uri' | 'close'>> {
  const uri = new URL(scratch.uri);
  uri.pathname = `${uri.pathname}_${suffix}`;
  return openDatabaseAt(uri, config, log);
}

/** The database at `uri`: the service's clients and a raw one; `close` drops it and closes both. */
async function openDatabaseAt(uri: URL, config: Config, log: Logger): Promise<Pick<ScratchDatabase, 'database' | 'db' | 'uri' | 'close'>> {
  const database = await connectDatabase(uri.toString(), config, log);
  const raw = await new MongoClient(uri.toString()).connect();
  const db = raw.db(database.db.databaseName);
  return {
    database,
    db,
    uri: uri.toString(),
    async close() {
      await db.dropDatabase().catch(() => undefined);
      await Promise.all([database.close(), raw.close()]);
    },
  };
}

/** Listens on an ephemeral loopback port; resolves to the base URL. */
export function listenOnLoopback(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

export const LOOPBACK_WITHOUT_WORKERS: ListenOptions = { port: 0, host: '127.0.0.1', startWorkers: false };

export interface LoopbackService {
  readonly service: Service;
  readonly baseUrl: string;
  /** Stops the workers (letting in-flight chunks finish) and the server. */
  stop(): Promise<void>;
}

/**
 * The whole service (HTTP and bulk workers) on an ephemeral loopback port, with rate limits
 * (per merchant, and on failed authentication per address: a fuzzer sends many requests without
 * a key) too large to reach: the point is the service, not the limiter's 429s, and its headers are still sent.
 */
export async function serveOnLoopback(scratch: ScratchDatabase, config: Config, log: Logger): Promise<LoopbackService> {
  const limitless = { ...config, rateLimitBurst: 1_000_000, rateLimitPerSecond: 1_000_000, authFailuresPerMinute: 1_000_000 };
  const running = await startService(scratch.database, limitless, log, { port: 0, host: '127.0.0.1' });
  return { service: running.service, baseUrl: running.url, stop: () => running.stop(30_000) };
}
