/**
 * The embedded database used when MONGODB_URI is unset, by `npm start` and by the tests
 * (docs/design.md §8): mongodb-memory-server where a `mongod` can be had, FerretDB v1 otherwise.
 */
import { lookup } from 'node:dns/promises';
import { join } from 'node:path';
import type { DownloadProxy, EmbeddedEngine } from '../config.js';
import { projectRoot } from '../lib/project-root.js';
import type { Logger } from '../logger.js';
import { ensureFerretdbBinary, startFerretdb } from './ferretdb.js';

export interface EmbeddedDatabase {
  readonly uri: string;
  readonly engine: 'memory-server' | 'ferretdb';
  /** Why this engine was chosen, for the start-up log. */
  readonly reason: string;
  stop(): Promise<void>;
}

export const CACHE_DIR = join(projectRoot(), '.cache');

/** The key the embedded database's secrets are sealed with when SECRETS_KEY is unset (src/secrets/secret-box.ts): made once, kept here. */
export const EMBEDDED_SECRETS_KEY_FILE = join(CACHE_DIR, 'embedded', 'secrets-key');

/**
 * Imported when first needed: a MONGODB_URI or EMBEDDED_DB=ferretdb start never loads it, and a
 * production install (`npm ci --omit=dev`, the image) does not have it, being a dev dependency.
 */
type MemoryServerModule = typeof import('mongodb-memory-server');

async function loadMemoryServer(): Promise<MemoryServerModule> {
  try {
    return await import('mongodb-memory-server');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new Error('mongodb-memory-server is not installed (an install without dev dependencies): set MONGODB_URI', { cause: error });
  }
}

/**
 * Where no mongod is found locally and its download host does not even resolve (an offline
 * machine), says so at once, rather than after mongodb-memory-server's retries of the download.
 * Behind a proxy the host need not resolve here, so the download is left to try.
 */
async function assertMongodObtainable(DryMongoBinary: MemoryServerModule['DryMongoBinary'], download: DownloadProxy): Promise<void> {
  if (await DryMongoBinary.locateBinary(DryMongoBinary.getEnsuredOptions())) return;
  if (download.proxied) return;
  const { hostname } = new URL(download.mongodDownloadUrl ?? 'https://fastdl.mongodb.org');
  try {
    await lookup(hostname);
  } catch (error) {
    throw new Error(`no mongod is cached and ${hostname} cannot be resolved (${(error as NodeJS.ErrnoException).code ?? String(error)})`, {
      cause: error,
    });
  }
}

/** Whether a mongod is cached or its download host can be reached: otherwise `auto` falls back to FerretDB (src/main/preflight.ts). */
export async function mongodObtainable(download: DownloadProxy): Promise<boolean> {
  return loadMemoryServer()
    .then(({ DryMongoBinary }) => assertMongodObtainable(DryMongoBinary, download))
    .then(
      () => true,
      () => false,
    );
}

async function startMemoryServer(download: DownloadProxy, dataDir: string | undefined): Promise<EmbeddedDatabase> {
  const { DryMongoBinary, MongoBinary, MongoMemoryServer } = await loadMemoryServer();
  await assertMongodObtainable(DryMongoBinary, download);
  // Find (or download) the mongod first: where none can be had, the error comes back here for
  // the start-up log's one line, instead of create()'s console warning with a stack trace.
  await MongoBinary.getPath();
  const server = await MongoMemoryServer.create(dataDir === undefined ? {} : { instance: { dbPath: dataDir } });
  return {
    uri: server.getUri(),
    engine: 'memory-server',
    reason: 'mongodb-memory-server provided a mongod',
    stop: async () => {
      await server.stop();
    },
  };
}

async function startEmbeddedFerretdb(log: Logger, reason: string, dataDir: string | undefined): Promise<EmbeddedDatabase> {
  const binary = await ensureFerretdbBinary(CACHE_DIR, log);
  const server = await startFerretdb(binary, log, dataDir === undefined ? {} : { dataDir });
  return { uri: server.uri, engine: 'ferretdb', reason, stop: () => server.stop() };
}

/** `dataDir`: where the engine keeps its data (the caller's to remove); a temporary folder of its own otherwise. */
export async function startEmbeddedDatabase(
  engine: EmbeddedEngine,
  download: DownloadProxy,
  log: Logger,
  dataDir?: string,
): Promise<EmbeddedDatabase> {
  let database: EmbeddedDatabase;
  if (engine === 'ferretdb') {
    database = await startEmbeddedFerretdb(log, 'EMBEDDED_DB=ferretdb', dataDir);
  } else {
    try {
      database = await startMemoryServer(download, dataDir);
    } catch (error) {
      if (engine === 'memory-server') throw error;
      const why = (error as Error).message.replace(/\s+/g, ' ').trim().slice(0, 300);
      database = await startEmbeddedFerretdb(log, `no mongod could be had (${why}); FerretDB v1 instead`, dataDir);
    }
  }
  log.info({ engine: database.engine, reason: database.reason }, 'embedded database started');
  return database;
}
