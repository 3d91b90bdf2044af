import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { unhandledLines } from '../../scripts/test-run.js';
import { projectRoot } from '../../src/lib/project-root.js';

describe("a vitest run's unhandled error, named above npm test's closing lines", () => {
  it('names the file and the test it came from, and its message, when a rejection nobody awaited fails the run', () => {
    const dir = mkdtempSync(join(tmpdir(), 'unhandled-'));
    writeFileSync(
      join(dir, 'leaks.test.ts'),
      `import { it } from 'vitest';\nit('lets a rejection go', async () => { void Promise.reject(new Error('nobody awaited me')); await new Promise((r) => setTimeout(r, 50)); });\n`,
    );
    const reporter = join(projectRoot(), 'test/support/unhandled-errors.reporter.ts');
    writeFileSync(join(dir, 'vitest.config.ts'), `export default { test: { reporters: ['dot', ${JSON.stringify(reporter)}] } };\n`);
    const out = join(dir, 'unhandled.json');
    const run = spawnSync(join(projectRoot(), 'node_modules/.bin/vitest'), ['run', '--root', dir], {
      cwd: dir,
      env: { ...process.env, UNHANDLED_ERRORS_JSON: out },
      encoding: 'utf8',
    });
    expect(run.status, run.stdout + run.stderr).toBe(1);
    expect(unhandledLines(out)).toEqual(['unhandled error from leaks.test.ts > lets a rejection go: Error: nobody awaited me']);
  });

  it('says nothing when the run left no such file', () => {
    expect(unhandledLines(join(tmpdir(), 'no-such-file.json'))).toEqual([]);
  });
});
