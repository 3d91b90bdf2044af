/** The closing lines of `npm test` (scripts/test-summary.ts), which CI reads to know that tests ran. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { consoleSummary, withoutClosingFences } from '../../scripts/fuzz.js';
import { skippedSince } from '../../scripts/skipped-steps.js';
import { checkCounted, failedRunCounted, workaroundsOffPass } from '../../scripts/test-run.js';
import { everyWorkaround } from '../../src/db/workarounds.js';
import { slowestLines } from '../support/slowest-files.reporter.js';
import { junitCaseCounts, junitCounts, summary, vitestCounts, vitestFailures, type VitestJson } from '../../scripts/test-summary.js';

const junit = (attributes: string) =>
  `<?xml version="1.0" encoding="utf-8"?>\n<testsuites ${attributes} time="29.4">\n  <testsuite name="schemathesis" tests="8"></testsuite>\n</testsuites>\n`;

describe('the test summary', () => {
  it("name each failed test of a real vitest run, with its file and its error's first line, above the counts", () => {
    const dir = mkdtempSync(join(tmpdir(), 'summary-'));
    writeFileSync(
      join(dir, 'sample.test.ts'),
      [
        "import { describe, expect, it } from 'vitest';",
        "describe('a group', () => {",
        "  it('passes', () => expect(1).toBe(1));",
        "  it('fails', () => expect('seen').toBe('wanted'));",
        '});',
      ].join('\n'),
    );
    const run = spawnSync('vitest', ['run', '--root', dir, '--reporter=json', `--outputFile=${join(dir, 'report.json')}`], {
      encoding: 'utf8',
    });
    expect(run.status).toBe(1);
    const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as VitestJson;

    const failures = vitestFailures(report, dir);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/^failed: sample\.test\.ts > a group fails: .*expected 'seen' to be 'wanted'/);
    expect(summary([['vitest', vitestCounts(report)]]).at(-1)).toBe('total: 1 passed, 1 failed, 0 skipped');
  });

  it('ends on one plain line with the counts of both runners added up', () => {
    const lines = summary([
      ['vitest', vitestCounts({ numPassedTests: 289, numFailedTests: 0, numPendingTests: 1, numTodoTests: 0 })],
      ['schemathesis', junitCounts(junit('errors="0" failures="0" skipped="0" tests="20"'))],
    ]);
    expect(lines).toEqual([
      'vitest: 289 passed, 0 failed, 1 skipped',
      'schemathesis: 20 passed, 0 failed, 0 skipped',
      'total: 309 passed, 0 failed, 1 skipped',
    ]);
    // The form CI reads: 'N passed, N failed', optionally ', N skipped', one word and a colon before it.
    expect(lines.at(-1)).toMatch(/^\w+: \d+ passed, \d+ failed(, \d+ skipped)?$/);
  });

  it('counts the check steps skipped since the run began, each with a line saying how to run it', () => {
    const record = join(mkdtempSync(join(tmpdir(), 'skipped-')), 'skipped-steps.jsonl');
    const step = (at: number, what: string) => JSON.stringify({ at, what, why: 'Go is not installed', how: 'install Go' });
    writeFileSync(record, [step(1_000, 'an earlier run'), step(2_000, 'promtool check rules'), ''].join('\n'));

    const checked = checkCounted(0, skippedSince(2_000, record));
    expect(checked.lines).toEqual(['skipped: promtool check rules (Go is not installed); to run it: install Go']);
    expect(summary([['check', checked.counts]])).toEqual(['check: 1 passed, 0 failed, 1 skipped', 'total: 1 passed, 0 failed, 1 skipped']);
    expect(checkCounted(1, []).counts).toEqual({ passed: 0, failed: 1, skipped: 0 });
  });

  it('counts a failed or erroring Schemathesis operation as failed, not passed', () => {
    expect(junitCounts(junit('errors="1" failures="2" skipped="1" tests="8"'))).toEqual({ passed: 4, failed: 3, skipped: 1 });
  });

  it('refuses a file that is not a JUnit report', () => {
    expect(() => junitCounts('<html></html>')).toThrow(/not a JUnit report/);
  });
});

describe("the clients' scenario reports (node --test and pytest JUnit)", () => {
  it("counts pytest's test cases: a failure and an error are failed, a skip is skipped", () => {
    const xml =
      '<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="5">' +
      '<testcase classname="t" name="a" time="0.01" /><testcase classname="t" name="b" time="0.01" />' +
      '<testcase classname="t" name="c" time="0.01"><failure message="assert 1 == 2">...</failure></testcase>' +
      '<testcase classname="t" name="d" time="0.01"><error message="fixture">...</error></testcase>' +
      '<testcase classname="t" name="e" time="0.00"><skipped type="pytest.skip" message="the mock sends no webhooks">...</skipped></testcase>' +
      '</testsuite></testsuites>';
    expect(junitCaseCounts(xml)).toEqual({ passed: 2, failed: 2, skipped: 1 });
  });

  it("counts node's test cases, whose <testsuites> carries no counts", () => {
    const xml = [
      '<?xml version="1.0" encoding="utf-8"?>',
      '<testsuites>',
      '\t<testsuite name="@subsvc/client against the Prism mock" tests="3" failures="1" skipped="1">',
      '\t\t<testcase name="pauses" time="0.3" classname="s" file="/tmp/x.ts"/>',
      '\t\t<testcase name="resumes" time="0.1" classname="s" failure="no">',
      '\t\t\t<failure type="testCodeFailure" message="no">[Error]</failure>',
      '\t\t</testcase>',
      '\t\t<testcase name="webhook" time="0.0" classname="s">',
      '\t\t\t<skipped type="skipped" message="the mock sends no webhooks"/>',
      '\t\t</testcase>',
      '\t</testsuite>',
      '</testsuites>',
    ].join('\n');
    expect(junitCaseCounts(xml)).toEqual({ passed: 1, failed: 1, skipped: 1 });
  });

  it('refuses a file that is not a JUnit report', () => {
    expect(() => junitCaseCounts('<html></html>')).toThrow(/not a JUnit report/);
  });
});

describe("Schemathesis's console, as npm test prints it", () => {
  const console = [
    'Test cases:',
    '  4468 generated, 4468 passed, 36 skipped',
    '',
    'Warnings:',
    '  ⚠️ Missing test data: 6 operations repeatedly returned 404 responses',
    '',
    '============================ 2 warnings in 222.74s =============================',
  ].join('\n');

  it('keeps no line that reads as a runner closing (pytest fences become dashes)', () => {
    const shown = withoutClosingFences(console);
    expect(shown).not.toMatch(/^=+ .* =+$/m);
    expect(shown).toContain('-- 2 warnings in 222.74s --');
  });

  it('says its counts and warnings in our words', () => {
    expect(consoleSummary(console)).toEqual([
      'Schemathesis test cases: 4468 generated, 4468 passed, 36 skipped',
      'Schemathesis warning: Missing test data: 6 operations repeatedly returned 404 responses',
    ]);
  });
});

describe('a suite that fails with no failed test', () => {
  it('counts one failure, so the closing line never reads 0 failed for a failed run', () => {
    expect(failedRunCounted('vitest', { passed: 796, failed: 0, skipped: 2 }, 1)).toEqual({
      counts: { passed: 796, failed: 1, skipped: 2 },
      line: "vitest: exited 1 with no failed test (an unhandled error, or the runner's own): counted as one failure",
    });
    expect(failedRunCounted('vitest', { passed: 796, failed: 3, skipped: 2 }, 1)).toEqual({
      counts: { passed: 796, failed: 3, skipped: 2 },
    });
    expect(failedRunCounted('vitest', { passed: 796, failed: 0, skipped: 2 }, 0)).toEqual({
      counts: { passed: 796, failed: 0, skipped: 2 },
    });
  });
});

describe('the slowest test files, printed at the end of a vitest run', () => {
  it('lists the ten slowest, slowest first, each with its time', () => {
    const files = Array.from({ length: 12 }, (_, i) => ({ name: `test/f${i}.test.ts`, seconds: i * 1.25 }));
    const lines = slowestLines(files);
    expect(lines[0]).toBe('slowest test files (10 of 12):');
    expect(lines.slice(1)).toHaveLength(10);
    expect(lines[1]).toBe('   13.8 s  test/f11.test.ts');
    expect(lines.at(-1)).toBe('    2.5 s  test/f2.test.ts');
  });

  it('says nothing for a run without files', () => {
    expect(slowestLines([])).toEqual([]);
  });
});

describe("npm test's pass without workarounds", () => {
  it('switches off the speed-only workarounds and keeps every other one with its reason', () => {
    const { off, kept } = workaroundsOffPass();
    expect(off).toEqual(expect.arrayContaining(['oneJobAtATime', 'relayPauses', 'requestPool', 'scheduleClock']));
    expect(kept.map((k) => k.split(' ')[0])).toEqual(
      expect.arrayContaining(['keyedMutex', 'statementsPerCommand', 'expirySweeps', 'wholeDocumentAnswers']),
    );
    for (const k of kept) expect(k).toMatch(/^\w+ \(.{20,}\)$/);
    expect(off.length + kept.length).toBe(everyWorkaround().length);
  });
});
