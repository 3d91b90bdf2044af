/**
 * One real MongoDB-protocol server for the whole run: MONGODB_URI when set, otherwise the same
 * embedded provider `npm start` uses (mongodb-memory-server, or FerretDB v1 where no mongod can
 * be had). Each test file then works in a database of its own. The server's capabilities are
 * detected here once, the way the service detects them (src/db/mongo.ts), and provided to the
 * tests as `dbCapabilities`.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../src/config.js';
import { startEmbeddedDatabase } from '../../src/db/embedded.js';
import { detectCapabilities, type Capabilities } from '../../src/db/capabilities.js';
import { createLogger } from '../../src/logger.js';
import { SERVICE_PROCESSES_DIR } from './worker-process.js';
import { ensureGoTool, goToolCanBeHad, INSTALL_GO, STRIPE_MOCK } from '../../scripts/go-tool.js';
import { skipStep } from '../../scripts/skipped-steps.js';
import { prepareKafka } from './kafka-broker.js';

declare module 'vitest' {
  export interface ProvidedContext {
    mongoUri: string;
    dbCapabilities: Capabilities;
    /** The stripe-mock binary, or undefined where it cannot be built (no Go): the tests that need it skip. */
    stripeMockBinary: string | undefined;
    /** Kafka's jars for test/support/kafka-broker.ts; empty where the machine cannot run a broker (said in one SKIPPED line). */
    kafkaLibs: string;
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

/** Whether `pid` is a live process whose command line holds `marker` (Linux's /proc; false where it cannot tell). */
function isRunning(pid: number, marker: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
  } catch {
    return false;
  }
}

/**
 * Kills the `subsvc` processes tests started and left running (a test that timed out before its
 * `stop()`), and says so: otherwise they outlive the run, polling a database that is gone. Only
 * this run's (`ownedBy`: the pid of the run that started them), or those whose run is gone: a run
 * going on beside this one in the same checkout keeps its own.
 */
function killLeftProcesses(ownedBy?: number): void {
  let files: string[];
  try {
    files = readdirSync(SERVICE_PROCESSES_DIR);
  } catch {
    return;
  }
  for (const file of files) {
    const [what, owner] = readFileSync(join(SERVICE_PROCESSES_DIR, file), 'utf8').trim().split('\n');
    if (Number(owner) !== ownedBy && isRunning(Number(owner), 'vitest')) continue;
    rmSync(join(SERVICE_PROCESSES_DIR, file), { force: true });
    // Only a `subsvc` process: a file left by an earlier run may name a pid reused since.
    if (!isRunning(Number(file), 'src/main/cli.ts')) continue;
    try {
      process.kill(Number(file), 'SIGKILL');
      console.log(`killed ${what} (pid ${file}), left running by a test that did not stop it`);
    } catch {
      // Gone meanwhile.
    }
  }
}

/**
 * stripe-mock for the Stripe connection's tests (test/support/stripe-mock.ts), built on the first
 * run like FerretDB; where Go is missing, one SKIPPED line and those tests skip.
 */
async function stripeMockBinary(): Promise<string | undefined> {
  if (goToolCanBeHad(STRIPE_MOCK)) return ensureGoTool(STRIPE_MOCK);
  skipStep(
    'Stripe connection tests (test/billing/)',
    `stripe-mock ${STRIPE_MOCK.version} is built from source with Go, which is not installed`,
    `${INSTALL_GO}: npx vitest run test/billing/`,
  );
  return undefined;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  killLeftProcesses();
  project.provide('stripeMockBinary', await stripeMockBinary());
  project.provide('kafkaLibs', (await prepareKafka()) ?? '');
  const config = loadConfig();
  const log = createLogger('info');
  if (config.mongodbUri) {
    project.provide('mongoUri', config.mongodbUri);
    project.provide('dbCapabilities', await capabilitiesOf(config.mongodbUri));
    console.log(`tests use the database at MONGODB_URI`);
    return async () => killLeftProcesses(process.pid);
  }
  const database = await startEmbeddedDatabase(config.embeddedEngine, config.downloadProxy, log);
  console.log(`tests use an embedded ${database.engine}: ${database.reason}`);
  project.provide('mongoUri', database.uri);
  project.provide('dbCapabilities', await capabilitiesOf(database.uri));
  return async () => {
    killLeftProcesses(process.pid);
    await database.stop();
  };
}
