/** What the scripts that run the service (bench, load, fuzz) share: a scratch database and a loopback server. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MongoClient, type CommandStartedEvent, type Db } from 'mongodb';
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
export async function openSiblingDatabase(
  scratch: ScratchDatabase,
  suffix: string,
  config: Config,
  log: Logger,
): Promise<Pick<ScratchDatabase, 'database' | 'db' | 'uri' | 'close'>> {
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
  readonly stop: () => Promise<void>;
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

/** A command a client sent: the client's name, the command's and the collection it names. */
export interface CommandSeen {
  readonly client: string;
  readonly command: string;
  readonly collection: string;
}

/**
 * Counts and times the commands these clients send (the driver's command monitoring), each under
 * the key `keyOf` gives it (undefined: not counted), once it has succeeded or failed; the time is
 * its round trip as the driver saw it. The driver reads the setting as connections open: reopen
 * the clients (`database.reopen()`) after this. For the profiles and `LOAD_COMMANDS=1 npm run load`.
 */
export function commandTally(
  clients: Readonly<Record<string, MongoClient>>,
  keyOf: (seen: CommandSeen, event: CommandStartedEvent) => string | undefined,
): Map<string, { count: number; ms: number }> {
  const tally = new Map<string, { count: number; ms: number }>();
  for (const [client, mongo] of Object.entries(clients)) {
    // Not in the client's typed options, but read by the driver (mongo_client.js) as the topology connects.
    (mongo as unknown as { monitorCommands: boolean }).monitorCommands = true;
    const started = new Map<number, string>();
    mongo.on('commandStarted', (event) => {
      // A getMore names its collection in `collection`; every other command, as its own value.
      const target = (event.commandName === 'getMore' ? event.command['collection'] : event.command[event.commandName]) as unknown;
      const key = keyOf({ client, command: event.commandName, collection: typeof target === 'string' ? target : '' }, event);
      if (key !== undefined) started.set(event.requestId, key);
    });
    const done = (event: { requestId: number; duration: number }) => {
      const key = started.get(event.requestId);
      if (key === undefined) return;
      started.delete(event.requestId);
      const entry = tally.get(key) ?? { count: 0, ms: 0 };
      entry.count++;
      entry.ms += event.duration;
      tally.set(key, entry);
    };
    mongo.on('commandSucceeded', done);
    mongo.on('commandFailed', done);
  }
  return tally;
}
