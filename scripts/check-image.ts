/**
 * `npm run check:image`: builds the project's Dockerfile, unchanged, and runs the image for real
 * against the embedded database on loopback (docs/operations.md, "The image, built and run").
 *
 * 1. the engine: Docker where its daemon answers, else podman with runc (scripts/image/engine.ts);
 * 2. the base: the Dockerfile's own NODE_IMAGE, or a stand-in built here and cached when that
 *    cannot be pulled (scripts/image/base.ts); the image is built on it with --build-arg NODE_IMAGE;
 * 3. its node_modules: the driver, and no mongodb-memory-server (a development dependency);
 * 4. `merchant create` and `subscriptions seed` through the image's CLI;
 * 5. an HTTP-only `serve` (BULK_CONCURRENCY=0): /healthz, /readyz, a pause and a bulk pause with the
 *    created key, its process's uid is not 0, the image's HEALTHCHECK passes; the bulk stays pending;
 * 6. a `worker` in a second container applies that bulk, and its metrics listener answers (the
 *    Compose file's check for workers);
 * 7. SIGTERM to each: exit 0 within SHUTDOWN_TIMEOUT_MS + 10 s, the documented deadline.
 * 8. `sandbox` (docs/sandbox.md): on the FerretDB the image carries (the Dockerfile's `ferretdb` stage,
 *    or the project's own build of it where GO_IMAGE cannot be pulled: scripts/image/ferretdb.ts),
 *    with no MONGODB_URI, it prints its JSON line, answers requests with the printed test key, and
 *    exits 0 on SIGTERM;
 * 9. the project's own services of deploy/compose.yaml, as far as they can run here (scripts/image/compose.ts).
 *
 * `npm run check:image -- --no-cache` builds without the engine's layer cache (the base stays cached).
 *
 * Where no engine can run (no Docker daemon, podman not installable, not root) it prints one line,
 * `SKIPPED  image check …` (scripts/skipped-steps.ts), and exits 0; any failure of the build or the run exits 1.
 */
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { startEmbeddedDatabase } from '../src/db/embedded.js';
import { freePort } from '../src/lib/net.js';
import { projectRoot } from '../src/lib/project-root.js';
import { createLogger } from '../src/logger.js';
import { resolveBase } from './image/base.js';
import { buildImage, imageSize } from './image/build.js';
import {
  healthcheck,
  logsOf,
  modulesOf,
  remove,
  runDetached,
  runOnce,
  stopWithSigterm,
  uidsOf,
  type Container,
} from './image/containers.js';
import { skipStep } from './skipped-steps.js';
import { findEngine, type Engine } from './image/engine.js';
import { resolveFerretdbStage } from './image/ferretdb.js';
import { runCompose } from './image/compose.js';

const root = projectRoot();
const CACHE_DIR = join(root, '.cache', 'image');
const TAG = 'localhost/subsvc:check';
/** SIGTERM's deadline with the image's defaults (docs/operations.md, "Rolling restarts"). */
const STOP_DEADLINE_S = loadConfig({}).shutdownTimeoutMs / 1000 + 10;
const SUBSCRIPTIONS = 20;

const say = (line: string) => console.log(line);
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

class CheckFailed extends Error {}

function expect(condition: boolean, what: string): void {
  if (!condition) throw new CheckFailed(what);
}

async function request(
  url: string,
  init: { method?: string; key?: string; body?: unknown } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = init.key ? { 'x-api-key': init.key } : {};
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new CheckFailed(`${what}: not within ${timeoutMs / 1000} s`);
}

interface Run {
  readonly engine: Engine;
  readonly env: Record<string, string>;
  readonly containers: Container[];
  readonly name: (role: string) => string;
}

function start(run: Run, role: string, env: Record<string, string>): Container {
  const container = runDetached(run.engine, TAG, run.name(role), { ...run.env, ...env }, [role]);
  run.containers.push(container);
  return container;
}

/** The HTTP-only serve: up, ready, not root, healthy by its HEALTHCHECK; a pause and a bulk pause that stays queued. */
async function checkServe(run: Run, apiKey: string, ids: string[]): Promise<{ container: Container; requestId: string; facts: string }> {
  const port = await freePort();
  const api = `http://127.0.0.1:${port}`;
  const container = start(run, 'serve', { PORT: String(port), BULK_CONCURRENCY: '0', METRICS_PORT: String(await freePort()) });
  const startedAt = Date.now();
  await waitFor('serve answers /healthz', 90_000, async () => ((await request(`${api}/healthz`)).status === 200 ? true : undefined));
  const upIn = seconds(startedAt);
  const ready = await request(`${api}/readyz`);
  expect(ready.status === 200 && ready.body.status === 'ready', `/readyz answered ${ready.status} ${JSON.stringify(ready.body)}`);
  const uids = uidsOf(run.engine, container);
  expect(uids.length > 0 && uids.every((uid) => uid !== 0), `serve's process runs as uid ${uids.join('/')}`);
  const health = await healthcheck(run.engine, container, 60_000);
  expect(health === 'healthy', `the image's HEALTHCHECK: ${health}`);
  const paused = await request(`${api}/v2/subscriptions/${ids[0]}/pause`, { method: 'POST', key: apiKey });
  expect(paused.status === 200 && paused.body.status === 'paused', `pause answered ${paused.status} ${JSON.stringify(paused.body)}`);
  const bulk = await request(`${api}/v2/subscriptions/bulk/pause`, { method: 'POST', key: apiKey, body: { subscriptions: ids } });
  expect(bulk.status === 202 && bulk.body.acceptedCount === ids.length, `bulk pause answered ${bulk.status} ${JSON.stringify(bulk.body)}`);
  const requestId = String(bulk.body.requestId);
  await new Promise((r) => setTimeout(r, 3_000));
  const queued = await request(`${api}/v2/bulk-requests/${requestId}`, { key: apiKey });
  const pending = (queued.body.counts as Record<string, number> | undefined)?.pending;
  expect(queued.status === 200 && pending === ids.length, `an HTTP-only serve applied the bulk itself: ${JSON.stringify(queued.body)}`);
  const facts = `serve up in ${upIn}, /healthz 200, /readyz ${String(ready.body.status)}, uid ${uids[0]}, HEALTHCHECK ${health}, pause 200, bulk 202 (${ids.length}) still ${String(queued.body.state)} 3 s later`;
  return { container, requestId: `${api}/v2/bulk-requests/${requestId}`, facts };
}

/** A worker in its own container applies the bulk the serve accepted. */
async function checkWorker(run: Run, apiKey: string, statusUrl: string, count: number): Promise<{ container: Container; facts: string }> {
  const metricsPort = await freePort();
  const container = start(run, 'worker', { METRICS_PORT: String(metricsPort) });
  const startedAt = Date.now();
  const done = await waitFor('the worker completes the bulk', 120_000, async () => {
    const status = await request(statusUrl, { key: apiKey });
    return status.body.state === 'completed' ? (status.body.counts as Record<string, number>) : undefined;
  });
  expect(
    done.applied === count - 1 && done.noop === 1,
    `the bulk completed with ${JSON.stringify(done)}, not ${count - 1} applied and 1 no-op`,
  );
  const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  expect(metrics.ok, `the worker's metrics listener answered ${metrics.status}`);
  return { container, facts: `worker applied ${done.applied} + ${done.noop} no-op in ${seconds(startedAt)}, /metrics 200` };
}

function stopEach(run: Run, containers: Container[]): string {
  return containers
    .map((container) => {
      const { exitCode, seconds: took } = stopWithSigterm(run.engine, container);
      expect(
        exitCode === 0 && took <= STOP_DEADLINE_S,
        `${container.role} after SIGTERM: exit ${exitCode} in ${took.toFixed(1)} s (wanted 0 within ${STOP_DEADLINE_S} s)\n${logsOf(run.engine, container)}`,
      );
      return `${container.role} exit 0 in ${took.toFixed(1)} s`;
    })
    .join(', ');
}

interface ImageRun {
  readonly facts: string;
  /** For the Compose run on the same database: the merchant's key and its subscriptions (paused by now). */
  readonly apiKey: string;
  readonly ids: string[];
}

async function runImage(engine: Engine, uri: string): Promise<ImageRun> {
  const run: Run = {
    engine,
    // A serve and a worker on the embedded database at once: a check of the image's processes, not of their writes (docs/operations.md).
    env: { MONGODB_URI: uri, LOG_LEVEL: 'warn', HOST: '127.0.0.1', ALLOW_SHARED_EMBEDDED: 'true' },
    containers: [],
    name: (role) => `subsvc-check-${process.pid}-${role}`,
  };
  try {
    const merchant = runOnce(engine, TAG, run.env, ['merchant', 'create', '--name', 'image check']) as {
      merchantId: string;
      apiKey: string;
    };
    expect(/^sk_/.test(merchant.apiKey ?? ''), 'merchant create printed no API key');
    const seeded = runOnce(engine, TAG, run.env, [
      'subscriptions',
      'seed',
      '--merchant',
      merchant.merchantId,
      '--count',
      String(SUBSCRIPTIONS),
    ]) as { subscriptionIds: string[] };
    say(`✓ merchant create and subscriptions seed (${seeded.subscriptionIds.length}) through the image's CLI`);
    const serve = await checkServe(run, merchant.apiKey, seeded.subscriptionIds);
    say(`✓ ${serve.facts}`);
    const worker = await checkWorker(run, merchant.apiKey, serve.requestId, seeded.subscriptionIds.length);
    say(`✓ ${worker.facts}`);
    const stops = stopEach(run, [serve.container, worker.container]);
    say(`✓ SIGTERM: ${stops}`);
    return {
      facts: `merchant create; ${serve.facts}; ${worker.facts}; SIGTERM: ${stops}`,
      apiKey: merchant.apiKey,
      ids: seeded.subscriptionIds,
    };
  } catch (error) {
    for (const container of run.containers) say(`--- ${container.role} logs\n${logsOf(engine, container)}`);
    throw error;
  } finally {
    remove(engine, run.containers);
  }
}

/** The first line a sandbox prints on stdout: what a partner's suite reads. */
interface SandboxReady {
  readonly url: string;
  readonly testApiKey: string;
  readonly subscriptionIds: string[];
}

/**
 * `sandbox` as a command of the image, with no database of ours (no MONGODB_URI): its JSON line,
 * a list and a pause with the printed test key, and exit 0 on SIGTERM.
 */
async function checkSandbox(engine: Engine): Promise<string> {
  const port = await freePort();
  const container = runDetached(engine, TAG, `subsvc-check-${process.pid}-sandbox`, { HOST: '127.0.0.1' }, [
    'sandbox',
    '--port',
    String(port),
    '--seed',
    '3',
  ]);
  try {
    const startedAt = Date.now();
    const ready = await waitFor('the sandbox prints its JSON line', 90_000, async () => {
      const line = engine
        .run(['logs', container.name])
        .split('\n')
        .find((l) => l.includes('"testApiKey"'));
      return line === undefined ? undefined : (JSON.parse(line) as SandboxReady);
    });
    const upIn = seconds(startedAt);
    expect(ready.url === `http://127.0.0.1:${port}` && /^sk_test_/.test(ready.testApiKey), `the sandbox printed ${JSON.stringify(ready)}`);
    const listed = await request(`${ready.url}/v2/subscriptions`, { key: ready.testApiKey });
    const data = listed.body.data as unknown[] | undefined;
    expect(
      listed.status === 200 && data?.length === 3,
      `a list with the printed key answered ${listed.status} ${JSON.stringify(listed.body)}`,
    );
    const paused = await request(`${ready.url}/v2/subscriptions/${ready.subscriptionIds[0]}/pause`, {
      method: 'POST',
      key: ready.testApiKey,
    });
    expect(paused.status === 200 && paused.body.status === 'paused', `a pause with the printed key answered ${paused.status}`);
    const stop = stopWithSigterm(engine, container);
    expect(stop.exitCode === 0, `the sandbox after SIGTERM: exit ${stop.exitCode}\n${logsOf(engine, container)}`);
    return `sandbox (no MONGODB_URI) printed its line in ${upIn}, list 200 (3) and pause 200 with its test key, SIGTERM exit 0 in ${stop.seconds.toFixed(1)} s`;
  } catch (error) {
    say(`--- sandbox logs\n${logsOf(engine, container)}`);
    throw error;
  } finally {
    remove(engine, [container]);
  }
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  const { engine, why } = findEngine();
  if (!engine) {
    skipStep('image check (npm run check:image)', why ?? 'no container engine', 'as root, npm run check:image installs podman and runs it');
    return;
  }
  const base = resolveBase(engine, root, CACHE_DIR);
  say(`base: ${base.description}`);
  const ferretdb = await resolveFerretdbStage(engine, root);
  say(`sandbox engine: ${ferretdb.description}`);
  const buildStarted = Date.now();
  buildImage(engine, root, base.image, TAG, CACHE_DIR, process.argv.includes('--no-cache'), ferretdb.args);
  const size = `${(imageSize(engine, TAG) / 1e6).toFixed(0)} MB`;
  say(`✓ built ${TAG} with ${engine.name} in ${seconds(buildStarted)}; image size ${size}`);
  const modules = modulesOf(engine, TAG);
  const devOnly = modules.filter((name) => name.startsWith('mongodb-memory-server'));
  expect(
    modules.includes('mongodb') && devOnly.length === 0,
    `the image's node_modules: mongodb ${modules.includes('mongodb') ? 'present' : 'missing'}, ${devOnly.join(', ')}`,
  );
  say(`✓ node_modules: ${modules.length} entries, mongodb, no mongodb-memory-server`);
  const database = await startEmbeddedDatabase(loadConfig().embeddedEngine, loadConfig().downloadProxy, createLogger('silent'));
  say(`database: embedded ${database.engine} on ${new URL(database.uri).host} (${database.reason})`);
  try {
    const uri = new URL(database.uri);
    uri.pathname = `/subsvc_image_${Date.now()}`;
    const image = await runImage(engine, uri.href);
    const sandbox = await checkSandbox(engine);
    say(`✓ ${sandbox}`);
    const compose = await runCompose(engine, TAG, uri.href, image.apiKey, image.ids);
    say(
      `image ok: ${engine.name}, base ${base.image}, ${size}; ${image.facts}; ${sandbox}; compose: ${compose}; ${seconds(startedAt)} in all`,
    );
  } finally {
    await database.stop();
  }
}

main().catch((error: unknown) => {
  say(`image check FAILED: ${error instanceof CheckFailed ? error.message : ((error as Error).stack ?? String(error))}`);
  process.exit(1);
});
