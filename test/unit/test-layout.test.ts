/**
 * The test suite's layout: component tests in the folder of the src/ concept they cover (test/<concept>/),
 * none flat in test/; one shared `api` and `completed` helper (test/support/http.ts), not a copy per
 * file; and vitest's lists of files that run alone, in pairs or in the waiting lane name files that exist,
 * each in one list (a wrong path would let such a file run beside another, where its timing is not its own).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/lib/project-root.js';
import { ALONE, BUSY_IN_PAIRS, IN_PAIRS, WAITING } from '../support/alone.js';

const root = projectRoot();
const testFiles = readdirSync(join(root, 'test'), { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => join('test', f));

describe('the test suite layout', () => {
  it('keeps every test file in a folder of test/, none flat in it', () => {
    expect(testFiles.length).toBeGreaterThan(0);
    expect(testFiles.filter((f) => relative('test', f).split('/').length < 2)).toEqual([]);
  });

  it('defines the api and completed helpers only in test/support', () => {
    const copies = testFiles.filter((f) =>
      /^(const|let) (api|completed) = \(|^(async )?function (api|completed)\(/m.test(readFileSync(join(root, f), 'utf8')),
    );
    expect(copies).toEqual([]);
  });

  it('names only test files that exist among those that run alone, in pairs or in the waiting lane, each in one list', () => {
    const listed = [...ALONE, ...BUSY_IN_PAIRS, ...IN_PAIRS, ...WAITING];
    expect(listed.filter((f) => !existsSync(join(root, f)))).toEqual([]);
    expect(listed.filter((f, i) => listed.indexOf(f) !== i)).toEqual([]);
  });
});
