/**
 * How `npm test` spreads the vitest run (scripts/test-run.ts): the longest files first from the
 * committed list of their times, each lane's files' times written for one list of the slowest and
 * for `npm run test:durations`, and each suite's time in one line that no runner closes on.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { refreshed } from '../../scripts/test-durations.js';
import { laneFileSeconds, timesLine } from '../../scripts/test-run.js';
import { knownDurations, longestFirst } from '../support/longest-first.sequencer.js';

const reporter = join(__dirname, '..', 'support', 'slowest-files.reporter.ts');

describe('the order vitest starts files in', () => {
  it('starts the longest known file first, and a file the list does not know before all', () => {
    const durations = new Map([
      ['test/a.test.ts', 2],
      ['test/b.test.ts', 136],
      ['test/c.test.ts', 40],
    ]);
    const order = longestFirst(['test/a.test.ts', 'test/c.test.ts', 'test/new.test.ts', 'test/b.test.ts'], (f) => f, durations);
    expect(order).toEqual(['test/new.test.ts', 'test/b.test.ts', 'test/c.test.ts', 'test/a.test.ts']);
  });

  it('reads the committed list: every test file of the suite with its time', () => {
    const known = knownDurations();
    expect(known.size).toBeGreaterThan(100);
    for (const seconds of known.values()) expect(seconds).toBeGreaterThanOrEqual(0);
  });

  it('refreshes the list from the last run: new times over old, files gone dropped, in path order', () => {
    const known = new Map([
      ['test/a.test.ts', 2],
      ['test/gone.test.ts', 9],
      ['test/c.test.ts', 40],
    ]);
    const measured = [
      { name: 'test/c.test.ts', seconds: 31.26 },
      { name: 'test/b.test.ts', seconds: 0.04 },
    ];
    expect(refreshed(known, measured, (f) => f !== 'test/gone.test.ts')).toEqual({
      'test/a.test.ts': 2,
      'test/b.test.ts': 0,
      'test/c.test.ts': 31.3,
    });
    expect(Object.keys(refreshed(known, measured, () => true))).toEqual([
      'test/a.test.ts',
      'test/b.test.ts',
      'test/c.test.ts',
      'test/gone.test.ts',
    ]);
  });
});

describe("each lane's files' times", () => {
  it('are written by a real vitest run where FILE_SECONDS_JSON says, instead of its own list of the slowest', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lane-'));
    writeFileSync(join(dir, 'quick.test.ts'), "import { it } from 'vitest';\nit('passes', () => {});\n");
    const out = join(dir, 'seconds', 'lane.json');
    const run = spawnSync('vitest', ['run', '--root', dir, '--reporter=default', `--reporter=${reporter}`], {
      encoding: 'utf8',
      env: { ...process.env, FILE_SECONDS_JSON: out },
      cwd: dir,
    });
    expect(run.status).toBe(0);
    expect(run.stdout).not.toContain('slowest test files');
    const files = JSON.parse(readFileSync(out, 'utf8')) as { name: string; seconds: number }[];
    expect(files).toEqual([{ name: 'quick.test.ts', seconds: expect.any(Number) }]);
  });

  it('are read from this run only: a lane file older than the run is left out', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lanes-'));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'side-by-side.json'), JSON.stringify([{ name: 'test/a.test.ts', seconds: 3 }]));
    writeFileSync(join(dir, 'waiting.json'), JSON.stringify([{ name: 'test/b.test.ts', seconds: 80 }]));
    writeFileSync(join(dir, 'alone.json'), JSON.stringify([{ name: 'test/old.test.ts', seconds: 9 }]));
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(join(dir, 'alone.json'), old, old);
    const names = laneFileSeconds(Date.now() - 60_000, dir).map((f) => f.name);
    expect(names.sort()).toEqual(['test/a.test.ts', 'test/b.test.ts']);
  });
});

describe("each suite's time", () => {
  it('is said in one line that reads as no runner closing, above the counts', () => {
    const line = timesLine(
      [
        ['check', 56_400],
        ['vitest', 512_000],
        ['vitest, workarounds off', 45_200],
      ],
      790_000,
    );
    expect(line).toBe('suite times: check 56 s; vitest 512 s; vitest, workarounds off 45 s; npm test 790 s in all');
    expect(line).not.toMatch(/^\w+: \d+ passed, \d+ failed/);
    expect(line).not.toMatch(/^=+ .* =+$|Duration|\bin \d+(\.\d+)?s\b/);
  });
});
