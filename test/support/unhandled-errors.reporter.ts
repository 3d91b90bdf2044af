/**
 * Writes a vitest run's unhandled errors (a rejection nobody awaited, an error thrown after a test
 * ended) to UNHANDLED_ERRORS_JSON, each with the test file and test it came from, for `npm test`'s
 * closing lines (scripts/test-run.ts): such an error fails the run with no failed test, and CI keeps
 * only the end of a run's output, where vitest's own account of it is long gone.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import type { Reporter, SerializedError, TestModule } from 'vitest/node';

export interface UnhandledError {
  /** The test file it came from, relative to the project, when vitest knows it. */
  readonly file?: string;
  /** The test that was running when it was thrown, when one was. */
  readonly test?: string;
  readonly message: string;
}

type Traced = SerializedError & { VITEST_TEST_PATH?: string; VITEST_TEST_NAME?: string };

export function unhandledErrors(errors: readonly SerializedError[], root = process.cwd()): UnhandledError[] {
  return errors.map((error) => {
    const { VITEST_TEST_PATH: path, VITEST_TEST_NAME: test } = error as Traced;
    const message = `${error.name ?? 'Error'}: ${error.message ?? 'no message'}`;
    return { ...(path ? { file: relative(root, path) } : {}), ...(test ? { test } : {}), message };
  });
}

export default class UnhandledErrorsReporter implements Reporter {
  onTestRunEnd(_modules: readonly TestModule[], errors: readonly SerializedError[]): void {
    const out = process.env.UNHANDLED_ERRORS_JSON;
    if (!out) return;
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(unhandledErrors(errors))}\n`);
  }
}
