import { configDefaults, defineConfig } from 'vitest/config';
import { ALONE, BUSY_IN_PAIRS, IN_PAIRS, WAITING, WAITING_AT_ONCE } from './test/support/alone.js';
import LongestFirstSequencer from './test/support/longest-first.sequencer.js';

/** Files at once in the side-by-side group: two, for the machine's two cores. */
const SIDE_BY_SIDE = 2;

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    // The first run on a new machine builds FerretDB (about a minute) in the global setup.
    hookTimeout: 300_000,
    testTimeout: 60_000,
    pool: 'forks',
    // A clean clone has no vitest cache: the longest files start first from a committed list.
    sequence: { sequencer: LongestFirstSequencer },
    // The json report gives `npm test` its closing line (scripts/test-summary.ts); the last one
    // prints the ten slowest test files.
    reporters: ['default', 'json', './test/support/slowest-files.reporter.ts', './test/support/unhandled-errors.reporter.ts'],
    outputFile: { json: 'test-artifacts/vitest.json' },
    // One run of `vitest` runs the groups one after another; `npm test` runs `waiting` beside
    // `side by side`, as a vitest process of its own (scripts/test-run.ts).
    projects: [
      {
        extends: true,
        test: {
          name: 'side by side',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ALONE, ...WAITING, ...IN_PAIRS, ...BUSY_IN_PAIRS],
          maxWorkers: SIDE_BY_SIDE,
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'waiting', include: WAITING, maxWorkers: WAITING_AT_ONCE, sequence: { groupOrder: 1 } } },
      { extends: true, test: { name: 'alone', include: ALONE, maxWorkers: 1, sequence: { groupOrder: 2 } } },
      { extends: true, test: { name: 'busy in pairs', include: BUSY_IN_PAIRS, maxWorkers: 2, sequence: { groupOrder: 3 } } },
      { extends: true, test: { name: 'in pairs', include: IN_PAIRS, maxWorkers: 2, sequence: { groupOrder: 4 } } },
    ],
  },
});
