/**
 * npm test's `arazzo` suite (alone: tsx scripts/arazzo.ts): every workflow in openapi/workflows/ run
 * by `redocly respect` against the service in test mode, on a scratch database with its workers on,
 * as a partner runs them against their own environment (docs/partners.md). Each workflow is one
 * test: its counts go to test-artifacts/arazzo/counts.json for scripts/test-run.ts. Exits 1 when a
 * workflow failed.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { loadConfig } from '../src/config.js';
import { projectRoot } from '../src/lib/project-root.js';
import { createLogger } from '../src/logger.js';
import { runCollected } from './run-quietly.js';
import { openScratchDatabase, serveOnLoopback } from './support.js';
import { type Counts, countsLine } from './test-summary.js';

const ROOT = projectRoot();
const WORKFLOWS = join(ROOT, 'openapi', 'workflows');
const ARTIFACTS = join(ROOT, 'test-artifacts', 'arazzo');
const DAY_MS = 86_400_000;

/** The inputs every workflow may take: a fresh merchant's keys, and times ahead of its test clock. */
interface Inputs {
  readonly apiKey: string;
  readonly testApiKey: string;
  readonly resumeAt: string;
  readonly advanceTo: string;
}

interface RespectReport {
  readonly files: Record<string, { readonly executedWorkflows: readonly { readonly workflowId: string; readonly status: string }[] }>;
}

/** `redocly respect` on one file, asynchronously: the service it calls answers from this process. */
async function respect(file: string, baseUrl: string, inputs: Inputs, report: string, consoleFile: string): Promise<number> {
  const args = ['respect', file, '--server', `subsvc=${baseUrl}`, '--input', JSON.stringify(inputs), '--json-output', report];
  const redocly = join(ROOT, 'node_modules', '.bin', 'redocly');
  const { status, output } = await runCollected(redocly, args, { cwd: ROOT, env: { ...process.env, REDOCLY_TELEMETRY: 'off' } });
  writeFileSync(consoleFile, output);
  return status;
}

/** One line per workflow, and their counts; a file that left no report counts as one failure. */
function workflowResults(reportPath: string, file: string): { counts: Counts; lines: string[] } {
  let report: RespectReport;
  try {
    report = JSON.parse(readFileSync(reportPath, 'utf8')) as RespectReport;
  } catch {
    return { counts: { passed: 0, failed: 1, skipped: 0 }, lines: [`  ${file}: no report from redocly respect: counted as one failure`] };
  }
  const workflows = Object.values(report.files).flatMap((f) => f.executedWorkflows);
  const passed = workflows.filter((w) => w.status === 'success').length;
  const lines = workflows.map((w) => `  ${file} ${w.workflowId}: ${w.status === 'success' ? 'passed' : `FAILED (${w.status})`}`);
  return { counts: { passed, failed: workflows.length - passed, skipped: 0 }, lines };
}

async function main(): Promise<number> {
  rmSync(ARTIFACTS, { recursive: true, force: true });
  mkdirSync(ARTIFACTS, { recursive: true });
  const config = loadConfig();
  const log = createLogger(process.env.LOG_LEVEL === undefined ? 'warn' : config.logLevel);
  const scratch = await openScratchDatabase(config, 'arazzo', log);
  const total = { passed: 0, failed: 0, skipped: 0 };
  try {
    // Polling faster than the default, so that a bulk request completes within a workflow's retries.
    const { service, baseUrl, stop } = await serveOnLoopback(scratch, { ...config, bulkPollIntervalMs: 100, schedulePollMs: 200 }, log);
    try {
      for (const file of readdirSync(WORKFLOWS)
        .filter((f) => f.endsWith('.arazzo.yaml'))
        .sort()) {
        const { apiKey, testApiKey } = await service.auth.createMerchant(`arazzo ${randomUUID().slice(0, 8)}`);
        // A new merchant's test clock stands at the real time.
        const planId = randomUUID();
        const run = randomUUID().slice(0, 8);
        const inputs = {
          apiKey,
          testApiKey,
          resumeAt: new Date(Date.now() + 30 * DAY_MS).toISOString(),
          advanceTo: new Date(Date.now() + 31 * DAY_MS).toISOString(),
          // import-then-pause: a file of two subscriptions of a plan of their own.
          planId,
          file: [`{"externalId":"${run}-1","planId":"${planId}"}`, `{"externalId":"${run}-2","planId":"${planId}","cycle":3}`, ''].join(
            '\n',
          ),
        };
        const name = file.replace(/\.arazzo\.yaml$/, '');
        const consoleFile = join(ARTIFACTS, `${name}.txt`);
        await respect(join(WORKFLOWS, file), baseUrl, inputs, join(ARTIFACTS, `${name}.json`), consoleFile);
        const { counts, lines } = workflowResults(join(ARTIFACTS, `${name}.json`), file);
        console.log(`${lines.join('\n')}${counts.failed > 0 ? `\n  redocly respect's console: ${relative(ROOT, consoleFile)}` : ''}`);
        total.passed += counts.passed;
        total.failed += counts.failed;
      }
    } finally {
      await stop();
    }
  } finally {
    await scratch.close();
  }
  console.log(countsLine('the Arazzo workflows', total));
  writeFileSync(join(ARTIFACTS, 'counts.json'), JSON.stringify(total));
  return total.failed > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
