/**
 * `npm test`: `npm run check`, then every test suite in turn, then the closing lines CI reads.
 *
 * A check step that cannot run here (its tool needs Go, python3's venv or root) is skipped with one
 * line (scripts/skipped-steps.ts); the `check` line counts those steps as skipped, with one line each
 * saying how to run it, above the closing lines. Steps skipped before `npm test` started (CI's image
 * check) count too when SKIPPED_STEPS_SINCE gives the time they began (ms since the epoch). A failed
 * check stops the run there: its closing lines count it as one failure.
 *
 * Each suite runs whether or not the one before it passed, so that a failing run still ends with its
 * counts: one line per suite, then `total: N passed, N failed, N skipped` (scripts/test-summary.ts).
 * Exits non-zero when any suite failed or could not report its counts.
 *
 * A suite is a command and the report it leaves (vitest's json, a JUnit file); adding one is one
 * entry in SUITES.
 *
 * After the main vitest run, the test files whose behaviour depends on an engine workaround run
 * again with DB_WORKAROUNDS switching off every workaround the embedded engine can do without, so
 * that the MongoDB side of each runs somewhere (`mongod` cannot be had on our machines): a suite of
 * its own in the closing lines. Which are switched off, and which are kept and why, is printed first.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Capabilities } from '../src/db/capabilities.js';
import { everyWorkaround, type WorkaroundName } from '../src/db/workarounds.js';
import { projectRoot } from '../src/lib/project-root.js';
import { skippedSince, type SkippedStep } from './skipped-steps.js';
import { type Counts, junitCounts, summary, vitestCounts, vitestFailures, type VitestJson } from './test-summary.js';

const ARTIFACTS = join(projectRoot(), 'test-artifacts');

/**
 * Capabilities the embedded FerretDB lacks at a cost in speed only: their workarounds are switched
 * off in the pass without workarounds. A workaround for any other capability is kept (a new entry
 * of the table too, until shown to be speed-only here), each for the reason the table gives.
 */
const SPEED_ONLY: Partial<Record<keyof Capabilities, string>> = {
  parallelWriters: 'with one writer, parallel writes wait for it: slower, with the same results',
  secondaryIndexes: 'a query its index does not serve reads more documents, with the same answer',
};

/** Workarounds kept on although their capability is speed-only here, and why. */
const KEPT: Partial<Record<WorkaroundName, string>> = {
  statementsPerCommand: 'a bulk write of 100 statements held a connection per statement and stalled every client of the engine',
};

/**
 * The test files whose behaviour depends on a workaround switched off in that pass: bulk chunks
 * and webhook batches (oneJobAtATime), the events relay (relayPauses), requests waiting on the one
 * writer (requestPool), due schedules (scheduleClock). bulk-shared and workers (worker processes)
 * pass too but are left out: they are the two longest files of that pass (112 s and 75 s of it).
 */
const WORKAROUND_FILES = [
  'test/subscriptions/single-operations.test.ts',
  'test/bulk/bulk.test.ts',
  'test/bulk/bulk-mixed.test.ts',
  'test/events/events-webhooks.test.ts',
  'test/events/events-schedules.test.ts',
  'test/schedules/schedules.test.ts',
  'test/main/background-stop.test.ts',
  'test/db/db-faults-slow.test.ts',
];

/** The workarounds the pass switches off, and those it keeps with why (printed before it runs). */
export function workaroundsOffPass(): { readonly off: readonly WorkaroundName[]; readonly kept: readonly string[] } {
  const off: WorkaroundName[] = [];
  const kept: string[] = [];
  for (const { workaround, missing, why } of everyWorkaround()) {
    const keptWhy = KEPT[workaround] ?? (SPEED_ONLY[missing] ? undefined : `without ${missing}: ${why}`);
    if (keptWhy === undefined) off.push(workaround);
    else kept.push(`${workaround} (${keptWhy})`);
  }
  return { off, kept };
}

interface Suite {
  label: string;
  command: string[];
  /** Variables added to the environment, and what to say before the suite runs. */
  env?: () => { readonly vars: Record<string, string>; readonly said: readonly string[] };
  /** The counts this run of the suite reported; throws when it left no report. */
  counts(since: number): Counts;
  /** One line per failed test, when the suite's report names them. */
  failures?(): string[];
}

/** The newest JUnit report in `dir` written since `since` (ms). */
export function newestJunit(dir: string, since: number): string {
  const files = readdirSync(dir, { withFileTypes: true })
    .filter((f) => f.isFile() && f.name.endsWith('.xml'))
    .map((f) => join(dir, f.name))
    .filter((path) => statSync(path).mtimeMs >= since)
    .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
  const newest = files.at(-1);
  if (!newest) throw new Error(`no JUnit report in ${dir} from this run`);
  return newest;
}

const SUITES: Suite[] = [
  {
    label: 'vitest',
    command: ['vitest', 'run'],
    counts: () => vitestCounts(vitestReport('vitest.json')),
    failures: () => vitestFailures(vitestReport('vitest.json'), projectRoot()),
  },
  {
    label: 'vitest, workarounds off',
    command: ['vitest', 'run', ...WORKAROUND_FILES, '--outputFile.json=test-artifacts/vitest-workarounds-off.json'],
    env: () => {
      const { off, kept } = workaroundsOffPass();
      return {
        vars: { DB_WORKAROUNDS: off.join(',') },
        said: [
          `workarounds off: ${WORKAROUND_FILES.length} test files again with DB_WORKAROUNDS=${off.join(',')} (speed only on the embedded engine)`,
          ...kept.map((k) => `workarounds off: kept on: ${k}`),
        ],
      };
    },
    counts: (since) => freshCounts(join(ARTIFACTS, 'vitest-workarounds-off.json'), since, (report) => vitestCounts(report as VitestJson)),
    failures: () => vitestFailures(vitestReport('vitest-workarounds-off.json'), projectRoot()),
  },
  {
    label: 'schemathesis',
    command: ['tsx', 'scripts/fuzz.ts'],
    counts: (since) => junitCounts(readFileSync(newestJunit(join(ARTIFACTS, 'schemathesis'), since), 'utf8')),
  },
  {
    label: 'clients',
    command: ['tsx', 'scripts/clients/test.ts'],
    counts: (since) => freshCounts(join(ARTIFACTS, 'clients', 'counts.json'), since, (report) => report as Counts),
  },
  {
    label: 'arazzo',
    command: ['tsx', 'scripts/arazzo.ts'],
    counts: (since) => freshCounts(join(ARTIFACTS, 'arazzo', 'counts.json'), since, (report) => report as Counts),
  },
];

const vitestReport = (name: string) => JSON.parse(readFileSync(join(ARTIFACTS, name), 'utf8')) as VitestJson;

/** The counts of a report this run of the suite wrote (scripts/clients/test.ts sums its runs' JUnit reports into one). */
function freshCounts(path: string, since: number, countsOf: (report: unknown) => Counts): Counts {
  if ((statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0) < since) throw new Error(`no ${path} from this run`);
  return countsOf(JSON.parse(readFileSync(path, 'utf8')));
}

/**
 * A suite that failed with no failed test (vitest's unhandled errors, a runner's own error) counts
 * one failure more, said in a line of its own: the closing line never reads 0 failed for a run
 * that failed.
 */
export function failedRunCounted(label: string, counts: Counts, exit: number | string | null): Counts {
  if (exit === 0 || counts.failed > 0) return counts;
  console.error(`${label}: exited ${exit} with no failed test (an unhandled error, or the runner's own): counted as one failure`);
  return { ...counts, failed: 1 };
}

/** The check's line: one pass or one failure, and each step it skipped; a line per skipped step says how to run it. */
export function checkCounted(exit: number | string | null, skipped: readonly SkippedStep[]): { counts: Counts; lines: string[] } {
  return {
    counts: { passed: exit === 0 ? 1 : 0, failed: exit === 0 ? 0 : 1, skipped: skipped.length },
    lines: skipped.map((step) => `skipped: ${step.what} (${step.why}); to run it: ${step.how}`),
  };
}

function main(): number {
  const since = Number(process.env.SKIPPED_STEPS_SINCE) || Date.now();
  mkdirSync(ARTIFACTS, { recursive: true });
  rmSync(join(ARTIFACTS, 'vitest.json'), { force: true });
  const check = spawnSync('npm', ['run', 'check'], { stdio: 'inherit', cwd: projectRoot() });
  const checked = checkCounted(check.status ?? check.signal, skippedSince(since));
  const parts: [string, Counts][] = [['check', checked.counts]];
  const failures: string[] = [...checked.lines];
  if (checked.counts.failed > 0) {
    console.log([`check: npm run check exited ${check.status ?? check.signal}: no test ran`, ...failures, ...summary(parts)].join('\n'));
    return 1;
  }
  let failed = false;
  for (const suite of SUITES) {
    const since = Date.now() - 1000;
    const env = suite.env?.();
    for (const line of env?.said ?? []) console.log(line);
    const run = spawnSync(suite.command[0]!, suite.command.slice(1), {
      stdio: 'inherit',
      cwd: projectRoot(),
      env: { ...process.env, ...env?.vars },
    });
    if (run.status !== 0) failed = true;
    try {
      const counts = failedRunCounted(suite.label, suite.counts(since), run.status ?? run.signal);
      parts.push([suite.label, counts]);
      if (counts.failed > 0) failures.push(...(suite.failures?.() ?? []).map((line) => `${suite.label} ${line}`));
    } catch (error) {
      // A suite that crashed before reporting counts as one failure, said in a line of its own.
      console.error(
        `${suite.label}: no counts (${error instanceof Error ? error.message : String(error)}); exit ${run.status ?? run.signal}`,
      );
      parts.push([suite.label, { passed: 0, failed: 1, skipped: 0 }]);
      failed = true;
    }
  }
  console.log([...failures, ...summary(parts)].join('\n'));
  return failed || parts.some(([, c]) => c.failed > 0) ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = main();
