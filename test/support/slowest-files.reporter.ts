/**
 * Prints the ten slowest test files at the end of a vitest run, each with its time (importing it,
 * its setup, its tests and hooks), so that the file that makes the run long is seen where the run
 * is read: the run must stay within its budget on a 2-core machine as the suite grows.
 *
 * Under `npm test`, which runs the suite as several vitest processes (scripts/test-run.ts), each
 * process writes its files' times to FILE_SECONDS_JSON instead, and `npm test` prints one list for
 * all of them; `npm run test:durations` keeps the sequencer's list fresh from the same files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

const SHOWN = 10;

export interface FileSeconds {
  readonly name: string;
  readonly seconds: number;
}

/** A file's time: its import and collection, its setup, then its tests and hooks. */
export function fileSeconds(module: Pick<TestModule, 'diagnostic'>): number {
  const d = module.diagnostic();
  return (d.prepareDuration + d.environmentSetupDuration + d.collectDuration + d.setupDuration + d.duration) / 1000;
}

export function slowestLines(files: readonly FileSeconds[], shown = SHOWN): string[] {
  if (files.length === 0) return [];
  const slowest = [...files].sort((a, b) => b.seconds - a.seconds).slice(0, shown);
  return [
    `slowest test files (${slowest.length} of ${files.length}):`,
    ...slowest.map((f) => `${f.seconds.toFixed(1).padStart(7)} s  ${f.name}`),
  ];
}

export default class SlowestFilesReporter implements Reporter {
  onTestRunEnd(modules: readonly TestModule[]): void {
    const files: FileSeconds[] = modules.map((m) => ({ name: relative(process.cwd(), m.moduleId), seconds: fileSeconds(m) }));
    const out = process.env.FILE_SECONDS_JSON;
    if (out) {
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, `${JSON.stringify(files)}\n`);
      return;
    }
    const lines = slowestLines(files);
    if (lines.length > 0) console.log(`\n${lines.join('\n')}`);
  }
}
