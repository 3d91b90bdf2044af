/**
 * The embedded database used when MONGODB_URI is unset, by `npm start` and by the tests
 * (DESIGN.md §8): mongodb-memory-server where a `mongod` can be had, FerretDB v1 otherwise.
 */
import { join } from 'node:path';
import type { EmbeddedEngine } from '../config.js';
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

async function startMemoryServer(): Promise<EmbeddedDatabase> {
  const { MongoMemoryServer } = await import('mongodb-memory-server');
  const server = await MongoMemoryServer.create();
  return {
    uri: server.getUri(),
    engine: 'memory-server',
    reason: 'mongodb-memory-server provided a mongod',
    stop: async () => {
      await server.stop();
    },
  };
}

async function startEmbeddedFerretdb(log: Logger, reason: string): Promise<EmbeddedDatabase> {
  const binary = await ensureFerretdbBinary(CACHE_DIR, log);
  const server = await startFerretdb(binary, log);
  return { uri: server.uri, engine: 'ferretdb', reason, stop: () => server.stop() };
}

export async function startEmbeddedDatabase(engine: EmbeddedEngine, log: Logger): Promise<EmbeddedDatabase> {
  let database: EmbeddedDatabase;
  if (engine === 'ferretdb') {
    database = await startEmbeddedFerretdb(log, 'EMBEDDED_DB=ferretdb');
  } else {
    try {
      database = await startMemoryServer();
    } catch (error) {
      if (engine === 'memory-server') throw error;
      const why = (error as Error).message.replace(/\s+/g, ' ').trim().slice(0, 300);
      database = await startEmbeddedFerretdb(log, `no mongod could be had (${why}); FerretDB v1 instead`);
    }
  }
  log.info({ engine: database.engine, reason: database.reason }, 'embedded database started');
  return database;
}
