#!/usr/bin/env node
/**
 * subsvc: the service's one command.
 *   subsvc serve                         HTTP service (+ bulk workers unless BULK_CONCURRENCY=0)
 *   subsvc worker                        bulk workers only
 *   subsvc merchant create --name NAME   prints {"merchantId","apiKey","testApiKey"}
 *   subsvc subscriptions seed --merchant ID --count N [--status S] [--plan UUID]
 *   subsvc webhooks listen --merchant ID --port N   prints each delivery as a JSON line until stopped
 *   subsvc keys list|create --merchant ID [--mode live|test], subsvc keys revoke --merchant ID --key KEY_ID [--mode live|test]
 *   subsvc status                        the fleet: live processes, queue, due schedules, outbox, disabled endpoints
 *   subsvc trigger TYPE                  POST /v2/test-helpers/triggers with SUBSVC_API_KEY at SUBSVC_URL; prints the answer
 *   subsvc sandbox [--port N] [--seed N] test mode only, on a fresh embedded database; prints one JSON line when ready
 * Admin commands need MONGODB_URI, print one JSON line on stdout, and nothing else goes there.
 */
// First: tracing, when asked for, must be in place before the database driver loads.
import '../observability/tracing-init.js';
import { parseArgs } from 'node:util';
import { loadClientConfig, loadConfig, type Config } from '../config.js';
import { connectDatabase, type Database } from '../db/mongo.js';
import { createLogger, terminalDestination, type Logger } from '../logger.js';
import { composeDomain, fleetStatusOn, type Domain } from './composition.js';
import { UsageError } from './main.errors.js';
import { serve, work, type Running } from './processes.js';
import { startSandbox } from './sandbox.js';
import { normaliseId, type SubscriptionStatus } from '../subscriptions/subscriptions.rules.js';
import { listenForWebhooks } from '../webhooks/listen.js';
import { SeedInterruptedError } from '../subscriptions/subscriptions.errors.js';
import { IMPORT_CHUNK_LINES } from '../imports/imports.worker.js';
import { livemodeOf } from '../merchants/livemode.js';
import { formatStatus } from '../fleet/status.js';
import { stopTracing } from '../observability/tracing.js';

const USAGE = `usage:
  subsvc serve
  subsvc worker
  subsvc merchant create --name NAME
  subsvc subscriptions seed --merchant ID --count N [--status fulfilled|paused|cancelled] [--plan UUID]
  subsvc webhooks listen --merchant ID --port N
  subsvc keys list --merchant ID [--mode live|test]
  subsvc keys create --merchant ID [--mode live|test]
  subsvc keys revoke --merchant ID --key KEY_ID [--mode live|test]
  subsvc status
  subsvc trigger EVENT_TYPE   (SUBSVC_API_KEY, a test key; SUBSVC_URL, default http://127.0.0.1:8080)
  subsvc sandbox [--port N (default 8080; 0: any free port)] [--seed N (test subscriptions, default 10)]`;

/**
 * A rejection nobody awaited must not take HTTP and workers down with it: Agenda 6.2 calls
 * `unlockJob` without awaiting it, so one failed write (a network blip, FerretDB's "database is
 * locked") would otherwise end the process. Logged (the error only: no request data), and the
 * process carries on; the job's lock expires and another poll picks it up.
 */
function surviveUnhandledRejections(log: Logger): void {
  process.on('unhandledRejection', (reason: unknown) => {
    log.error({ err: reason }, 'unhandled rejection (logged; the process carries on)');
  });
}

function runUntilSignalled(running: Running, config: Config, log: Logger): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'signal received');
    const timer = setTimeout(() => {
      log.error('shutdown deadline passed; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs + 10_000);
    timer.unref();
    running.stop().then(
      () => stopTracing().finally(() => process.exit(0)),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

async function connectAdmin(uri: string, config: Config): Promise<Database> {
  const timeoutMs = Math.max(config.dbTimeoutMs, 3_000);
  const bulkDbTimeoutMs = Math.max(config.bulkDbTimeoutMs, timeoutMs);
  return connectDatabase(uri, { dbTimeoutMs: timeoutMs, bulkDbTimeoutMs }, createLogger('silent')).catch((error: Error) => {
    throw new UsageError(`cannot reach the database at MONGODB_URI: ${error.message.split('\n')[0]}`);
  });
}

/** Runs the task on the domain; `bulk` tasks write a lot at once, on the background client and its bound (BULK_DB_TIMEOUT_MS). */
async function admin<T>(config: Config, task: (domain: Domain) => Promise<T>, { bulk = false } = {}): Promise<T> {
  if (!config.mongodbUri) throw new UsageError('MONGODB_URI is not set: admin commands work on a running database');
  const database = await connectAdmin(config.mongodbUri, config);
  try {
    return await task(await composeDomain(bulk ? { db: database.background, capabilities: database.capabilities } : database, config));
  } finally {
    await database.close();
  }
}

function positiveInteger(raw: string | undefined, name: string, max: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > max) throw new UsageError(`${name} must be an integer from 1 to ${max}`);
  return value;
}

const STATUSES: readonly SubscriptionStatus[] = ['fulfilled', 'paused', 'cancelled'];

async function seed(config: Config, args: string[]): Promise<unknown> {
  const { values } = parseArgs({
    args,
    options: { merchant: { type: 'string' }, count: { type: 'string' }, status: { type: 'string' }, plan: { type: 'string' } },
  });
  const merchantId = normaliseId(values.merchant ?? '');
  if (!merchantId) throw new UsageError('--merchant must be a merchant id (a UUID)');
  const count = positiveInteger(values.count, '--count', 100_000);
  const status = (values.status ?? 'fulfilled') as SubscriptionStatus;
  if (!STATUSES.includes(status)) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
  const planId = values.plan === undefined ? undefined : normaliseId(values.plan);
  if (planId === undefined && values.plan !== undefined) throw new UsageError('--plan must be a UUID');
  return admin(
    config,
    async (service) => {
      if (!(await service.merchants.exists(merchantId))) throw new UsageError(`no merchant with id ${merchantId}`);
      try {
        const subscriptionIds = await service.importSeeder.seed({ merchantId, count, status, ...(planId ? { planId } : {}) });
        return { subscriptionIds };
      } catch (error) {
        // What an operator needs before retrying: a retry seeds `count` more, on top of these.
        const [inserted, cause] = error instanceof SeedInterruptedError ? [error.inserted, error.cause] : [0, error];
        const why = String((cause as Error)?.message ?? cause).split('\n')[0];
        throw new Error(
          `inserted ${inserted} of ${count} subscriptions for merchant ${merchantId} (and maybe the part of up to ${IMPORT_CHUNK_LINES} in flight), then: ${why}`,
          { cause: error },
        );
      }
    },
    { bulk: true },
  );
}

const KEY_COMMANDS = ['list', 'create', 'revoke'];

/**
 * A merchant's API keys, for an operator (a merchant whose every key leaked, say): the same rules
 * as the API (src/api-keys/api-keys.service.ts). `list` prints every active key (at most 100), `create`
 * the new key (shown this once), `revoke` the id it revoked. `--mode test` acts on the merchant's
 * test mode's keys (docs/partners.md), making the test mode first if the merchant has none yet
 * (merchants made before test mode): `keys create --mode test` is how such a merchant gets one.
 */
async function keys(config: Config, subcommand: string, args: string[]): Promise<unknown> {
  const { values } = parseArgs({ args, options: { merchant: { type: 'string' }, key: { type: 'string' }, mode: { type: 'string' } } });
  const liveId = normaliseId(values.merchant ?? '');
  if (!liveId) throw new UsageError('--merchant must be a merchant id (a UUID)');
  const mode = values.mode ?? 'live';
  if (mode !== 'live' && mode !== 'test') throw new UsageError('--mode must be live or test');
  const keyId = normaliseId(values.key ?? '');
  if (subcommand === 'revoke' && !keyId) throw new UsageError('--key must be the id of an API key (a UUID; subsvc keys list shows them)');
  return admin(config, async (service) => {
    if (!livemodeOf(liveId) || !(await service.merchants.exists(liveId))) throw new UsageError(`no merchant with id ${liveId}`);
    const merchantId = mode === 'live' ? liveId : await service.auth.ensureTestMode(liveId);
    if (subcommand === 'create') return service.apiKeys.create(merchantId);
    if (subcommand === 'revoke') {
      await service.apiKeys.revoke(merchantId, keyId!);
      return { revoked: keyId };
    }
    return { data: (await service.apiKeys.list(merchantId, { limit: 100, startingAfter: undefined })).data };
  });
}

/** Registers a local endpoint and prints what arrives, until SIGINT or SIGTERM removes it (src/webhooks/listen.ts). */
async function listen(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { merchant: { type: 'string' }, port: { type: 'string' } } });
  const merchantId = normaliseId(values.merchant ?? '');
  if (!merchantId) throw new UsageError('--merchant must be a merchant id (a UUID)');
  const port = positiveInteger(values.port, '--port', 65535);
  if (!config.mongodbUri) throw new UsageError('MONGODB_URI is not set: webhooks listen registers its endpoint in the running database');
  const database = await connectAdmin(config.mongodbUri, config);
  const print = (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`);
  const listening = await listenForWebhooks(database.db, merchantId, port, print);
  print({ listening: `http://127.0.0.1:${port}/`, endpointId: listening.endpointId });
  const stop = () => void listening.stop().finally(() => database.close().finally(() => process.exit(0)));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** The sandbox (src/main/sandbox.ts): its logs on stderr, warnings and errors only, so that stdout is its JSON lines. */
async function sandbox(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { port: { type: 'string' }, seed: { type: 'string' } } });
  const port = values.port === '0' ? 0 : values.port === undefined ? config.port : positiveInteger(values.port, '--port', 65535);
  const seed = values.seed === '0' ? 0 : values.seed === undefined ? 10 : positiveInteger(values.seed, '--seed', 1000);
  const log = createLogger('warn', process.stderr);
  surviveUnhandledRejections(log);
  const print = (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`);
  runUntilSignalled(await startSandbox(config, log, { port, seed }, print), config, log);
}

/**
 * Causes an event through a running service's API (docs/partners.md, "Triggers"): the answer's
 * body on stdout when it is a 201; a problem's on stderr otherwise, with exit code 1.
 */
async function trigger(type: string): Promise<unknown> {
  const { url, apiKey } = loadClientConfig();
  if (!apiKey) throw new UsageError('SUBSVC_API_KEY is not set: trigger calls the API with a test key (sk_test_...)');
  const response = await fetch(`${url}/v2/test-helpers/triggers`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify({ type }),
  }).catch((error: Error) => {
    throw new UsageError(`cannot reach the service at SUBSVC_URL (${url}): ${error.message}`);
  });
  const body = await response.text();
  if (response.status !== 201) throw new Error(`${response.status}: ${body}`);
  return JSON.parse(body) as unknown;
}

async function main(argv: string[]): Promise<void> {
  const config = loadConfig();
  const [command, subcommand, ...rest] = argv;
  if (command === 'serve' || command === 'worker') {
    const log = createLogger(config.logLevel, process.stdout.isTTY ? terminalDestination() : undefined);
    surviveUnhandledRejections(log);
    const running = command === 'serve' ? await serve(config, log, (text) => process.stdout.write(`${text}\n`)) : await work(config, log);
    runUntilSignalled(running, config, log);
    return;
  }
  if (command === 'webhooks' && subcommand === 'listen') return listen(config, rest);
  if (command === 'sandbox') return sandbox(config, subcommand === undefined ? rest : [subcommand, ...rest]);
  let result: unknown;
  if (command === 'merchant' && subcommand === 'create') {
    const { values } = parseArgs({ args: rest, options: { name: { type: 'string' } } });
    const name = values.name?.trim();
    if (!name || name.length > 200) throw new UsageError('--name is required (1 to 200 characters)');
    result = await admin(config, (service) => service.auth.createMerchant(name));
  } else if (command === 'keys' && KEY_COMMANDS.includes(subcommand ?? '')) {
    result = await keys(config, subcommand!, rest);
  } else if (command === 'status' && subcommand === undefined) {
    if (!config.mongodbUri) throw new UsageError('MONGODB_URI is not set: status reads the running fleet from its database');
    const database = await connectAdmin(config.mongodbUri, config);
    const status = await fleetStatusOn(database.db, config.heartbeatIntervalMs)().finally(() => database.close());
    // A table on a terminal; one JSON object otherwise, as every admin command prints.
    if (process.stdout.isTTY) {
      process.stdout.write(`${formatStatus(status)}\n`);
      return;
    }
    result = status;
  } else if (command === 'trigger' && subcommand !== undefined && rest.length === 0) {
    result = await trigger(subcommand);
  } else if (command === 'subscriptions' && subcommand === 'seed') {
    result = await seed(config, rest);
  } else if (command === 'help' || command === '--help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  } else {
    throw new UsageError(`unknown command: ${argv.join(' ') || '(none)'}\n${USAGE}`);
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof UsageError ? error.message : String((error as Error)?.message ?? error).split('\n')[0];
  process.stderr.write(`subsvc: ${message}\n`);
  process.exitCode = error instanceof UsageError ? 2 : 1;
});
