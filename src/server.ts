/**
 * The long-running processes: `serve` (HTTP and, unless WORKERS=0, bulk workers) and `worker`
 * (bulk workers only). Each returns a stop() that stops accepting work, drains in-flight bulk
 * chunks within the deadline, and closes the database.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.js';
import { startEmbeddedDatabase } from './db/embedded.js';
import { connectDatabase, type Database } from './db/mongo.js';
import { createDemo } from './demo.js';
import { createHttpServer } from './http/http-server.js';
import type { Logger } from './logger.js';
import { composeService, type Service } from './service.js';

export interface Running {
  readonly url?: string;
  stop(): Promise<void>;
}

interface OpenedDatabase {
  readonly database: Database;
  readonly embedded: boolean;
  /** The embedded database's URI (printed for the demo); undefined on MONGODB_URI. */
  readonly embeddedUri: string | undefined;
  close(): Promise<void>;
}

async function openDatabase(config: Config, log: Logger): Promise<OpenedDatabase> {
  if (config.mongodbUri) {
    const database = await connectDatabase(config.mongodbUri, config.dbTimeoutMs, log);
    return { database, embedded: false, embeddedUri: undefined, close: () => database.close() };
  }
  const embedded = await startEmbeddedDatabase(config.embeddedEngine, log);
  try {
    const embeddedUri = `${embedded.uri.replace(/\/$/, '')}/subscriptions`;
    const database = await connectDatabase(embeddedUri, config.dbTimeoutMs, log);
    return {
      database,
      embedded: true,
      embeddedUri,
      close: async () => {
        await database.close();
        await embedded.stop();
      },
    };
  } catch (error) {
    await embedded.stop();
    throw error;
  }
}

const SWEEP_EVERY_MS = 10 * 60_000;

/** Deletes expired idempotency keys: storage hygiene where the server has no TTL index (FerretDB). */
function sweepExpiredKeys(service: Service, log: Logger): () => void {
  const timer = setInterval(() => {
    service.idempotency.deleteExpired().catch((error: unknown) => log.warn({ err: error }, 'idempotency key sweep failed'));
  }, SWEEP_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

function listen(server: Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: actual } = server.address() as AddressInfo;
      resolve(`http://${host.includes(':') ? `[${host}]` : host}:${actual}`);
    });
  });
}

export async function serve(config: Config, log: Logger, announce: (text: string) => void): Promise<Running> {
  const opened = await openDatabase(config, log);
  const service = await composeService(opened.database.db, config, log);
  const server = createHttpServer(config, (await service.app()).callback());
  const url = await listen(server, config.port, config.host);
  await service.workers.start();
  const stopSweeping = sweepExpiredKeys(service, log);
  log.info({ url, workers: config.workers, embedded: opened.embedded }, 'service listening');
  if (config.demo) announce(await createDemo(service.auth, service.subscriptions, { baseUrl: url, databaseUri: opened.embeddedUri }));
  return {
    url,
    async stop() {
      log.info('stopping: no new requests; draining bulk workers');
      stopSweeping();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await service.workers.stop(config.shutdownTimeoutMs);
      server.closeAllConnections();
      await closed;
      await opened.close();
      log.info('stopped');
    },
  };
}

export async function work(config: Config, log: Logger): Promise<Running> {
  if (config.workers === 0) throw new Error('WORKERS=0 leaves a worker process nothing to do');
  const opened = await openDatabase(config, log);
  const service = await composeService(opened.database.db, config, log);
  await service.workers.start();
  return {
    async stop() {
      log.info('stopping: draining bulk workers');
      await service.workers.stop(config.shutdownTimeoutMs);
      await opened.close();
      log.info('stopped');
    },
  };
}
