/**
 * The database a sandbox runs on (`subsvc sandbox`, docs/sandbox.md), never a serve's or a worker's:
 * where SANDBOX_FERRETDB names a FerretDB binary (the image carries one, built with the project's
 * patches), that binary is started as it is, with no build and no development dependency; otherwise
 * the embedded database that `npm start` uses.
 */
import { accessSync, constants } from 'node:fs';
import type { Config } from '../config.js';
import { ConfigError } from '../config.errors.js';
import type { Logger } from '../logger.js';
import { startEmbeddedDatabase, type EmbeddedDatabase } from './embedded.js';
import { startFerretdb } from './ferretdb.js';

/** Which engine a sandbox starts, for its log: the named binary, or the checkout's embedded database. */
export type SandboxEngineProvider = 'prebuilt-ferretdb' | 'embedded';

export function sandboxEngineProvider(config: Pick<Config, 'sandboxFerretdb'>): SandboxEngineProvider {
  return config.sandboxFerretdb === undefined ? 'embedded' : 'prebuilt-ferretdb';
}

async function startPrebuiltFerretdb(binary: string, log: Logger, dataDir: string): Promise<EmbeddedDatabase> {
  try {
    accessSync(binary, constants.X_OK);
  } catch {
    throw new ConfigError(`SANDBOX_FERRETDB names ${binary}, which is not an executable file`);
  }
  const server = await startFerretdb(binary, log, { dataDir });
  return { uri: server.uri, engine: 'ferretdb', reason: `SANDBOX_FERRETDB=${binary}`, stop: () => server.stop() };
}

/** `dataDir`: where the engine keeps its data, the caller's to remove. */
export async function startSandboxEngine(
  config: Pick<Config, 'sandboxFerretdb' | 'embeddedEngine' | 'downloadProxy'>,
  log: Logger,
  dataDir: string,
): Promise<EmbeddedDatabase> {
  if (config.sandboxFerretdb === undefined) return startEmbeddedDatabase(config.embeddedEngine, config.downloadProxy, log, dataDir);
  const database = await startPrebuiltFerretdb(config.sandboxFerretdb, log, dataDir);
  log.info({ engine: database.engine, provider: sandboxEngineProvider(config) }, 'sandbox database started');
  return database;
}
