/**
 * The service under test: the real composition on the real database from the global setup, in
 * a database of its own, listening on an ephemeral loopback port. Log lines are kept for the
 * tests that read them.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { loadConfig } from '../../src/config.js';
import { startService, type Service, type ServiceConfig } from '../../src/main/composition.js';
import { connectDatabase, type DatabaseTimeouts } from '../../src/db/mongo.js';
import type { HttpLimits } from '../../src/http/http-server.js';
import { inject } from 'vitest';
import { collectedLog } from './collected-log.js';
import type { SubscriptionStatus } from '../../src/subscriptions/subscriptions.rules.js';

export interface TestService {
  readonly baseUrl: string;
  readonly db: Db;
  readonly service: Service;
  readonly logLines: Record<string, unknown>[];
  /** A merchant with its API key, made the way `subsvc merchant create` makes one. */
  merchant(): Promise<{ merchantId: string; apiKey: string; testApiKey: string }>;
  seed(merchantId: string, count: number, status?: SubscriptionStatus): Promise<string[]>;
  close(): Promise<void>;
}

export function databaseUri(dbName: string): string {
  return onServer(inject('mongoUri'), dbName);
}

export interface TestServiceOptions extends Partial<ServiceConfig & HttpLimits & DatabaseTimeouts> {
  /** Another server than the run's shared one (e.g. the wire proxy's URI). */
  readonly serverUri?: string;
  /** The tests' name for bulkConcurrency: chunks this service applies at once (default 0, HTTP only). */
  readonly workers?: number;
  /** Another service's database, to run two services (two processes' worth of clients) on one database. */
  readonly databaseName?: string;
}

/** A URI naming one database on a server, e.g. mongodb://127.0.0.1:27017/ + name. */
function onServer(serverUri: string, dbName: string): string {
  const url = new URL(serverUri);
  url.pathname = `/${dbName}`;
  return url.toString();
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const { serverUri, workers, databaseName, ...overrides } = options;
  const { lines: logLines, log } = collectedLog();
  // The service's own defaults (an empty environment), but HTTP-only unless a test asks for
  // workers, polling faster so that tests wait less, and a request's database bound of 10 s
  // unless a test sets dbTimeoutMs: FerretDB on a machine shared by parallel test runs can take
  // seconds for a write, which would turn into 503s that the test is not about.
  // No readiness delay on close (a test's service has no load balancer to tell), unless a test asks for one.
  // DB_WORKAROUNDS reaches it, for `npm test`'s pass without the workarounds the engine can do without.
  const config = {
    ...loadConfig({ DB_WORKAROUNDS: process.env.DB_WORKAROUNDS }),
    bulkConcurrency: workers ?? 0,
    bulkPollIntervalMs: 100,
    dbTimeoutMs: 10_000,
    shutdownReadyDelayMs: 0,
    // A key for the secrets a test stores (billing connections, event destinations' passwords); a test of its absence sets it undefined.
    secretsKey: randomBytes(32).toString('base64'),
    ...overrides,
  };
  const database = await connectDatabase(
    onServer(serverUri ?? inject('mongoUri'), databaseName ?? `test_${randomUUID().slice(0, 8)}`),
    config,
    log,
  );
  const running = await startService(database, config, log, { port: 0, host: '127.0.0.1' });
  const { service } = running;
  return {
    baseUrl: running.url,
    // The tests' own reads and writes take the background client's longer bound.
    db: database.background,
    service,
    logLines,
    merchant: () => service.auth.createMerchant(`merchant ${randomUUID().slice(0, 8)}`),
    seed: async (merchantId, count, status = 'fulfilled') => (await service.seeder.seed({ merchantId, count, status })).map((s) => s.id),
    async close() {
      await running.stop(5_000);
      if (!databaseName) await database.background.dropDatabase().catch(() => undefined);
      await database.close();
    },
  };
}
