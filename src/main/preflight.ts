/**
 * What can be checked in a moment is checked before any slow step: a first `npm start` may spend
 * minutes building the embedded database, and a busy port found only after that wastes them.
 * Each failure is one line that names the variable to change.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { MongoClient } from 'mongodb';
import type { Config } from '../config.js';
import { CACHE_DIR, mongodObtainable } from '../db/embedded.js';
import { ferretdbBinaryPath } from '../db/ferretdb.js';
import { PreflightError } from './main.errors.js';

export type PreflightConfig = Pick<Config, 'host' | 'port' | 'metricsPort' | 'mongodbUri' | 'embeddedEngine' | 'downloadProxy'>;

/** What the embedded engine's choice depends on; the real machine's unless a test says otherwise. */
export interface EngineProbes {
  /** Whether FerretDB is already built into .cache/. */
  ferretdbBuilt(): boolean;
  /** Whether a mongod is cached or can be downloaded (src/db/embedded.ts). */
  mongodObtainable(download: Config['downloadProxy']): Promise<boolean>;
  /** Whether `go` is on PATH. */
  goInstalled(): boolean;
}

const machine: EngineProbes = {
  ferretdbBuilt: () => existsSync(ferretdbBinaryPath(CACHE_DIR)),
  mongodObtainable,
  // What the build itself will run: `go` as found on PATH.
  goInstalled: () => spawnSync('go', ['version'], { stdio: 'ignore' }).error === undefined,
};

/** Binds the address for a moment, as the service will: what stops it then stops it now. */
function assertCanListen(host: string, port: number, variable: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => reject(new PreflightError(listenProblem(error, host, port, variable))));
    server.listen(port, host, () => server.close(() => resolve()));
  });
}

function listenProblem(error: NodeJS.ErrnoException, host: string, port: number, variable: string): string {
  if (error.code === 'EADDRINUSE')
    return `port ${port} on ${host} is in use (EADDRINUSE): set ${variable} to a free port (${variable}=${port + 1} npm start)`;
  if (error.code === 'EACCES') return `port ${port} needs privileges this process lacks: set ${variable} to a port above 1023`;
  return `cannot listen on ${host}: set HOST to an address of this machine, such as 127.0.0.1 or 0.0.0.0 (${error.code ?? error.message})`;
}

/** The driver parses a URI when a client is made, before it connects: a client made and dropped costs nothing. */
function assertConnectionString(uri: string): void {
  try {
    new MongoClient(uri);
  } catch (error) {
    throw new PreflightError(`MONGODB_URI is not a valid connection string: ${(error as Error).message}`);
  }
}

/** FerretDB is built from source with Go where no mongod can be had and no build is cached. */
async function assertEmbeddedEngineCanStart(config: PreflightConfig, probes: EngineProbes): Promise<void> {
  if (config.embeddedEngine === 'memory-server' || probes.ferretdbBuilt() || probes.goInstalled()) return;
  if (config.embeddedEngine === 'auto' && (await probes.mongodObtainable(config.downloadProxy))) return;
  throw new PreflightError(
    'the embedded database (FerretDB) must be built once and Go is not installed: install Go (https://go.dev/dl/), or set MONGODB_URI to a MongoDB server',
  );
}

/** `http`: the process listens for requests (serve); a worker listens only for METRICS_PORT, if set. */
export async function preflight(config: PreflightConfig, http: boolean, probes: EngineProbes = machine): Promise<void> {
  if (config.mongodbUri) assertConnectionString(config.mongodbUri);
  if (http) await assertCanListen(config.host, config.port, 'PORT');
  if (config.metricsPort) await assertCanListen(config.host, config.metricsPort, 'METRICS_PORT');
  if (!config.mongodbUri) await assertEmbeddedEngineCanStart(config, probes);
}
