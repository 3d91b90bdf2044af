/** What the scripts that run the service (bench, load, fuzz) share: a scratch database and a loopback server. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MongoClient, type Db, type MongoClientOptions } from 'mongodb';
import type { Config } from '../src/config.js';
import { startEmbeddedDatabase } from '../src/db/embedded.js';
import { detectEngine } from '../src/db/mongo.js';
import { createHttpServer } from '../src/http/http-server.js';
import type { Logger } from '../src/logger.js';
import { composeService, type Service } from '../src/service.js';

export interface ScratchDatabase {
  readonly db: Db;
  readonly engine: 'ferretdb' | 'mongodb';
  readonly version: string;
  /** Where it runs, for the printed table: the embedded engine and why, or MONGODB_URI. */
  readonly source: string;
  /** Drops the scratch database and stops what was started. */
  close(): Promise<void>;
}

/** A fresh database named `<prefix>_<time>` on MONGODB_URI's server, or on an embedded one. */
export async function openScratchDatabase(
  config: Config,
  prefix: string,
  log: Logger,
  options: MongoClientOptions = {},
): Promise<ScratchDatabase> {
  const embedded = config.mongodbUri ? undefined : await startEmbeddedDatabase(config.embeddedEngine, log);
  const client = await new MongoClient(config.mongodbUri ?? embedded!.uri, options).connect();
  const db = client.db(`${prefix}_${Date.now()}`);
  const { engine, version } = await detectEngine(db);
  return {
    db,
    engine,
    version,
    source: embedded ? `embedded: ${embedded.reason}` : `MONGODB_URI, scratch database ${db.databaseName}`,
    async close() {
      await db.dropDatabase().catch(() => undefined);
      await client.close();
      await embedded?.stop();
    },
  };
}

/** Listens on an ephemeral loopback port; resolves to the base URL. */
export function listenOnLoopback(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

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
export async function serveOnLoopback(db: Db, config: Config, log: Logger): Promise<LoopbackService> {
  const service = await composeService(db, { ...config, rateLimitBurst: 1_000_000, rateLimitPerSecond: 1_000_000, authFailuresPerMinute: 1_000_000 }, log);
  const server = createHttpServer(config, (await service.app()).callback());
  const baseUrl = await listenOnLoopback(server);
  await service.workers.start();
  return {
    service,
    baseUrl,
    async stop() {
      await service.workers.stop(30_000);
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
