/**
 * One real MongoDB-protocol server for the whole run: MONGODB_URI when set, otherwise the same
 * embedded provider `npm start` uses (mongodb-memory-server, or FerretDB v1 where no mongod can
 * be had). Each test file then works in a database of its own.
 */
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../src/config.js';
import { startEmbeddedDatabase } from '../../src/db/embedded.js';
import { createLogger } from '../../src/logger.js';

declare module 'vitest' {
  export interface ProvidedContext {
    mongoUri: string;
    dbEngine: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const config = loadConfig();
  const log = createLogger('info');
  if (config.mongodbUri) {
    project.provide('mongoUri', config.mongodbUri);
    project.provide('dbEngine', 'external');
    console.log(`tests use the database at MONGODB_URI`);
    return async () => {};
  }
  const database = await startEmbeddedDatabase(config.embeddedEngine, log);
  project.provide('mongoUri', database.uri);
  project.provide('dbEngine', database.engine);
  console.log(`tests use an embedded ${database.engine}: ${database.reason}`);
  if (database.engine === 'ferretdb') {
    console.log(
      'FerretDB notice: no transactions, no change streams, no TTL indexes, and a conditional update is not ' +
        'atomic against a concurrent one from another process; tests that need these say so where they run.',
    );
  }
  return () => database.stop();
}
