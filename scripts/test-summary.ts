/**
 * The closing lines of `npm test` (printed by scripts/test-run.ts): one line per suite, then
 * `total: N passed, N failed, N skipped`, the plain line CI reads to know that tests ran.
 *
 * Why: CI reads a run's closing lines to tell a run that tested nothing from one that passed. Vitest's
 * summary is not a format it reads, and a run once ended on Schemathesis's `=== 2 warnings in 253.68s ===`,
 * which looks like pytest closing on no test at all (its console now goes to a file: scripts/fuzz.ts).
 */

export interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

export interface VitestJson {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  testResults?: readonly {
    name: string;
    message?: string;
    status?: string;
    assertionResults: readonly { fullName: string; status: string; failureMessages?: readonly string[] }[];
  }[];
}

export function vitestCounts(report: VitestJson): Counts {
  return { passed: report.numPassedTests, failed: report.numFailedTests, skipped: report.numPendingTests + report.numTodoTests };
}

/**
 * One line per failed test (file, name, the first line of its error), and per file that failed
 * without a failed test, printed just above the closing lines: CI keeps only the end of a run's
 * output, and a count alone does not say which test to look at.
 */
export function vitestFailures(report: VitestJson, root: string): string[] {
  return (report.testResults ?? []).flatMap((file) => {
    const where = file.name.startsWith(root) ? file.name.slice(root.length).replace(/^\//, '') : file.name;
    const tests = file.assertionResults
      .filter((test) => test.status === 'failed')
      .map((test) => `failed: ${where} > ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
    if (tests.length === 0 && file.status === 'failed') tests.push(`failed: ${where}: ${firstLine(file.message)}`);
    return tests;
  });
}

const firstLine = (message: string | undefined) => (message ?? 'no message').split('\n')[0]!.slice(0, 300);

/** Schemathesis's JUnit report: one test case per operation, and one for the stateful phase. */
export function junitCounts(xml: string): Counts {
  const suites = /<testsuites\b([^>]*)>/.exec(xml)?.[1];
  if (suites === undefined) throw new Error('not a JUnit report: no <testsuites> element');
  const attribute = (name: string) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(suites)?.[1] ?? 0);
  const failed = attribute('failures') + attribute('errors');
  const skipped = attribute('skipped');
  return { passed: attribute('tests') - failed - skipped, failed, skipped };
}

/**
 * Test cases in a JUnit report that puts its counts on each <testsuite>, not on <testsuites>:
 * `node --test`'s and pytest's, from the clients' scenarios (scripts/clients/test.ts).
 */
export function junitCaseCounts(xml: string): Counts {
  const cases = [...xml.matchAll(/<testcase\b[^>]*?(?:\/>|>([\s\S]*?)<\/testcase>)/g)].map((m) => m[1] ?? '');
  if (cases.length === 0 && !/<testsuites?\b/.test(xml)) throw new Error('not a JUnit report');
  const failed = cases.filter((body) => /<(failure|error)\b/.test(body)).length;
  const skipped = cases.filter((body) => /<skipped\b/.test(body) && !/<(failure|error)\b/.test(body)).length;
  return { passed: cases.length - failed - skipped, failed, skipped };
}

export const countsLine = (label: string, { passed, failed, skipped }: Counts) =>
  `${label}: ${passed} passed, ${failed} failed, ${skipped} skipped`;

export function summary(parts: readonly (readonly [string, Counts])[]): string[] {
  const total = parts.reduce(
    (sum, [, c]) => ({ passed: sum.passed + c.passed, failed: sum.failed + c.failed, skipped: sum.skipped + c.skipped }),
    { passed: 0, failed: 0, skipped: 0 },
  );
  return [...parts.map(([label, counts]) => countsLine(label, counts)), countsLine('total', total)];
}
