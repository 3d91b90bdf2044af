/** The MongoDB connection: the official driver, the database named by the URI's path. */
import { MongoClient, type Db } from 'mongodb';
import { ConnectionString } from 'mongodb-connection-string-url';
import type { Logger } from '../logger.js';

export const DEFAULT_DB_NAME = 'subscriptions';

export interface Database {
  readonly client: MongoClient;
  readonly db: Db;
  /** `ferretdb` or `mongodb`: FerretDB lacks some MongoDB guarantees (DESIGN.md §8). */
  readonly engine: 'ferretdb' | 'mongodb';
  close(): Promise<void>;
}

export function databaseName(uri: string): string {
  const path = new ConnectionString(uri).pathname.replace(/^\//, '');
  return decodeURIComponent(path) || DEFAULT_DB_NAME;
}

/** FerretDB answers buildInfo with its own version fields. */
export async function detectEngine(db: Db): Promise<{ engine: 'ferretdb' | 'mongodb'; version: string }> {
  const buildInfo = await db.admin().command({ buildInfo: 1 });
  const engine = 'ferretdbVersion' in buildInfo || 'ferretdb' in buildInfo ? 'ferretdb' : 'mongodb';
  return { engine, version: String(buildInfo.version) };
}

export async function connectDatabase(uri: string, timeoutMs: number, log: Logger): Promise<Database> {
  const client = new MongoClient(uri, {
    serverSelectionTimeoutMS: timeoutMs,
    connectTimeoutMS: timeoutMs,
    appName: 'subsvc',
  });
  await client.connect();
  const db = client.db(databaseName(uri));
  const { engine, version } = await detectEngine(db);
  log.info({ db: db.databaseName, engine, version }, 'database connected');
  if (engine === 'ferretdb') {
    log.warn(
      'FerretDB: a conditional update is not atomic against a concurrent one from another process; ' +
        'changes are serialised within this process only (DESIGN.md §8)',
    );
  }
  return { client, db, engine, close: () => client.close() };
}
