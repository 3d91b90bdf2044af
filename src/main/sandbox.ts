/**
 * `subsvc sandbox` (docs/sandbox.md): the real service for a partner's CI, in one command. Test
 * mode only (live keys answer 403), on a fresh embedded database in a temporary folder that is
 * deleted when the sandbox stops; a merchant, its test key, test subscriptions and a webhook
 * listener are made, and printed as one JSON line on stdout once the sandbox answers requests.
 * Each delivery the listener receives follows as a JSON line of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../config.js';
import type { EmbeddedDatabase } from '../db/embedded.js';
import { connectDatabase, type Database } from '../db/mongo.js';
import { startSandboxEngine } from '../db/sandbox-engine.js';
import { freePort } from '../lib/net.js';
import { testModeIdOf } from '../merchants/livemode.js';
import type { Logger } from '../logger.js';
import { listenForWebhooks, type Listening } from '../webhooks/listen.js';
import { startService, type RunningService } from './composition.js';
import type { Running } from './processes.js';

export interface SandboxOptions {
  readonly port: number;
  /** Test subscriptions made at start. */
  readonly seed: number;
}

/** What a sandbox prints first, on one line: everything a partner's suite needs. */
export interface SandboxReady {
  readonly url: string;
  readonly merchantId: string;
  readonly testModeId: string;
  readonly testApiKey: string;
  readonly subscriptionIds: readonly string[];
  readonly webhooks: { readonly url: string; readonly endpointId: string };
  /** The temporary folder of its database, gone once the sandbox has stopped. */
  readonly dataDir: string;
}

/** The service's own configuration, for a sandbox: test keys only, no demo, local webhook URLs allowed. */
function sandboxConfig(config: Config): Config {
  // No load balancer probes a sandbox: it stops at once.
  return Object.freeze({
    ...config,
    mongodbUri: undefined,
    demo: false,
    testKeysOnly: true,
    webhooksAllowPrivateUrls: true,
    shutdownReadyDelayMs: 0,
  });
}

export async function startSandbox(
  base: Config,
  log: Logger,
  { port, seed }: SandboxOptions,
  print: (line: unknown) => void,
): Promise<Running> {
  const config = sandboxConfig(base);
  const dataDir = mkdtempSync(join(tmpdir(), 'subsvc-sandbox-'));
  const removeFolder = () => rmSync(dataDir, { recursive: true, force: true });
  // However the process ends short of a kill, the folder goes with it.
  process.once('exit', removeFolder);
  let embedded: EmbeddedDatabase | undefined;
  let database: Database | undefined;
  let running: RunningService | undefined;
  let listening: Listening | undefined;
  const stop = async (): Promise<void> => {
    await listening?.stop();
    await running?.stop(config.shutdownTimeoutMs);
    await database?.close();
    await embedded?.stop();
    removeFolder();
  };
  try {
    embedded = await startSandboxEngine(config, log, dataDir);
    database = await connectDatabase(`${embedded.uri.replace(/\/$/, '')}/sandbox`, config, log);
    running = await startService(database, config, log, { port, host: config.host });
    const { service, url } = running;
    const { merchantId, testApiKey } = await service.auth.createMerchant('Sandbox merchant');
    const testModeId = testModeIdOf(merchantId);
    const subscriptions = seed > 0 ? await service.seeder.seed({ merchantId: testModeId, count: seed, status: 'fulfilled' }) : [];
    const listenerPort = await freePort();
    listening = await listenForWebhooks(database.db, testModeId, listenerPort, print);
    const ready: SandboxReady = {
      url,
      merchantId,
      testModeId,
      testApiKey,
      subscriptionIds: subscriptions.map((s) => s.id),
      webhooks: { url: `http://127.0.0.1:${listenerPort}/`, endpointId: listening.endpointId },
      dataDir,
    };
    print(ready);
    return { url, stop };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}
