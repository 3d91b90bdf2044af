/**
 * GET /metrics: Prometheus text that promtool accepts, counters that move with the work, no id in
 * any label; the database metrics, read from the driver's connection-pool events, through the wire
 * proxy: an operation's time, a timeout, and a dropped connection that is no timeout.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call } from '../support/http.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { databaseUri, startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';
import { startWireProxy, type WireProxy } from '../support/wire-proxy.js';
import { FLEET_ON_ONE_DATABASE, startServe, startWorker, type ServiceProcess } from '../support/worker-process.js';
import { goToolPath, PROMTOOL } from '../../scripts/go-tool.js';

let t: TestService;
let receiver: Receiver;
beforeAll(async () => {
  t = await startTestService({ workers: 2, schedulePollMs: 100, webhookRetryDelaysMs: [300] });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

async function scrape(baseUrl = t.baseUrl): Promise<string> {
  const res = await fetch(`${baseUrl}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** The text format, line by line (https://prometheus.io/docs/instrumenting/exposition_formats/): fails on any line it does not know. */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || /^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* /.test(line)) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not Prometheus text: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    // The format's special values: NaN (prom-client writes it `Nan`, which Prometheus reads alike), +Inf, -Inf.
    const raw = match[3]!;
    const value = /^nan$/i.test(raw) ? NaN : raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
    if (Number.isNaN(value) && !/^nan$/i.test(raw)) throw new Error(`not a number: ${line}`);
    samples.push({ name: match[1]!, labels, value });
  }
  return samples;
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

const read = async () => parse(await scrape());
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

describe('GET /metrics', () => {
  it('answers without an API key, in the text format, with the process metrics and the build', async () => {
    const samples = await read();
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'subsvc_http_requests_in_flight',
      'subsvc_ready',
    ]) {
      expect(
        samples.some((s) => s.name === name),
        name,
      ).toBe(true);
    }
    expect(samples.find((s) => s.name === 'subsvc_build_info')?.labels).toMatchObject({
      role: 'serve',
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
    });
    expect(value(samples, 'subsvc_ready')).toBe(1);
    expect(value(samples, 'subsvc_fleet_processes', { role: 'serve' })).toBeGreaterThanOrEqual(1);
  });

  it('counts requests by operationId and status, bulk commands, due schedules and deliveries; no label carries an id', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const created = await call(t.baseUrl, '/v2/webhook-endpoints', { method: 'POST', apiKey, json: { url: receiver.url, events: ['*'] } });
    expect(created.status).toBe(201);
    receiver.secret = created.body.secret;
    const ids = await t.seed(merchantId, 4);
    const before = await read();

    expect((await call(t.baseUrl, `/v2/subscriptions/${ids[0]}/pause`, { apiKey })).status).toBe(200);
    expect((await call(t.baseUrl, `/v2/subscriptions/${ids[0]}`, { method: 'GET', apiKey: 'sk_wrong' })).status).toBe(401);
    const bulk = await call(t.baseUrl, '/v2/subscriptions/bulk/pause', { apiKey, json: { subscriptions: [ids[1], ids[2]] } });
    expect(bulk.status).toBe(202);
    const resumeAt = new Date(Date.now() + 1500).toISOString();
    expect((await call(t.baseUrl, `/v2/subscriptions/${ids[3]}/pause`, { apiKey, json: { resumeAt } })).status).toBe(200);

    const moved = (after: Sample[], name: string, labels: Record<string, string> = {}) =>
      value(after, name, labels) - value(before, name, labels);
    const after = await waitFor(
      read,
      (s) =>
        moved(s, 'subsvc_bulk_commands_total', { operation: 'pause', outcome: 'applied' }) >= 2 &&
        moved(s, 'subsvc_schedule_lag_seconds_count') >= 1 &&
        // 3 pauses + 2 bulk pauses + 1 scheduled resume, delivered.
        moved(s, 'subsvc_webhook_deliveries_total', { outcome: 'delivered' }) >= 6,
      30_000,
    );
    expect(moved(after, 'subsvc_http_requests_total', { operation: 'pauseSubscription', status: '200' })).toBe(2);
    expect(moved(after, 'subsvc_http_requests_total', { operation: 'getSubscription', status: '401' })).toBe(1);
    expect(moved(after, 'subsvc_http_requests_total', { operation: 'bulkPauseSubscriptions', status: '202' })).toBe(1);
    expect(moved(after, 'subsvc_http_request_duration_seconds_count', { operation: 'pauseSubscription' })).toBe(2);
    expect(moved(after, 'subsvc_bulk_requests_accepted_total', { operation: 'pause' })).toBe(1);
    expect(moved(after, 'subsvc_bulk_commands_total', { operation: 'pause', outcome: 'applied' })).toBe(2);
    expect(moved(after, 'subsvc_bulk_chunk_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(moved(after, 'subsvc_schedule_lag_seconds_count')).toBe(1);
    expect(moved(after, 'subsvc_webhook_deliveries_total', { outcome: 'delivered' })).toBeGreaterThanOrEqual(6);
    expect(moved(after, 'subsvc_webhook_delivery_duration_seconds_count')).toBeGreaterThanOrEqual(6);
    expect(moved(after, 'subsvc_db_operation_duration_seconds_count', { client: 'request' })).toBeGreaterThanOrEqual(1);
    expect(moved(after, 'subsvc_db_operation_duration_seconds_count', { client: 'background' })).toBeGreaterThan(0);
    expect(value(after, 'subsvc_db_pool_wait_seconds_count', { client: 'request' })).toBeGreaterThan(0);

    const withIds = after.filter((s) => Object.values(s.labels).some((v) => UUID.test(v) || v.includes(merchantId)));
    expect(withIds).toEqual([]);
    const operations = new Set(after.filter((s) => s.name === 'subsvc_http_requests_total').map((s) => s.labels.operation));
    for (const operation of operations) expect(operation).toMatch(/^([a-z][A-Za-z]+|unknown|docs|health|metrics)$/);
  });

  it('counts a route the spec does not have as `unknown`, and health probes as `health`', async () => {
    const before = await read();
    await fetch(`${t.baseUrl}/v2/no-such-thing/${crypto.randomUUID()}`);
    await fetch(`${t.baseUrl}/healthz`);
    const after = await read();
    expect(
      value(after, 'subsvc_http_requests_total', { operation: 'unknown', status: '404' }) -
        value(before, 'subsvc_http_requests_total', { operation: 'unknown', status: '404' }),
    ).toBe(1);
    expect(
      value(after, 'subsvc_http_requests_total', { operation: 'health', status: '200' }) -
        value(before, 'subsvc_http_requests_total', { operation: 'health', status: '200' }),
    ).toBe(1);
  });

  it('the fleet gauges show queued work and are read from the database', async () => {
    const samples = await read();
    for (const name of [
      'subsvc_bulk_chunks_queued',
      'subsvc_bulk_oldest_chunk_age_seconds',
      'subsvc_schedules_due_pending',
      'subsvc_events_outbox_backlog',
      'subsvc_events_outbox_oldest_age_seconds',
      'subsvc_webhook_endpoints_disabled',
    ]) {
      expect(
        samples.filter((s) => s.name === name),
        name,
      ).toHaveLength(1);
    }
  });

  it('passes `promtool check metrics`', async (context) => {
    // `npm run check` builds promtool into .cache/ before the tests run; without Go it skips that, and this test is skipped too.
    const promtool = existsSync(goToolPath(PROMTOOL)) ? goToolPath(PROMTOOL) : 'promtool';
    const check = spawnSync(promtool, ['check', 'metrics'], { input: await scrape(), encoding: 'utf8' });
    if (check.error && (check.error as NodeJS.ErrnoException).code === 'ENOENT') {
      console.log('metrics.test: skipped `promtool check metrics`: no promtool built (npm run check:deploy builds it with Go)');
      context.skip();
    }
    // promtool's lint also reports style hints (exit 3) on metrics it did not name (prom-client's defaults); errors are exit 1.
    expect(check.status, `${check.stdout}${check.stderr}`).not.toBe(1);
    expect(`${check.stdout}${check.stderr}`.split('\n').filter((l) => l.startsWith('subsvc_'))).toEqual([]);
  });
});

describe('database metrics, from the connection pool', () => {
  const DB_TIMEOUT_MS = 1_500;
  // A held write is a slow answer from a reachable server: the request waits up to DB_SLOW_CAP_MS (docs/reliability.md).
  const DB_SLOW_CAP_MS = 3_000;
  let proxy: WireProxy;
  let proxied: TestService;
  beforeAll(async () => {
    proxy = await startWireProxy(inject('mongoUri'));
    proxied = await startTestService({ serverUri: proxy.uri('unused'), dbTimeoutMs: DB_TIMEOUT_MS, dbSlowCapMs: DB_SLOW_CAP_MS });
  });
  afterAll(async () => {
    proxy?.release();
    await proxied?.close();
    await proxy?.close();
  });
  const readProxied = async () => parse(await scrape(proxied.baseUrl));
  // A single pause's write (the events relay's updates of the same collection go by the background client, as `update`).
  const pauseWrite = { command: 'findAndModify', collection: 'subscriptions' };
  const bucket = (samples: Sample[], le: string) =>
    value(samples, 'subsvc_db_operation_duration_seconds_bucket', { client: 'request', le });

  it("an operation's time is how long it held its connection: a write held 400 ms at the wire is observed above 0.25 s", async () => {
    const { merchantId, apiKey } = await proxied.merchant();
    const [id] = await proxied.seed(merchantId, 1);
    const before = await readProxied();
    const rule = proxy.on(pauseWrite, { action: 'hold', ms: 400, times: 1 });
    try {
      expect((await call(proxied.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey })).status).toBe(200);
    } finally {
      rule.remove();
    }
    expect(rule.hits).toBe(1);
    const after = await readProxied();
    const slower = (s: Sample[]) => bucket(s, '+Inf') - bucket(s, '0.25');
    expect(slower(after) - slower(before)).toBeGreaterThanOrEqual(1);
    expect(value(after, 'subsvc_db_operation_timeouts_total', { client: 'request' })).toBe(
      value(before, 'subsvc_db_operation_timeouts_total', { client: 'request' }),
    );
  });

  it(
    'counts each command left unanswered past DB_SLOW_CAP_MS as one timeout of its client (the request answers 503)',
    { timeout: 60_000 },
    async () => {
      const { merchantId, apiKey } = await proxied.merchant();
      const [id] = await proxied.seed(merchantId, 1);
      const before = await readProxied();
      const rule = proxy.on(pauseWrite, { action: 'hold' });
      try {
        expect((await call(proxied.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey })).status).toBe(503);
      } finally {
        rule.remove();
        proxy.release();
      }
      const after = await readProxied();
      const timeouts = (s: Sample[], client: string) => value(s, 'subsvc_db_operation_timeouts_total', { client });
      // On a replica set the driver retries a write once after a network error, a timeout among them: each held command timed out before the answer.
      expect(rule.hits).toBeGreaterThanOrEqual(1);
      expect(timeouts(after, 'request') - timeouts(before, 'request')).toBe(rule.hits);
      expect(timeouts(after, 'background')).toBe(timeouts(before, 'background'));
    },
  );

  it('a connection dropped under a command is no timeout', async () => {
    const { merchantId, apiKey } = await proxied.merchant();
    const [id] = await proxied.seed(merchantId, 1);
    const before = await readProxied();
    const rule = proxy.on(pauseWrite, { action: 'cut', times: 1 });
    try {
      // 503 where the driver cannot retry the write (a standalone server, as FerretDB is), 200 where it retries on another connection.
      expect([200, 503]).toContain((await call(proxied.baseUrl, `/v2/subscriptions/${id}/pause`, { apiKey })).status);
    } finally {
      rule.remove();
    }
    expect(rule.hits).toBe(1);
    const after = await readProxied();
    expect(value(after, 'subsvc_db_operation_timeouts_total', { client: 'request' })).toBe(
      value(before, 'subsvc_db_operation_timeouts_total', { client: 'request' }),
    );
  });
});

describe('METRICS_PORT', () => {
  it('serve and worker processes answer /metrics on a listener of their own, and the API port does not', { timeout: 60_000 }, async () => {
    const uri = databaseUri(`test_metrics_port_${randomUUID().slice(0, 8)}`);
    const processes: ServiceProcess[] = [];
    try {
      const [serve, worker] = await Promise.all([
        startServe(uri, { ...FLEET_ON_ONE_DATABASE, BULK_CONCURRENCY: '0', METRICS_PORT: '0' }),
        startWorker(uri, { ...FLEET_ON_ONE_DATABASE, METRICS_PORT: '0' }),
      ]);
      processes.push(serve, worker);
      for (const [p, role] of [
        [serve, 'serve'],
        [worker, 'worker'],
      ] as const) {
        const url = String(p.lines.find((l) => l.msg === 'metrics listening')?.url);
        const res = await fetch(url);
        expect(res.status).toBe(200);
        const samples = parse(await res.text());
        expect(samples.find((s) => s.name === 'subsvc_build_info')?.labels.role).toBe(role);
        expect((await fetch(url.replace(/\/metrics$/, '/v2/subscriptions'))).status).toBe(404);
      }
      expect((await fetch(`${serve.baseUrl}/metrics`)).status).toBe(404);
    } finally {
      await Promise.all(processes.map((p) => p.stop()));
      const client = await new MongoClient(uri).connect();
      await client
        .db()
        .dropDatabase()
        .catch(() => undefined);
      await client.close();
    }
  });
});
