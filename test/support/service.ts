/**
 * The service under test: the real composition on the real database from the global setup, in
 * a database of its own, listening on an ephemeral loopback port. Log lines are kept for the
 * tests that read them.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Db } from 'mongodb';
import { loadConfig } from '../../src/config.js';
import { connectDatabase } from '../../src/db/mongo.js';
import { createHttpServer, type HttpLimits } from '../../src/http/http-server.js';
import { inject } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { composeService, type Service, type ServiceConfig } from '../../src/service.js';
import type { SubscriptionStatus } from '../../src/subscriptions/subscriptions.rules.js';

export interface TestService {
  readonly baseUrl: string;
  readonly db: Db;
  readonly service: Service;
  readonly logLines: Record<string, unknown>[];
  readonly engine: string;
  /** A merchant with its API key, made the way `subsvc merchant create` makes one. */
  merchant(): Promise<{ merchantId: string; apiKey: string }>;
  seed(merchantId: string, count: number, status?: SubscriptionStatus): Promise<string[]>;
  close(): Promise<void>;
}

export function databaseUri(dbName: string): string {
  return onServer(inject('mongoUri'), dbName);
}

export interface TestServiceOptions extends Partial<ServiceConfig & HttpLimits> {
  /** Another server than the run's shared one (the fault tests stop and restart their own). */
  readonly serverUri?: string;
}

/** A URI naming one database on a server, e.g. mongodb://127.0.0.1:27017/ + name. */
function onServer(serverUri: string, dbName: string): string {
  const url = new URL(serverUri);
  url.pathname = `/${dbName}`;
  return url.toString();
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const { serverUri, ...overrides } = options;
  const logLines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
      done();
    },
  });
  const log = createLogger('debug', sink);
  // The service's own defaults (an empty environment), but HTTP-only unless a test asks for
  // workers, and polling faster so that tests wait less.
  const config: ServiceConfig & HttpLimits = { ...loadConfig({}), workers: 0, bulkPollIntervalMs: 100, ...overrides };
  const database = await connectDatabase(onServer(serverUri ?? inject('mongoUri'), `test_${randomUUID().slice(0, 8)}`), config.dbTimeoutMs, log);
  const { db } = database;
  const service = await composeService(db, config, log);
  const server: Server = createHttpServer(config, (await service.app()).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await service.workers.start();
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    db,
    service,
    logLines,
    engine: inject('dbEngine'),
    merchant: () => service.auth.createMerchant(`merchant ${randomUUID().slice(0, 8)}`),
    seed: async (merchantId, count, status = 'fulfilled') =>
      (await service.subscriptions.seed({ merchantId, count, status })).map((s) => s.id),
    async close() {
      await service.workers.stop(5_000);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await db.dropDatabase().catch(() => undefined);
      await database.close();
    },
  };
}
