/**
 * One real MongoDB-protocol server for the whole run: MONGODB_URI when set, otherwise the same
 * embedded provider `npm start` uses (mongodb-memory-server, or FerretDB v1 where no mongod can
 * be had). Each test file then works in a database of its own. The server's capabilities are
 * detected here once, the way the service detects them (src/db/mongo.ts), and provided to the
 * tests as `dbCapabilities`.
 */
import { MongoClient } from 'mongodb';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../src/config.js';
import { startEmbeddedDatabase } from '../../src/db/embedded.js';
import { detectCapabilities, type Capabilities } from '../../src/db/mongo.js';
import { createLogger } from '../../src/logger.js';

declare module 'vitest' {
  export interface ProvidedContext {
    mongoUri: string;
    dbCapabilities: Capabilities;
  }
}

async function capabilitiesOf(uri: string): Promise<Capabilities> {
  const client = await new MongoClient(uri).connect();
  try {
    const { capabilities, server } = await detectCapabilities(client.db('admin'));
    console.log(`tests run on ${server.engine} ${server.version}: ${JSON.stringify(capabilities)}`);
    if (!capabilities.atomicConditionalUpdate || !capabilities.ttlIndexes) {
      console.log(
        'this server lacks guarantees that MongoDB has (no TTL indexes, no atomic conditional update across ' +
          'processes, one writer at a time); tests that need them say so where they run.',
      );
    }
    return capabilities;
  } finally {
    await client.close();
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const config = loadConfig();
  const log = createLogger('info');
  if (config.mongodbUri) {
    project.provide('mongoUri', config.mongodbUri);
    project.provide('dbCapabilities', await capabilitiesOf(config.mongodbUri));
    console.log(`tests use the database at MONGODB_URI`);
    return async () => {};
  }
  const database = await startEmbeddedDatabase(config.embeddedEngine, config.downloadProxy, log);
  console.log(`tests use an embedded ${database.engine}: ${database.reason}`);
  project.provide('mongoUri', database.uri);
  project.provide('dbCapabilities', await capabilitiesOf(database.uri));
  return () => database.stop();
}
