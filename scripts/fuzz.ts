/**
 * npm run test:fuzz: Schemathesis against the live service, with the spec and a valid key.
 *
 * Schemathesis comes from PyPI into a project-local virtual environment (.cache/schemathesis),
 * pinned by scripts/fuzz-requirements.txt and rebuilt when that file changes. The service runs
 * in this process on a scratch database (embedded when MONGODB_URI is unset), with its workers,
 * a rate limit too large to reach (its headers are still checked) and a merchant owning the
 * subscriptions the spec's examples name, so the examples phase reaches the 200 and 202 paths.
 *
 * Every check, every phase (examples, coverage, fuzzing, stateful), FUZZ_EXAMPLES (default 200)
 * examples per operation and a fixed seed (FUZZ_SEED, default 20261122). Exits with Schemathesis's
 * status: 0 only when nothing failed.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../src/config.js';
import { projectRoot } from '../src/lib/project-root.js';
import { SPEC_PATH } from '../src/lib/spec.js';
import { createLogger } from '../src/logger.js';
import { cachedVenv } from './python-venv.js';
import { openScratchDatabase, serveOnLoopback } from './support.js';

const REQUIREMENTS = join(projectRoot(), 'scripts', 'fuzz-requirements.txt');
const EXAMPLES = Number(process.env.FUZZ_EXAMPLES ?? 200);
const SEED = process.env.FUZZ_SEED ?? '20261122';
/** The ids the spec's examples use: owned by the fuzzing merchant, so examples reach 200 and 202. */
const EXAMPLE_IDS = [
  '6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60',
  '7a2d3b5f-4c8e-4d9f-8a1b-2c3d4e5f6071',
  '8b3e4c6a-5d9f-4eab-9b2c-3d4e5f607182',
];

/** The venv's `st`, created or rebuilt when the pinned requirements change. */
function ensureSchemathesis(): string {
  return join(dirname(cachedVenv('schemathesis', REQUIREMENTS, 'Schemathesis')), 'st');
}

function runSchemathesis(st: string, baseUrl: string, apiKey: string): Promise<number> {
  const reportDir = join(projectRoot(), 'test-artifacts', 'schemathesis');
  const args = [
    '--config-file',
    join(projectRoot(), 'scripts', 'schemathesis.toml'),
    'run',
    SPEC_PATH,
    '--url',
    baseUrl,
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
    ...process.argv.slice(2),
  ];
  mkdirSync(reportDir, { recursive: true });
  const consolePath = join(reportDir, 'console.txt');
  const consoleFile = createWriteStream(consolePath);
  return new Promise((resolve, reject) => {
    // Schemathesis's console goes to a file, never to our output: it closes on a pytest-like line
    // (`=== 2 warnings in 222.74s ===`), which CI reads as a runner that ran no test.
    const child = spawn(st, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SUBSVC_FUZZ_API_KEY: apiKey } });
    child.stdout.pipe(consoleFile, { end: false });
    child.stderr.pipe(consoleFile, { end: false });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      consoleFile.end(() => {
        const text = readFileSync(consolePath, 'utf8');
        const status = code ?? (signal ? 1 : 0);
        // On a failure, its report is what says what failed: shown, with the fences that read as a runner's closing line rewritten.
        if (status !== 0) console.error(withoutClosingFences(text));
        for (const line of consoleSummary(text)) console.error(line);
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
  const plain = text.replace(/\x1b\[[0-9;]*m/g, '');
  const cases = /Test cases:\s*\n\s*(.+)/.exec(plain)?.[1]?.trim();
  const warnings = [...plain.matchAll(/^\s*⚠️\s*(.+)$/gm)].map((m) => m[1]!.trim());
  return [
    `Schemathesis test cases: ${cases ?? 'no count found in its console'}`,
    ...warnings.map((w) => `Schemathesis warning: ${w}`),
  ];
}

async function main(): Promise<number> {
  const st = ensureSchemathesis();
  const config = loadConfig();
  const log = createLogger(process.env.LOG_LEVEL === undefined ? 'warn' : config.logLevel);
  const scratch = await openScratchDatabase(config, 'fuzz', log);
  try {
    const { service, baseUrl, stop } = await serveOnLoopback(scratch, config, log);
    try {
      const { merchantId, apiKey } = await service.auth.createMerchant('fuzz');
      await service.seeder.seed({ merchantId, count: EXAMPLE_IDS.length, status: 'fulfilled', ids: EXAMPLE_IDS });
      console.error(`Schemathesis against ${baseUrl} (${scratch.engine} ${scratch.version}, ${scratch.source}); seed ${SEED}`);
      return await runSchemathesis(st, baseUrl, apiKey);
    } finally {
      await stop();
    }
  } finally {
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
