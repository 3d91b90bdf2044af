/**
 * A check step that cannot run on this machine (its tool cannot be had without root, or without a
 * toolchain the machine lacks) is skipped, not failed: it prints one line saying what was skipped
 * and how to run it, and leaves a record that the closing lines of `npm test` count
 * (scripts/test-run.ts), so that a green run still says what it did not check.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../src/lib/project-root.js';

export interface SkippedStep {
  /** When it was skipped (ms since the epoch): `npm test` counts those skipped since it started. */
  readonly at: number;
  readonly what: string;
  readonly why: string;
  /** What makes the step run. */
  readonly how: string;
}

/** The record: test-artifacts/skipped-steps.jsonl, or SKIPPED_STEPS_FILE (a test's own, kept out of the run's count). */
const RECORD = () => process.env.SKIPPED_STEPS_FILE || join(projectRoot(), 'test-artifacts', 'skipped-steps.jsonl');

export const skippedLine = (step: Pick<SkippedStep, 'what' | 'why' | 'how'>) =>
  `SKIPPED  ${step.what}: ${step.why}; to run it: ${step.how}`;

/** Says that the step was skipped, in one line, and records it. */
export function skipStep(what: string, why: string, how: string): void {
  const step: SkippedStep = { at: Date.now(), what, why, how };
  console.error(skippedLine(step));
  mkdirSync(join(RECORD(), '..'), { recursive: true });
  appendFileSync(RECORD(), `${JSON.stringify(step)}\n`);
}

/** The steps skipped since `since` (ms since the epoch), from this run's record or another. */
export function skippedSince(since: number, record = RECORD()): SkippedStep[] {
  if (!existsSync(record)) return [];
  return readFileSync(record, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as SkippedStep)
    .filter((step) => step.at >= since);
}
