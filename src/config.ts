/**
 * The service's configuration: read once from the environment at boot, typed and frozen.
 * Nothing else in the code reads process.env.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { ConfigError } from './config.errors.js';
import { WEBHOOK_RETRY_DELAYS_MS } from './retry-policies.js';
import { secretsKeyOf } from './secrets/secret-box.js';

/** Stripe's own API, where STRIPE_API_BASE is unset. */
export const STRIPE_API_BASE = 'https://api.stripe.com';

export type EmbeddedEngine = 'auto' | 'memory-server' | 'ferretdb';
/**
 * DB_WORKAROUNDS: `auto`, every engine workaround the server's capabilities call for; `off`, none;
 * or the names of those to switch off (src/db/workarounds.ts checks the names when it applies them).
 */
export type DbWorkarounds = 'auto' | 'off' | readonly string[];
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  readonly host: string;
  readonly port: number;
  /** Unset: an embedded database is started (docs/design.md §8). */
  readonly mongodbUri: string | undefined;
  readonly embeddedEngine: EmbeddedEngine;
  /** SANDBOX_FERRETDB: a FerretDB binary that `subsvc sandbox` starts as it is (src/db/sandbox-engine.ts); unset: the embedded database. */
  readonly sandboxFerretdb: string | undefined;
  readonly logLevel: LogLevel;
  /** How long a resolved API key is remembered, so that hot paths do not look it up every time. */
  readonly authCacheTtlMs: number;
  /**
   * Bounds reaching the database for a request (server selection, connecting, and the driver's
   * check that the server answers, every 500 ms): past it the request answers 503 (docs/design.md §7).
   */
  readonly dbTimeoutMs: number;
  /**
   * How long a request waits for an answer, or a free connection, from a database that is
   * reachable but slow (docs/reliability.md): past it the request answers 503. At least dbTimeoutMs.
   */
  readonly dbSlowCapMs: number;
  /** The same bound for background work (bulk workers and the job queue), which may write more at once. */
  readonly bulkDbTimeoutMs: number;
  /** When the database has been unreachable this long, the client is closed and opened again. */
  readonly dbReconnectAfterMs: number;
  /** When it is still unreachable after this long, /healthz answers 503 so that an orchestrator restarts the process. */
  readonly dbUnhealthyAfterMs: number;
  /** Proxy variables of the environment, for the embedded database's download check. */
  readonly downloadProxy: DownloadProxy;
  /** How long SIGTERM waits for in-flight work before closing anyway. */
  readonly shutdownTimeoutMs: number;
  /** On SIGTERM, /readyz answers 503 for this long before the listener closes, so that a load balancer stops sending first. */
  readonly shutdownReadyDelayMs: number;
  /** Bulk chunks this process applies at once (BULK_CONCURRENCY, or its older name WORKERS); 0 makes an HTTP-only process. */
  readonly bulkConcurrency: number;
  /** How long a chunk stays locked by a worker that stopped answering (a killed one). */
  readonly bulkLockLifetimeMs: number;
  /** How often an idle worker looks for queued chunks. */
  readonly bulkPollIntervalMs: number;
  /** How often the workers look for due schedules (a scheduled transition lags by up to this, plus the time to apply). */
  readonly schedulePollMs: number;
  /** A client must send a request's headers within this, and the whole request within the next; else 408. */
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** An import's upload: at most this long without a byte, in place of requestTimeoutMs, which it may outlast (docs/lifecycle.md). */
  readonly importIdleTimeoutMs: number;
  /** Per-merchant token bucket: requests at once, and refill per second (0 = no limit). */
  readonly rateLimitBurst: number;
  readonly rateLimitPerSecond: number;
  /** Failed authentications one client address may make per minute before it gets 429 (0 = no limit). */
  readonly authFailuresPerMinute: number;
  /**
   * Proxies whose X-Forwarded-For is believed, as CIDR ranges (`10.0.0.0/8`; a single address gets
   * /32 or /128): behind them a request's client is the last address in that header not among
   * them. Empty: the connection's peer is the client.
   */
  readonly trustedProxies: readonly string[];
  /** How long bulk requests and their outcomes can be read after they were accepted. */
  readonly bulkRetentionDays: number;
  /** Webhook URLs may be http and private addresses (local development; default: on with the embedded database). */
  readonly webhooksAllowPrivateUrls: boolean;
  /** Delays before each retry of a failed webhook delivery; after the last one it is marked failed. */
  readonly webhookRetryDelaysMs: readonly number[];
  /** How long `Subsvc-Test-Outcome: timeout` holds its answer before the 504 (src/test-mode/test-outcomes.ts). */
  readonly testOutcomeHoldMs: number;
  /** Live keys are refused with 403 on every operation: a sandbox (`subsvc sandbox`) serves test mode only. */
  readonly testKeysOnly: boolean;
  /** Create a demo merchant and subscriptions at start (default: on with the embedded database). */
  readonly demo: boolean;
  /** Prometheus metrics (src/observability/metrics.ts): off, no /metrics and no counting. */
  readonly metrics: boolean;
  /** Serve /metrics on this port, on a listener of its own (and not on the API port); undefined: beside the API. */
  readonly metricsPort: number | undefined;
  /** How often each process records its heartbeat (src/fleet/heartbeat.ts); a process unseen for 3 intervals is taken as gone. */
  readonly heartbeatIntervalMs: number;
  /** Engine workarounds switched off, so that the service runs the MongoDB path on any engine (docs/engine.md). */
  readonly dbWorkarounds: DbWorkarounds;
  /**
   * ALLOW_SHARED_EMBEDDED: a `serve` or `worker` starts beside another on an engine whose conditional
   * updates are not atomic across processes (src/fleet/process-lease.ts), where they lose each
   * other's writes: for tests of fleet mechanics only.
   */
  readonly allowSharedEmbedded: boolean;
  /**
   * PUBLIC_URL: the service's address as customers reach it, the start of every portal link's url
   * (src/portal/); undefined: each link takes the origin its request was sent to.
   */
  readonly publicUrl: string | undefined;
  /**
   * SECRETS_KEY: the key (32 bytes, base64) that billing connections' secrets are encrypted with
   * (src/secrets/secret-box.ts); unset on the embedded database, one is generated and kept there.
   */
  readonly secretsKey: string | undefined;
  /** STRIPE_API_BASE: where Stripe's API is called (https://api.stripe.com; the tests' stripe-mock). */
  readonly stripeApiBase: string;
  /**
   * KAFKA_CA_FILE: PEM certificates read at boot, trusted for event destinations' TLS besides the
   * system's (a cluster whose certificates a private CA signs); undefined: the system's only.
   */
  readonly kafkaTrustedCa: string | undefined;
  /**
   * KAFKA_ALLOWED_BROKERS: `host:port` broker addresses that event destinations may use, and that
   * their brokers' metadata may name, even where they resolve to private addresses: the operator's
   * own cluster, without WEBHOOKS_ALLOW_PRIVATE_URLS opening every private address.
   */
  readonly kafkaAllowedBrokers: readonly string[];
}

export interface DownloadProxy {
  /** Whether any HTTP(S)_PROXY or ALL_PROXY variable is set. */
  readonly proxied: boolean;
  /** MONGOMS_DOWNLOAD_URL or MONGOMS_DOWNLOAD_MIRROR, as mongodb-memory-server reads them. */
  readonly mongodDownloadUrl: string | undefined;
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const value = oneOf(env, name, ['true', 'false'] as const, fallback ? 'true' : 'false');
  return value === 'true';
}

/** 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: about a day (Standard Webhooks' recommendation). */

function delays(env: Env, name: string, fallback: readonly number[]): readonly number[] {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const values = raw.split(',').map(Number);
  if (values.length > 20 || values.some((v) => !Number.isInteger(v) || v < 10 || v > 86_400_000)) {
    throw new ConfigError(`${name} must be up to 20 comma-separated integers from 10 to 86400000 (ms), got "${raw}"`);
  }
  return Object.freeze(values);
}

/** One range of TRUSTED_PROXIES in its full form (`address/prefix`), or undefined when it is not one. */
function cidr(entry: string): string | undefined {
  const [address = '', prefix, ...extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra.length > 0) return undefined;
  const bits = family === 4 ? 32 : 128;
  if (prefix === undefined) return `${address}/${bits}`;
  const length = /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1;
  return length >= 0 && length <= bits ? `${address}/${length}` : undefined;
}

function cidrList(env: Env, name: string): readonly string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return Object.freeze([]);
  const ranges = raw.split(',').map((entry) => cidr(entry.trim()));
  if (ranges.some((range) => range === undefined)) {
    throw new ConfigError(`${name} must be comma-separated CIDR ranges or addresses (e.g. 10.0.0.0/8,fd00::/8), got "${raw}"`);
  }
  return Object.freeze(ranges as string[]);
}

function mongodbUri(env: Env): string | undefined {
  const raw = env.MONGODB_URI;
  if (raw === undefined || raw === '') return undefined;
  if (!/^mongodb(\+srv)?:\/\//.test(raw)) {
    throw new ConfigError('MONGODB_URI must start with mongodb:// or mongodb+srv://');
  }
  return raw;
}

function downloadProxy(env: Env): DownloadProxy {
  const names = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'ALL_PROXY', 'all_proxy'];
  return {
    proxied: names.some((name) => Boolean(env[name])),
    mongodDownloadUrl: env.MONGOMS_DOWNLOAD_URL || env.MONGOMS_DOWNLOAD_MIRROR || undefined,
  };
}

function dbWorkarounds(env: Env): DbWorkarounds {
  const raw = env.DB_WORKAROUNDS?.trim();
  if (raw === undefined || raw === '' || raw === 'auto') return 'auto';
  if (raw === 'off') return 'off';
  const names = raw.split(',').map((name) => name.trim());
  if (names.some((name) => !/^[A-Za-z]+$/.test(name))) {
    throw new ConfigError(`DB_WORKAROUNDS must be auto, off, or a comma-separated list of workaround names, got "${raw}"`);
  }
  return Object.freeze(names);
}

/** PUBLIC_URL: an http(s) URL with no credentials, query or fragment; kept without a trailing slash. */
function publicUrl(env: Env): string | undefined {
  const raw = env.PUBLIC_URL?.trim();
  if (raw === undefined || raw === '') return undefined;
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (
    !url ||
    !/^https?:$/.test(url.protocol) ||
    url.username ||
    url.password ||
    url.search ||
    url.hash ||
    raw.includes('?') ||
    raw.includes('#')
  )
    throw new ConfigError(
      `PUBLIC_URL must be an http or https URL without credentials, query or fragment (https://billing.example.com), got "${raw}"`,
    );
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

/** SECRETS_KEY, checked at boot so that a bad one fails the start rather than the first secret stored. */
function secretsKey(env: Env): string | undefined {
  const raw = env.SECRETS_KEY?.trim();
  if (raw === undefined || raw === '') return undefined;
  secretsKeyOf(raw);
  return raw;
}

/** KAFKA_CA_FILE: a readable file holding at least one PEM certificate; its text. */
function kafkaTrustedCa(env: Env): string | undefined {
  const path = env.KAFKA_CA_FILE?.trim();
  if (path === undefined || path === '') return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`KAFKA_CA_FILE must name a readable PEM file, got "${path}": ${(error as Error).message}`);
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----'))
    throw new ConfigError(`KAFKA_CA_FILE must name a file of PEM certificates (-----BEGIN CERTIFICATE-----), got "${path}"`);
  return text;
}

/** KAFKA_ALLOWED_BROKERS: comma-separated `host:port`, kept lower-case. */
function kafkaAllowedBrokers(env: Env): readonly string[] {
  const raw = env.KAFKA_ALLOWED_BROKERS?.trim();
  if (raw === undefined || raw === '') return Object.freeze([]);
  const entries = raw.split(',').map((entry) => entry.trim().toLowerCase());
  const bad = entries.find((entry) => !/^[a-z0-9.-]+:\d{1,5}$/.test(entry) && !/^\[[0-9a-f:.]+\]:\d{1,5}$/.test(entry));
  if (bad !== undefined)
    throw new ConfigError(`KAFKA_ALLOWED_BROKERS must be comma-separated host:port addresses (kafka-1.internal:9093), got "${bad}"`);
  return Object.freeze(entries);
}

/** STRIPE_API_BASE: an http(s) origin, kept without a trailing slash. */
function stripeApiBase(env: Env): string {
  const raw = env.STRIPE_API_BASE?.trim() || STRIPE_API_BASE;
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password || url.search || url.hash || url.pathname !== '/')
    throw new ConfigError(`STRIPE_API_BASE must be an http or https origin (https://api.stripe.com), got "${raw}"`);
  return url.origin;
}

/** A file named by its absolute path, or undefined when unset. */
function absolutePath(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!raw.startsWith('/')) throw new ConfigError(`${name} must be an absolute path, got "${raw}"`);
  return raw;
}

/** BULK_CONCURRENCY; WORKERS is its former name, still accepted when the new one is unset. */
function bulkConcurrency(env: Env): number {
  const name = env.BULK_CONCURRENCY === undefined || env.BULK_CONCURRENCY === '' ? 'WORKERS' : 'BULK_CONCURRENCY';
  return integer(env, name, 4, 0, 64);
}

export function loadConfig(env: Env = process.env): Config {
  const uri = mongodbUri(env);
  const demo = oneOf(env, 'DEMO', ['on', 'off', 'auto'], 'auto');
  const headersTimeoutMs = integer(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, 600_000);
  const requestTimeoutMs = integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000);
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new ConfigError(`REQUEST_TIMEOUT_MS (${requestTimeoutMs}) must be at least HEADERS_TIMEOUT_MS (${headersTimeoutMs})`);
  }
  const dbTimeoutMs = integer(env, 'DB_TIMEOUT_MS', 1_500, 100, 60_000);
  const dbSlowCapMs = integer(env, 'DB_SLOW_CAP_MS', Math.max(10_000, dbTimeoutMs), 100, 600_000);
  if (dbSlowCapMs < dbTimeoutMs) {
    throw new ConfigError(`DB_SLOW_CAP_MS (${dbSlowCapMs}) must be at least DB_TIMEOUT_MS (${dbTimeoutMs})`);
  }
  return Object.freeze({
    host: env.HOST || '127.0.0.1',
    port: integer(env, 'PORT', 8080, 0, 65535),
    mongodbUri: uri,
    embeddedEngine: oneOf(env, 'EMBEDDED_DB', ['auto', 'memory-server', 'ferretdb'] as const, 'auto'),
    sandboxFerretdb: absolutePath(env, 'SANDBOX_FERRETDB'),
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    authCacheTtlMs: integer(env, 'AUTH_CACHE_TTL_MS', 30_000, 0, 3_600_000),
    dbTimeoutMs,
    dbSlowCapMs,
    bulkDbTimeoutMs: integer(env, 'BULK_DB_TIMEOUT_MS', 30_000, 100, 600_000),
    dbReconnectAfterMs: integer(env, 'DB_RECONNECT_AFTER_MS', 10_000, 500, 3_600_000),
    dbUnhealthyAfterMs: integer(env, 'DB_UNHEALTHY_AFTER_MS', 60_000, 1_000, 86_400_000),
    downloadProxy: downloadProxy(env),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    shutdownReadyDelayMs: integer(env, 'SHUTDOWN_READY_DELAY_MS', 2_000, 0, 600_000),
    bulkConcurrency: bulkConcurrency(env),
    bulkLockLifetimeMs: integer(env, 'BULK_LOCK_LIFETIME_MS', 10_000, 1_000, 3_600_000),
    bulkPollIntervalMs: integer(env, 'BULK_POLL_INTERVAL_MS', 200, 10, 60_000),
    schedulePollMs: integer(env, 'SCHEDULE_POLL_MS', 1_000, 10, 60_000),
    headersTimeoutMs,
    requestTimeoutMs,
    importIdleTimeoutMs: integer(env, 'IMPORT_IDLE_TIMEOUT_MS', 30_000, 100, 3_600_000),
    rateLimitBurst: integer(env, 'RATE_LIMIT_BURST', 200, 1, 1_000_000),
    rateLimitPerSecond: integer(env, 'RATE_LIMIT_PER_SECOND', 100, 0, 1_000_000),
    authFailuresPerMinute: integer(env, 'AUTH_FAILURE_LIMIT', 60, 0, 1_000_000),
    trustedProxies: cidrList(env, 'TRUSTED_PROXIES'),
    bulkRetentionDays: integer(env, 'BULK_RETENTION_DAYS', 30, 1, 3650),
    webhooksAllowPrivateUrls: flag(env, 'WEBHOOKS_ALLOW_PRIVATE_URLS', uri === undefined),
    webhookRetryDelaysMs: delays(env, 'WEBHOOK_RETRY_DELAYS_MS', WEBHOOK_RETRY_DELAYS_MS),
    testOutcomeHoldMs: integer(env, 'TEST_OUTCOME_HOLD_MS', 35_000, 0, 600_000),
    testKeysOnly: flag(env, 'TEST_KEYS_ONLY', false),
    demo: demo === 'on' || (demo === 'auto' && uri === undefined),
    metrics: oneOf(env, 'METRICS', ['on', 'off'] as const, 'on') === 'on',
    metricsPort: env.METRICS_PORT ? integer(env, 'METRICS_PORT', 0, 0, 65535) : undefined,
    heartbeatIntervalMs: integer(env, 'HEARTBEAT_INTERVAL_MS', 5_000, 100, 60_000),
    dbWorkarounds: dbWorkarounds(env),
    allowSharedEmbedded: flag(env, 'ALLOW_SHARED_EMBEDDED', false),
    publicUrl: publicUrl(env),
    secretsKey: secretsKey(env),
    stripeApiBase: stripeApiBase(env),
    kafkaTrustedCa: kafkaTrustedCa(env),
    kafkaAllowedBrokers: kafkaAllowedBrokers(env),
  });
}

/** What `subsvc trigger` calls the API with: a client's settings, not the service's. */
export interface ClientConfig {
  /** SUBSVC_URL: the service's base URL. */
  readonly url: string;
  /** SUBSVC_API_KEY: a test key (the test helpers refuse live ones). Never printed. */
  readonly apiKey: string | undefined;
}

export function loadClientConfig(env: Env = process.env): ClientConfig {
  const url = env.SUBSVC_URL || 'http://127.0.0.1:8080';
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
    throw new ConfigError(`SUBSVC_URL must be an http or https URL; it is ${url}`);
  return Object.freeze({ url: url.replace(/\/+$/, ''), apiKey: env.SUBSVC_API_KEY || undefined });
}
