/**
 * Prints the ten slowest test files at the end of a vitest run, each with its time (importing it,
 * its setup, its tests and hooks), so that the file that makes the run long is seen where the run
 * is read: the run must stay within its budget on a 2-core machine as the suite grows.
 */
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

const SHOWN = 10;

/** A file's time: its import and collection, its setup, then its tests and hooks. */
export function fileSeconds(module: Pick<TestModule, 'diagnostic'>): number {
  const d = module.diagnostic();
  return (d.prepareDuration + d.environmentSetupDuration + d.collectDuration + d.setupDuration + d.duration) / 1000;
}

export function slowestLines(files: readonly { readonly name: string; readonly seconds: number }[], shown = SHOWN): string[] {
  if (files.length === 0) return [];
  const slowest = [...files].sort((a, b) => b.seconds - a.seconds).slice(0, shown);
  return [
    `slowest test files (${slowest.length} of ${files.length}):`,
    ...slowest.map((f) => `${f.seconds.toFixed(1).padStart(7)} s  ${f.name}`),
  ];
}

export default class SlowestFilesReporter implements Reporter {
  onTestRunEnd(modules: readonly TestModule[]): void {
    const files = modules.map((m) => ({ name: relative(process.cwd(), m.moduleId), seconds: fileSeconds(m) }));
    const lines = slowestLines(files);
    if (lines.length > 0) console.log(`\n${lines.join('\n')}`);
  }
}
