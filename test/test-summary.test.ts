import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { summary, vitestCounts, vitestFailures, type VitestJson } from '../scripts/test-summary.js';

describe("npm test's closing lines", () => {
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
});
