/**
 * The last step of `npm test`: one closing line for the whole run, `total: N passed, N failed, N skipped`,
 * after one line each for vitest and Schemathesis.
 *
 * Why: CI reads a run's closing lines to tell a run that tested nothing from one that passed. Vitest's
 * summary is not a format it reads, and the last lines it saw were Schemathesis's
 * `=== 2 warnings in 253.68s ===`, which look like pytest closing on no test at all.
 *
 * Reads test-artifacts/vitest.json (vitest's json reporter, vitest.config.ts) and the JUnit report that
 * Schemathesis wrote in this run (test-artifacts/schemathesis/, newest, not older than vitest's).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../src/lib/project-root.js';

export interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

interface VitestJson {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
}

export function vitestCounts(report: VitestJson): Counts {
  return { passed: report.numPassedTests, failed: report.numFailedTests, skipped: report.numPendingTests + report.numTodoTests };
}

/** Schemathesis's JUnit report: one test case per operation, and one for the stateful phase. */
export function junitCounts(xml: string): Counts {
  const suites = /<testsuites\b([^>]*)>/.exec(xml)?.[1];
  if (suites === undefined) throw new Error('not a JUnit report: no <testsuites> element');
  const attribute = (name: string) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(suites)?.[1] ?? 0);
  const failed = attribute('failures') + attribute('errors');
  const skipped = attribute('skipped');
  return { passed: attribute('tests') - failed - skipped, failed, skipped };
}

export const countsLine = (label: string, { passed, failed, skipped }: Counts) => `${label}: ${passed} passed, ${failed} failed, ${skipped} skipped`;

export function summary(parts: readonly (readonly [string, Counts])[]): string[] {
  const total = parts.reduce((sum, [, c]) => ({ passed: sum.passed + c.passed, failed: sum.failed + c.failed, skipped: sum.skipped + c.skipped }), { passed: 0, failed: 0, skipped: 0 });
  return [...parts.map(([label, counts]) => countsLine(label, counts)), countsLine('total', total)];
}

function main(): number {
  const artifacts = join(projectRoot(), 'test-artifacts');
  const vitestReport = join(artifacts, 'vitest.json');
  const parts: [string, Counts][] = [['vitest', vitestCounts(JSON.parse(readFileSync(vitestReport, 'utf8')) as VitestJson)]];
  const since = statSync(vitestReport).mtimeMs;
  const junitDir = join(artifacts, 'schemathesis');
  const junit = readdirSync(junitDir, { withFileTypes: true })
    .filter((f) => f.isFile() && f.name.endsWith('.xml'))
    .map((f) => join(junitDir, f.name))
    .filter((path) => statSync(path).mtimeMs >= since)
    .sort()
    .at(-1);
  if (!junit) throw new Error(`no Schemathesis report in ${junitDir} from this run`);
  parts.push(['schemathesis', junitCounts(readFileSync(junit, 'utf8'))]);
  const lines = summary(parts);
  console.log(lines.join('\n'));
  return parts.some(([, c]) => c.failed > 0) ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = main();
