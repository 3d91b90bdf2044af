/**
 * npm run test:fuzz: Schemathesis against the live service, with the spec and a valid key.
 *
 * Schemathesis comes from PyPI into a project-local virtual environment (.cache/schemathesis),
 * pinned by scripts/fuzz-requirements.txt and rebuilt when that file changes. The service runs
 * in this process on a scratch database (embedded when MONGODB_URI is unset), with its workers,
 * a rate limit too large to reach (its headers are still checked) and a merchant owning the
 * subscriptions the spec's examples name, so the examples phase reaches the 200 and 202 paths.
 * The operations on one webhook endpoint or one event need ids that exist: the merchant gets a
 * webhook endpoint (delivering to a receiver on loopback), an event (a pause) and a bulk request,
 * whose ids go to Schemathesis as fixed parameters (scripts/schemathesis.toml), so that the event
 * filters by subscription and by request reach pages with events; each deletion gets an endpoint
 * of its own, made just before it by scripts/schemathesis_hooks.py.
 *
 * The test helpers (`/v2/test-helpers/…`, tag "Test helpers") take a test key: a live key gets
 * 403 0011 there and nothing else. So they run in a second, shorter Schemathesis run of their own
 * with the fuzzing merchant's test key (its test mode has subscriptions of its own, made through
 * the API), and the first run, with the live key, leaves them out. Both runs must pass.
 *
 * Every check, every phase (examples, coverage, fuzzing, stateful), FUZZ_EXAMPLES (default 200)
 * examples per operation and a fixed seed (FUZZ_SEED, default 20261122). Exits with Schemathesis's
 * status: 0 only when nothing failed.
 */
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../src/config.js';
import { projectRoot } from '../src/lib/project-root.js';
import { SPEC_PATH } from '../src/lib/spec.js';
import { createLogger } from '../src/logger.js';
import { cachedVenv } from './python-venv.js';
import { goToolCanBeHad, STRIPE_MOCK } from './go-tool.js';
import { startStripeMockProcess } from './stripe-mock-process.js';
import { listenOnLoopback, openScratchDatabase, serveOnLoopback } from './support.js';

const REQUIREMENTS = join(projectRoot(), 'scripts', 'fuzz-requirements.txt');
const EXAMPLES = Number(process.env.FUZZ_EXAMPLES ?? 200);
const SEED = process.env.FUZZ_SEED ?? '20261122';
/** The ids the spec's examples use: owned by the fuzzing merchant, so examples reach 200 and 202. */
const EXAMPLE_IDS = [
  '6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60',
  '7a2d3b5f-4c8e-4d9f-8a1b-2c3d4e5f6071',
  '8b3e4c6a-5d9f-4eab-9b2c-3d4e5f607182',
];
/** Paused before the run, so that the merchant has an event for getEvent and resendEvent. */
const EVENT_SUBSCRIPTION_ID = '9c4f5d7b-6e0a-4fbc-8c3d-4e5f60718293';
/**
 * deleteWebhookEndpoint's fixed endpointId: never an endpoint, the hooks file replaces it with a
 * fresh one before each deletion, so that every phase (not only the first) can delete one.
 */
const DELETABLE_PLACEHOLDER = '00000000-0000-4000-8000-0000000000de';
/**
 * rollApiKey's and revokeApiKey's fixed keyId, never a key: the hooks file replaces it with a key
 * made through the API just before each call, so that a roll or revocation never touches the key
 * the run authenticates with (which would answer 401 to everything after it).
 */
const KEY_PLACEHOLDER = '00000000-0000-4000-8000-0000000000ce';
/**
 * revokePortalLink's fixed portalLinkId, never a link: the hooks file replaces it with a link made
 * through the API just before each call, so that every phase can revoke one.
 */
const LINK_PLACEHOLDER = '00000000-0000-4000-8000-0000000000a1';
/** The plan id the fixtures name: plan ids are the merchant's own, so any UUID is one. */
const FUZZ_PLAN_ID = '00000000-0000-4000-8000-0000000000b2';

/** The ids Schemathesis is given (scripts/schemathesis.toml reads them from its environment). */
interface Fixtures {
  readonly SUBSVC_FUZZ_API_KEY: string;
  readonly SUBSVC_FUZZ_BASE_URL: string;
  readonly SUBSVC_FUZZ_RECEIVER_URL: string;
  readonly SUBSVC_FUZZ_ENDPOINT_ID: string;
  readonly SUBSVC_FUZZ_EVENT_ID: string;
  readonly SUBSVC_FUZZ_SUBSCRIPTION_ID: string;
  readonly SUBSVC_FUZZ_REQUEST_ID: string;
  readonly SUBSVC_FUZZ_DELETABLE_ID: string;
  readonly SUBSVC_FUZZ_KEY_ID: string;
  readonly SUBSVC_FUZZ_HOLD_ID: string;
  readonly SUBSVC_FUZZ_LINK_ID: string;
  readonly SUBSVC_FUZZ_PLAN_ID: string;
  readonly SUBSVC_FUZZ_DESTINATION_ID: string;
  readonly SUBSVC_FUZZ_DELETABLE_DESTINATION_ID: string;
  readonly SUBSVC_FUZZ_IMPORT_ID: string;
}

/** The venv's `st`, created or rebuilt when the pinned requirements change. */
function ensureSchemathesis(): string {
  return join(dirname(cachedVenv('schemathesis', REQUIREMENTS, 'Schemathesis')), 'st');
}

/**
 * Through the API, as a merchant would: a webhook endpoint, two event destinations, by pausing a subscription an event, a
 * bulk request (its completion is an event too), a hold (its release answers 202, then 409), and
 * a named plan (so that reading one answers 200, not only 404).
 */
async function createFixtures(baseUrl: string, apiKey: string, receiverUrl: string): Promise<Fixtures> {
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`fuzz fixtures: ${method} ${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as T;
  };
  const endpoint = await call<{ id: string }>('POST', '/v2/webhook-endpoints', { url: receiverUrl, events: ['*'], description: 'fuzz' });
  await call('POST', `/v2/subscriptions/${EVENT_SUBSCRIPTION_ID}/pause`);
  const bulk = await call<{ requestId: string }>('POST', '/v2/subscriptions/bulk/pause', { subscriptions: [EVENT_SUBSCRIPTION_ID] });
  const hold = await call<{ id: string }>('POST', '/v2/holds', { reason: 'fuzz' });
  await call('PUT', `/v2/plans/${FUZZ_PLAN_ID}`, { name: 'fuzz' });
  // A Stripe connection (its calls go to stripe-mock, which refuses live keys): the backfill reaches Stripe and answers 409 0038.
  await call('PUT', '/v2/billing-connections/stripe', {
    apiKey: `sk_live_${randomBytes(12).toString('hex')}`,
    webhookSecret: `whsec_${randomBytes(16).toString('hex')}`,
  });
  // Two Kafka destinations (made without connecting; nothing listens there): one to read and ping, one to delete.
  const destination = { type: 'kafka', bootstrapServers: ['127.0.0.1:9'], topic: 'fuzz', tls: false, types: ['bulk_request.completed'] };
  const kept = await call<{ id: string }>('POST', '/v2/event-destinations', destination);
  const deletable = await call<{ id: string }>('POST', '/v2/event-destinations', destination);
  // An import of one row, so that reading an import and its rows reach their success path.
  const imported = await fetch(`${baseUrl}/v2/subscription-imports`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/x-ndjson' },
    body: `${JSON.stringify({ externalId: 'fuzz', planId: FUZZ_PLAN_ID })}\n`,
  });
  if (!imported.ok) throw new Error(`fuzz fixtures: POST /v2/subscription-imports answered ${imported.status}: ${await imported.text()}`);
  const { id: importId } = (await imported.json()) as { id: string };
  // The event is written by the relay, after the pause has answered.
  let event: { id: string } | undefined;
  for (const deadline = Date.now() + 30_000; !event; await new Promise((resolve) => setTimeout(resolve, 100))) {
    event = (await call<{ data: { id: string }[] }>('GET', '/v2/events?limit=1')).data[0];
    if (!event && Date.now() > deadline) throw new Error('fuzz fixtures: the pause left no event within 30 s');
  }
  return {
    SUBSVC_FUZZ_API_KEY: apiKey,
    SUBSVC_FUZZ_BASE_URL: baseUrl,
    SUBSVC_FUZZ_RECEIVER_URL: receiverUrl,
    SUBSVC_FUZZ_ENDPOINT_ID: endpoint.id,
    SUBSVC_FUZZ_EVENT_ID: event.id,
    SUBSVC_FUZZ_SUBSCRIPTION_ID: EVENT_SUBSCRIPTION_ID,
    SUBSVC_FUZZ_REQUEST_ID: bulk.requestId,
    SUBSVC_FUZZ_DELETABLE_ID: DELETABLE_PLACEHOLDER,
    SUBSVC_FUZZ_KEY_ID: KEY_PLACEHOLDER,
    SUBSVC_FUZZ_HOLD_ID: hold.id,
    SUBSVC_FUZZ_LINK_ID: LINK_PLACEHOLDER,
    SUBSVC_FUZZ_PLAN_ID: FUZZ_PLAN_ID,
    SUBSVC_FUZZ_DESTINATION_ID: kept.id,
    SUBSVC_FUZZ_DELETABLE_DESTINATION_ID: deletable.id,
    SUBSVC_FUZZ_IMPORT_ID: importId,
  };
}

/** The live run leaves out the test helpers; the test-mode run covers only them (see the header). */
const RUNS = [
  { name: 'live key', dir: 'schemathesis', args: ['--exclude-tag', 'Test helpers'] },
  // No stateful phase: the test helpers have no OpenAPI links to follow (Schemathesis counts that as an error).
  { name: 'test key', dir: 'schemathesis-test-mode', args: ['--include-tag', 'Test helpers', '--phases', 'examples,coverage,fuzzing'] },
] as const;

function runSchemathesis(st: string, fixtures: Fixtures, run: (typeof RUNS)[number]): Promise<number> {
  const reportDir = join(projectRoot(), 'test-artifacts', run.dir);
  const args = [
    '--config-file',
    join(projectRoot(), 'scripts', 'schemathesis.toml'),
    'run',
    SPEC_PATH,
    '--url',
    fixtures.SUBSVC_FUZZ_BASE_URL,
    '--checks',
    'all',
    '--phases',
    'examples,coverage,fuzzing,stateful',
    '--max-examples',
    String(EXAMPLES),
    '--seed',
    SEED,
    '--continue-on-failure',
    '--workers',
    '1',
    '--request-timeout',
    '10',
    '--report',
    'junit',
    '--report-dir',
    reportDir,
    ...run.args,
    ...process.argv.slice(2),
  ];
  mkdirSync(reportDir, { recursive: true });
  const consolePath = join(reportDir, 'console.txt');
  const consoleFile = createWriteStream(consolePath);
  return new Promise((resolve, reject) => {
    // Schemathesis's console goes to a file, never to our output: it closes on a pytest-like line
    // (`=== 2 warnings in 222.74s ===`), which CI reads as a runner that ran no test.
    const env = { ...process.env, ...fixtures, SCHEMATHESIS_HOOKS: join(projectRoot(), 'scripts', 'schemathesis_hooks.py') };
    const child = spawn(st, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    child.stdout.pipe(consoleFile, { end: false });
    child.stderr.pipe(consoleFile, { end: false });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      consoleFile.end(() => {
        const text = readFileSync(consolePath, 'utf8');
        const status = code ?? (signal ? 1 : 0);
        // On a failure, its report is what says what failed: shown, with the fences that read as a runner's closing line rewritten.
        if (status !== 0) console.error(withoutClosingFences(text));
        for (const line of consoleSummary(text)) console.error(`(${run.name}) ${line}`);
        console.error(`Schemathesis's full console: ${consolePath}`);
        resolve(status);
      });
    });
  });
}

/** `==== SUMMARY ====` and `==== 2 warnings in 1.2s ====` become `-- SUMMARY --`: nothing that a reader of pytest output takes for its last line. */
export function withoutClosingFences(text: string): string {
  return text.replace(/^=+ (.*?) =+$/gm, '-- $1 --');
}

/** What Schemathesis said, in our words: its test-case counts and its warnings, one line each. */
export function consoleSummary(text: string): string[] {
  // eslint-disable-next-line no-control-regex -- the ANSI colour codes of Schemathesis's console start with ESC.
  const plain = text.replace(/\x1b\[[0-9;]*m/g, '');
  const cases = /Test cases:\s*\n\s*(.+)/.exec(plain)?.[1]?.trim();
  const warnings = [...plain.matchAll(/^\s*⚠️\s*(.+)$/gm)].map((m) => m[1]!.trim());
  return [`Schemathesis test cases: ${cases ?? 'no count found in its console'}`, ...warnings.map((w) => `Schemathesis warning: ${w}`)];
}

async function main(): Promise<number> {
  const st = ensureSchemathesis();
  const config = loadConfig();
  const log = createLogger(process.env.LOG_LEVEL === undefined ? 'warn' : config.logLevel);
  const scratch = await openScratchDatabase(config, 'fuzz', log);
  // Where the fixture endpoint's deliveries go: loopback, so private URLs are allowed in this run.
  const receiver = createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
  try {
    const receiverUrl = `${await listenOnLoopback(receiver)}/webhooks`;
    // A key of the run's own for the billing connection's secrets, where the operator set none.
    const secretsKey = config.secretsKey ?? randomBytes(32).toString('base64');
    // Stripe's own mock takes every call to Stripe (a connection's pushes, the backfill's reads), never Stripe itself.
    const stripe = goToolCanBeHad(STRIPE_MOCK) ? await startStripeMockProcess() : undefined;
    const stripeApiBase = stripe?.base ?? 'http://127.0.0.1:9';
    const { service, baseUrl, stop } = await serveOnLoopback(
      scratch,
      { ...config, secretsKey, webhooksAllowPrivateUrls: true, stripeApiBase },
      log,
    );
    try {
      const { merchantId, apiKey, testApiKey } = await service.auth.createMerchant('fuzz');
      const ids = [...EXAMPLE_IDS, EVENT_SUBSCRIPTION_ID];
      await service.seeder.seed({ merchantId, count: ids.length, status: 'fulfilled', ids });
      const fixtures = await createFixtures(baseUrl, apiKey, receiverUrl);
      console.error(`Schemathesis against ${baseUrl} (${scratch.engine} ${scratch.version}, ${scratch.source}); seed ${SEED}`);
      const live = await runSchemathesis(st, fixtures, RUNS[0]);
      const test = await runSchemathesis(st, { ...fixtures, SUBSVC_FUZZ_API_KEY: testApiKey }, RUNS[1]);
      return Math.max(live, test);
    } finally {
      await stop();
      stripe?.stop();
    }
  } finally {
    receiver.closeAllConnections();
    receiver.close();
    await scratch.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
