/**
 * `npm test` after `npm run check`: every test suite in turn, then the closing lines CI reads.
 *
 * Each suite runs whether or not the one before it passed, so that a failing run still ends with its
 * counts: one line per suite, then `total: N passed, N failed, N skipped` (scripts/test-summary.ts).
 * Exits non-zero when any suite failed or could not report its counts.
 *
 * A suite is a command and the report it leaves (vitest's json, a JUnit file); adding one is one
 * entry in SUITES.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../src/lib/project-root.js';
import { type Counts, junitCounts, summary, vitestCounts, type VitestJson } from './test-summary.js';

const ARTIFACTS = join(projectRoot(), 'test-artifacts');

interface Suite {
  label: string;
  command: string[];
  /** The counts this run of the suite reported; throws when it left no report. */
  counts(since: number): Counts;
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
    counts: () => vitestCounts(JSON.parse(readFileSync(join(ARTIFACTS, 'vitest.json'), 'utf8')) as VitestJson),
  },
  {
    label: 'schemathesis',
    command: ['tsx', 'scripts/fuzz.ts'],
    counts: (since) => junitCounts(readFileSync(newestJunit(join(ARTIFACTS, 'schemathesis'), since), 'utf8')),
  },
  {
    label: 'clients',
    command: ['tsx', 'scripts/clients/test.ts'],
    counts: (since) => freshCounts(join(ARTIFACTS, 'clients', 'counts.json'), since),
  },
];

/** A counts file this run of the suite wrote (scripts/clients/test.ts sums its runs' JUnit reports into it). */
function freshCounts(path: string, since: number): Counts {
  if ((statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0) < since) throw new Error(`no ${path} from this run`);
  return JSON.parse(readFileSync(path, 'utf8')) as Counts;
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

function main(): number {
  mkdirSync(ARTIFACTS, { recursive: true });
  rmSync(join(ARTIFACTS, 'vitest.json'), { force: true });
  const parts: [string, Counts][] = [];
  let failed = false;
  for (const suite of SUITES) {
    const since = Date.now() - 1000;
    const run = spawnSync(suite.command[0]!, suite.command.slice(1), { stdio: 'inherit', cwd: projectRoot() });
    if (run.status !== 0) failed = true;
    try {
      parts.push([suite.label, failedRunCounted(suite.label, suite.counts(since), run.status ?? run.signal)]);
    } catch (error) {
      // A suite that crashed before reporting counts as one failure, said in a line of its own.
      console.error(`${suite.label}: no counts (${error instanceof Error ? error.message : String(error)}); exit ${run.status ?? run.signal}`);
      parts.push([suite.label, { passed: 0, failed: 1, skipped: 0 }]);
      failed = true;
    }
  }
  console.log(summary(parts).join('\n'));
  return failed || parts.some(([, c]) => c.failed > 0) ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = main();
