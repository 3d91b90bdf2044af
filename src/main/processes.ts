/**
 * The long-running processes: `serve` (HTTP and, unless BULK_CONCURRENCY=0, bulk workers) and
 * `worker` (bulk workers only). Each opens the database, watches the connection
 * (db/connection-watch.ts), and returns a stop() that stops accepting work, drains in-flight
 * bulk chunks within the deadline, and closes the database.
 */
import type { Config } from '../config.js';
import { composeService, startHeartbeat, startMetricsListener, startService } from './composition.js';
import { watchConnection } from '../db/connection-watch.js';
import { EMBEDDED_SECRETS_KEY_FILE, startEmbeddedDatabase } from '../db/embedded.js';
import { connectDatabase, type Database } from '../db/mongo.js';
import { describeWorkarounds, workaroundsFor } from '../db/workarounds.js';
import { createDemo } from './demo.js';
import { preflight } from './preflight.js';
import { ProcessLease } from '../fleet/process-lease.js';
import { DEFAULT_HEARTBEAT_MS, type ProcessRole } from '../fleet/heartbeat.js';
import type { Logger } from '../logger.js';

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
    const database = await connectDatabase(config.mongodbUri, config, log);
    return { database, embedded: false, embeddedUri: undefined, close: () => database.close() };
  }
  const embedded = await startEmbeddedDatabase(config.embeddedEngine, config.downloadProxy, log);
  try {
    const embeddedUri = `${embedded.uri.replace(/\/$/, '')}/subscriptions`;
    const database = await connectDatabase(embeddedUri, config, log);
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

/** On the embedded database without SECRETS_KEY, secrets are sealed with the key kept beside it. */
function secretsOf(config: Config, opened: OpenedDatabase): Config & { embeddedSecretsKeyFile: string | undefined } {
  return { ...config, embeddedSecretsKeyFile: opened.embedded ? EMBEDDED_SECRETS_KEY_FILE : undefined };
}

/** The engine in a few words, for the summary `npm start` prints last. */
function engineSummary({ database, embedded }: OpenedDatabase): string {
  const name = database.server.engine === 'ferretdb' ? 'FerretDB' : `MongoDB ${database.server.version}`;
  const workarounds = describeWorkarounds(workaroundsFor(database.capabilities)).length;
  return `${name} (${embedded ? 'embedded' : 'MONGODB_URI'})${workarounds > 0 ? `, ${workarounds} engine workarounds on (docs/design.md §8)` : ''}`;
}

/**
 * Opens the database, takes the one-process lease where the engine needs one, runs `start`, and
 * gives both up again if `start` fails. `start` is handed a stop for the lease, after its own.
 */
async function withDatabase(
  config: Config,
  log: Logger,
  role: ProcessRole,
  start: (opened: OpenedDatabase, leave: () => Promise<void>) => Promise<Running>,
): Promise<Running> {
  const opened = await openDatabase(config, log);
  let lease: ProcessLease | undefined;
  try {
    // Changes are serialised within a process only where conditional updates are not atomic across processes: one process per database there.
    if (!opened.database.capabilities.atomicConditionalUpdate && !config.allowSharedEmbedded) {
      lease = new ProcessLease(opened.database.background, role, config.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_MS, log);
      await lease.acquire();
    }
    return await start(opened, async () => lease?.release());
  } catch (error) {
    await lease?.release();
    await opened.close();
    throw error;
  }
}

export async function serve(config: Config, log: Logger, announce: (text: string) => void): Promise<Running> {
  await preflight(config, true);
  return withDatabase(config, log, 'serve', async (opened, leave) => {
    const watch = watchConnection(opened.database, config, log);
    const running = await startService(opened.database, secretsOf(config, opened), log, {
      port: config.port,
      host: config.host,
      healthy: () => watch.healthy(),
    }).catch((error: unknown) => {
      watch.stop();
      throw error;
    });
    const { service, url } = running;
    log.info({ url, bulkConcurrency: service.workers.concurrency, embedded: opened.embedded }, 'service listening');
    if (config.demo)
      announce(
        await createDemo(service.auth, service.importSeeder, {
          baseUrl: url,
          databaseUri: opened.embeddedUri,
          engine: engineSummary(opened),
        }),
      );
    return {
      url,
      async stop() {
        log.info('stopping: no new requests; draining bulk workers');
        watch.stop();
        await running.stop(config.shutdownTimeoutMs);
        await leave();
        await opened.close();
        log.info('stopped');
      },
    };
  });
}

export async function work(config: Config, log: Logger): Promise<Running> {
  if (config.bulkConcurrency === 0) throw new Error('BULK_CONCURRENCY=0 leaves a worker process nothing to do');
  await preflight(config, false);
  return withDatabase(config, log, 'worker', async (opened, leave) => {
    const watch = watchConnection(opened.database, config, log);
    // A worker process serves no request: all its database work takes the background bound.
    const service = await composeService({ ...opened.database, db: opened.database.background }, secretsOf(config, opened), log, () =>
      watch.healthy(),
    );
    const heartbeat = startHeartbeat(opened.database, config, log, service, 'worker');
    await heartbeat.start();
    const metricsServer = await startMetricsListener(config, config.host, log);
    await service.workers.start();
    return {
      async stop() {
        log.info('stopping: draining bulk workers');
        watch.stop();
        await service.workers.stop(config.shutdownTimeoutMs);
        await Promise.all([heartbeat.stop(), metricsServer?.close(), leave()]);
        await opened.close();
        log.info('stopped');
      },
    };
  });
}
