/**
 * The composition root: every repository built once per database client, every service and entry
 * point built once, dependencies passed in; the engine workarounds decided here from the server's
 * capabilities (src/db/workarounds.ts) and logged at start; and startService(), the one assembly
 * of HTTP server and workers that `serve`, the tests and the scripts all run. The parts are built
 * in order, each by its own file: the stores (compose-stores.ts), the background work
 * (compose-workers.ts), then what requests use (compose-http.ts).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { BulkRepository } from '../bulk/bulk.repository.js';
import type { Config } from '../config.js';
import type { Database } from '../db/mongo.js';
import type { RetentionSweeper } from '../db/retention.js';
import { createHttpServer, type HttpLimits } from '../http/http-server.js';
import type { IdempotencyRepository } from '../idempotency/idempotency.repository.js';
import type { Logger } from '../logger.js';
import type { PortalLinksRepository } from '../portal/portal-links.repository.js';
import { DEFAULT_HEARTBEAT_MS, Heartbeat, type LiveProcess, type ProcessRole } from '../fleet/heartbeat.js';
import { RateLimitShare } from '../fleet/rate-limit-share.js';
import { serviceVersion } from '../lib/project-root.js';
import { metrics, startMetricsServer } from '../observability/metrics.js';
import { announceWorkarounds, engineFor, storesOf } from './compose-stores.js';
import { composeWorkers, type Workers } from './compose-workers.js';
import { composeHttp, merchantLimiter, readinessOf } from './compose-http.js';
import { domainOn, type Domain } from './compose-domain.js';

export { engineFor, type Engine } from './compose-stores.js';
export { fleetStatusOn } from './compose-http.js';
export type { Workers } from './compose-workers.js';
export { composeDomain, type Domain } from './compose-domain.js';

export type ServiceConfig = Pick<
  Config,
  | 'authCacheTtlMs'
  | 'bulkConcurrency'
  | 'bulkLockLifetimeMs'
  | 'bulkPollIntervalMs'
  | 'schedulePollMs'
  | 'bulkRetentionDays'
  | 'dbTimeoutMs'
  | 'rateLimitBurst'
  | 'rateLimitPerSecond'
  | 'authFailuresPerMinute'
  | 'webhooksAllowPrivateUrls'
  | 'webhookRetryDelaysMs'
> &
  Partial<
    Pick<
      Config,
      | 'metrics'
      | 'metricsPort'
      | 'heartbeatIntervalMs'
      | 'shutdownReadyDelayMs'
      | 'trustedProxies'
      | 'dbWorkarounds'
      | 'publicUrl'
      | 'testOutcomeHoldMs'
      | 'secretsKey'
      | 'stripeApiBase'
      | 'kafkaTrustedCa'
      | 'kafkaAllowedBrokers'
      | 'testKeysOnly'
      | 'mongodbUri'
      | 'importIdleTimeoutMs'
    >
  > & {
    /** On the embedded database: where the key for its secrets is kept when SECRETS_KEY is unset (src/secrets/secret-box.ts). */
    readonly embeddedSecretsKeyFile?: string | undefined;
  };

/** The domain plus the workers and the HTTP app: what `serve`, `worker` and the tests need. */
export interface Service extends Domain {
  /**
   * Bulk, schedule and webhook workers, on the background client (see db/mongo.ts): start() takes
   * jobs and polls due schedules (unless BULK_CONCURRENCY=0), stop() drains them.
   */
  readonly workers: Workers;
  /** Bulk requests and their outcomes as stored. */
  readonly bulkRequests: BulkRepository;
  readonly idempotency: IdempotencyRepository;
  /** Portal links as stored, for their retention (src/portal/portal-links.repository.ts). */
  readonly portalLinks: PortalLinksRepository;
  /** The sweep that deletes expired documents where the server has no TTL indexes (src/db/retention.ts); undefined where it has them. */
  readonly retention: RetentionSweeper | undefined;
  /** Marks the process as stopping: /readyz answers 503 from now on (src/http/health.routes.ts). */
  beginStopping(): void;
  /** The fleet as the last heartbeat read it: the per-merchant limit takes this process's share (src/fleet/heartbeat.ts). */
  fleetChanged(live: readonly LiveProcess[]): void;
  app(): Promise<Koa>;
}

/**
 * Requests use `database.db`; everything that runs in the background (the dispatch after a 202,
 * the workers, Agenda, the events relay) uses `database.background`, so that its writes get the
 * longer BULK_DB_TIMEOUT_MS: one set of repositories on each (one set when they are the same
 * client, as in a worker process). Every subscriptions service of the process shares one
 * per-subscription queue, where the server needs one.
 */
export async function composeService(
  database: Database,
  config: ServiceConfig,
  log: Logger,
  healthy: () => boolean = () => true,
): Promise<Service> {
  const engine = engineFor(database.capabilities, config.dbWorkarounds);
  announceWorkarounds(engine, database.capabilities, config.dbWorkarounds, log);
  const both = await storesOf(database, engine, config.bulkRetentionDays);
  const domain = domainOn(both.stores, engine.mutex, config, log);
  const work = composeWorkers(database.background, engine, both, domain, config, log);
  const limiter = merchantLimiter(config);
  const share = new RateLimitShare(limiter, { burst: config.rateLimitBurst, perSecond: config.rateLimitPerSecond }, log);
  const { readiness, beginStopping } = readinessOf(database, config, work.workers, healthy);
  return {
    ...domain,
    workers: work.workers,
    bulkRequests: both.backgroundStores.bulk,
    idempotency: both.stores.idempotency,
    portalLinks: both.backgroundStores.portalLinks,
    retention: work.retention,
    beginStopping,
    fleetChanged: (live) => share.fleetChanged(live),
    app: composeHttp({ database, config, both, domain, work, readiness, limiter, log }),
  };
}

export interface RunningService {
  readonly service: Service;
  readonly server: Server;
  readonly url: string;
  /** GET /metrics on its own listener (METRICS_PORT); undefined: on `url`, or metrics off. */
  readonly metricsUrl: string | undefined;
  /** Stops accepting requests, drains the workers within the deadline, closes the server (not the database). */
  stop(deadlineMs: number): Promise<void>;
}

export interface ListenOptions {
  readonly port: number;
  readonly host: string;
  /** What /healthz reports (db/connection-watch.ts); always healthy without one. */
  readonly healthy?: () => boolean;
  /** false: the caller starts the workers itself, with service.workers.start() (default true). */
  readonly startWorkers?: boolean;
}

function listen(server: Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const { port: actual } = server.address() as AddressInfo;
      resolve(`http://${host.includes(':') ? `[${host}]` : host}:${actual}`);
    });
  });
}

/** The process's heartbeat (src/fleet/heartbeat.ts); what it reads of the fleet goes to the service (the rate limit's share). */
export function startHeartbeat(database: Database, config: ServiceConfig, log: Logger, service: Service, role: ProcessRole): Heartbeat {
  const version = serviceVersion();
  metrics()?.identify(version, role);
  return new Heartbeat(
    database.background,
    {
      role,
      http: role === 'serve',
      version,
      intervalMs: config.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_MS,
      ttlIndexes: database.capabilities.ttlIndexes,
      onFleet: (live) => service.fleetChanged(live),
    },
    log,
  );
}

/** METRICS_PORT: /metrics on a listener of its own (src/observability/metrics.ts). */
export async function startMetricsListener(
  config: ServiceConfig,
  host: string,
  log: Logger,
): Promise<{ url: string; close(): Promise<void> } | undefined> {
  const registry = metrics();
  if (!registry || config.metricsPort === undefined) return undefined;
  const listening = await startMetricsServer(registry, config.metricsPort, host);
  log.info({ url: listening.url }, 'metrics listening');
  return listening;
}

/** The service listening, with its workers started: the one assembly everything runs. */
export async function startService(
  database: Database,
  config: ServiceConfig & HttpLimits,
  log: Logger,
  options: ListenOptions,
): Promise<RunningService> {
  const service = await composeService(database, config, log, options.healthy);
  const handle = (await service.app()).callback();
  // Koa answers a request's error itself (ctx.onerror): the promise a request's handling returns never rejects.
  const server = createHttpServer(config, (req, res) => void handle(req, res));
  // Counted among the HTTP processes before the first request, so that the rate limit's share is right from the start.
  const heartbeat = startHeartbeat(database, config, log, service, 'serve');
  await heartbeat.start();
  let url: string;
  let metricsServer: Awaited<ReturnType<typeof startMetricsListener>>;
  try {
    url = await listen(server, options.port, options.host);
    metricsServer = await startMetricsListener(config, options.host, log);
  } catch (error) {
    server.close();
    await heartbeat.stop();
    throw error;
  }
  if (options.startWorkers !== false) await service.workers.start();
  return {
    service,
    server,
    url,
    metricsUrl: metricsServer?.url,
    async stop(deadlineMs) {
      await stopServing(service, server, config.shutdownReadyDelayMs, deadlineMs);
      await Promise.all([service.auth.flush(), heartbeat.stop(), metricsServer?.close()]);
    },
  };
}

/** Stops taking requests and drains the workers, then the requests in flight, within the deadline. */
async function stopServing(service: Service, server: Server, readyDelayMs: number | undefined, deadlineMs: number): Promise<void> {
  // Not ready first, still serving: a load balancer probing /readyz stops sending before the listener closes.
  service.beginStopping();
  if (readyDelayMs) await new Promise((resolve) => setTimeout(resolve, readyDelayMs));
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const deadline = Date.now() + deadlineMs;
  // Background work stops in its order before the clients close (Workers.stop).
  await service.workers.stop(deadlineMs);
  // Requests in flight finish (the server closes once their connections end), within the deadline; only then are the rest cut.
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))))]);
  clearTimeout(timer);
  server.closeAllConnections();
  await closed;
}
