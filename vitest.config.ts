import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // The first run on a new machine builds FerretDB (about a minute) in the global setup.
    hookTimeout: 300_000,
    testTimeout: 60_000,
    pool: 'forks',
    // The json report gives `npm test` its closing line (scripts/test-summary.ts); the last one
    // prints the ten slowest test files.
    reporters: ['default', 'json', './test/support/slowest-files.reporter.ts'],
    outputFile: { json: 'test-artifacts/vitest.json' },
  },
});
