/**
 * The last step of `npm run check:image`: runs what can be run of deploy/compose.yaml here, with the
 * engine directly (no Compose tool is installed): the project's own services (those built from the
 * Dockerfile) on the image just built, each with the file's command, environment, healthcheck and
 * stop grace period. What differs, and is printed:
 * - a service whose image cannot be pulled is not run; the database services (`mongo`,
 *   `mongo-init`) are replaced by the embedded database, through MONGODB_URI, with
 *   ALLOW_SHARED_EMBEDDED=true so that its several processes start on it;
 * - the containers share the host's network (as every container of this check does), so each
 *   gets its own free loopback PORT and METRICS_PORT instead of the file's 8080 and 9464 behind a
 *   network of its own, and a worker's healthcheck is run against its port.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { freePort } from '../../src/lib/net.js';
import { projectRoot } from '../../src/lib/project-root.js';
import { healthcheck, logsOf, remove, runDetached, stopWithSigterm, type Container } from './containers.js';
import type { Engine } from './engine.js';

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test?: string[] };
  stop_grace_period?: string;
}

interface Started {
  readonly container: Container;
  readonly api?: string;
  readonly metricsPort: number;
  readonly service: ComposeService;
}

function graceSeconds(value: string | undefined): number {
  const m = /^(\d+)s$/.exec(value ?? '10s');
  if (!m) throw new Error(`stop_grace_period ${value} is not in seconds`);
  return Number(m[1]);
}

async function startService(
  engine: Engine,
  tag: string,
  name: string,
  service: ComposeService,
  uri: string,
  prefix: string,
): Promise<Started> {
  const port = await freePort();
  const metricsPort = await freePort();
  // The file's fleet on the embedded database, which takes one process unless told otherwise (docs/operations.md).
  const env = {
    ...service.environment,
    MONGODB_URI: uri,
    HOST: '127.0.0.1',
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    ALLOW_SHARED_EMBEDDED: 'true',
  };
  const container = runDetached(engine, tag, `${prefix}-${name}`, env, service.command ?? ['serve']);
  const api = service.command?.[0] === 'serve' ? `http://127.0.0.1:${port}` : undefined;
  return { container: { ...container, role: name }, ...(api ? { api } : {}), metricsPort, service };
}

/** The service's health: the image's HEALTHCHECK for serve, the file's own test (on its METRICS_PORT) for a worker. */
async function healthOf(engine: Engine, started: Started): Promise<string> {
  const test = started.service.healthcheck?.test;
  if (!test) return healthcheck(engine, started.container, 60_000);
  if (test[0] !== 'CMD') throw new Error(`${started.container.role}: healthcheck ${test[0]} is not CMD`);
  const command = test.slice(1).map((arg) => arg.replaceAll(':9464/', `:${started.metricsPort}/`));
  const result = engine.attempt(['exec', started.container.name, ...command]);
  return result.status === 0 ? 'healthy' : `unhealthy (${result.output.trim()})`;
}

async function waitHealthy(url: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer within 90 s`);
}

/** Foreign images: pulled when they can be; the reason when not. */
function foreignImages(engine: Engine, services: [string, ComposeService][]): string[] {
  return services.map(([name, service]) => {
    const pulled =
      engine.attempt(['image', 'inspect', service.image!]).status === 0 || engine.attempt(['pull', '--quiet', service.image!]).status === 0;
    const database = /^mongo(:|$)/.test(service.image!);
    if (database) return `${name} (${service.image}) replaced by the embedded database`;
    return pulled
      ? `${name} (${service.image}) not run: it needs the Compose network's service names`
      : `${name} not run: ${service.image} cannot be pulled`;
  });
}

/**
 * A call as a careful client makes it: a connection that fails (reset, closed as it was reused) is
 * tried again, twice, the POST with one Idempotency-Key so that it is applied once; the last
 * failure is thrown with its cause, which fetch's own message ("fetch failed") leaves out.
 */
async function callRetrying(url: string, init: RequestInit = {}): Promise<Response> {
  const headers = { ...(init.headers as Record<string, string>), ...(init.method === 'POST' ? { 'idempotency-key': randomUUID() } : {}) };
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, { ...init, headers });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      if (attempt === 3)
        throw new Error(`${init.method ?? 'GET'} ${url}: ${(error as Error).message} (${cause?.code ?? ''} ${cause?.message ?? ''})`, {
          cause: error,
        });
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

async function exercise(started: Started[], apiKey: string, ids: string[]): Promise<string> {
  const [first, second] = started.filter((s) => s.api);
  const bulk = await callRetrying(`${first!.api}/v2/subscriptions/bulk/resume`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ subscriptions: ids }),
  });
  const { requestId } = (await bulk.json()) as { requestId: string };
  if (bulk.status !== 202) throw new Error(`bulk resume through ${first!.container.role} answered ${bulk.status}`);
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const status = (await (
      await callRetrying(`${second!.api}/v2/bulk-requests/${requestId}`, { headers: { 'x-api-key': apiKey } })
    ).json()) as {
      state: string;
      counts: Record<string, number>;
    };
    if (status.state === 'completed')
      return `bulk resume of ${ids.length} accepted by ${first!.container.role}, completed by the workers (${status.counts.applied} applied), read through ${second!.container.role}`;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('the workers did not complete the bulk resume within 120 s');
}

/** Runs the file's own services against the database; returns one line of what ran and what did not. */
export async function runCompose(engine: Engine, tag: string, uri: string, apiKey: string, ids: string[]): Promise<string> {
  const file = join(projectRoot(), 'deploy', 'compose.yaml');
  const doc = parse(readFileSync(file, 'utf8'), { merge: true }) as { services: Record<string, ComposeService> };
  const entries = Object.entries(doc.services);
  const own = entries.filter(([, s]) => s.build !== undefined);
  const notRun = foreignImages(
    engine,
    entries.filter(([, s]) => s.build === undefined),
  );
  console.log(`compose: ${notRun.join('; ')}`);
  const started: Started[] = [];
  try {
    for (const [name, service] of own) started.push(await startService(engine, tag, name, service, uri, `subsvc-check-${process.pid}`));
    await Promise.all(started.map((s) => waitHealthy(s.api ? `${s.api}/healthz` : `http://127.0.0.1:${s.metricsPort}/metrics`)));
    const health = await Promise.all(started.map(async (s) => `${s.container.role} ${await healthOf(engine, s)}`));
    if (health.some((h) => !h.endsWith(' healthy'))) throw new Error(`compose healthchecks: ${health.join(', ')}`);
    console.log(`✓ compose: ${health.join(', ')}`);
    const bulk = await exercise(started, apiKey, ids);
    console.log(`✓ compose: ${bulk}`);
    const stops = started.map((s) => {
      const grace = graceSeconds(s.service.stop_grace_period);
      const { exitCode, seconds } = stopWithSigterm(engine, s.container);
      if (exitCode !== 0 || seconds > grace)
        throw new Error(
          `${s.container.role} after SIGTERM: exit ${exitCode} in ${seconds.toFixed(1)} s (stop_grace_period ${grace} s)\n${logsOf(engine, s.container)}`,
        );
      return `${s.container.role} ${seconds.toFixed(1)} s`;
    });
    console.log(`✓ compose: SIGTERM, each exit 0 within its stop_grace_period: ${stops.join(', ')}`);
    return `${own.map(([n]) => n).join(', ')} healthy, ${bulk.split(',')[0]}, stopped cleanly; ${notRun.length} services replaced or not run`;
  } catch (error) {
    for (const s of started) console.log(`--- ${s.container.role} logs\n${logsOf(engine, s.container)}`);
    throw error;
  } finally {
    remove(
      engine,
      started.map((s) => s.container),
    );
  }
}
