/**
 * `npm run test:durations`: refreshes test/support/file-durations.json, the times by which vitest
 * starts the longest test files first (test/support/longest-first.sequencer.ts), from the files'
 * times the last `npm test` left in test-artifacts/file-seconds/. Files gone since are dropped; a
 * file that run did not time keeps its time. Commit the list after a full run on CI's kind of machine.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../src/lib/project-root.js';
import { DURATIONS_FILE, knownDurations } from '../test/support/longest-first.sequencer.js';
import { FILE_SECONDS_DIR, laneFileSeconds } from './test-run.js';

/** The list as written: every known file's time to a tenth of a second, in path order. */
export function refreshed(
  known: ReadonlyMap<string, number>,
  measured: readonly { readonly name: string; readonly seconds: number }[],
  exists: (file: string) => boolean,
): Record<string, number> {
  const merged = new Map(known);
  for (const { name, seconds } of measured) merged.set(name, Math.round(seconds * 10) / 10);
  return Object.fromEntries([...merged].filter(([file]) => exists(file)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function main(): number {
  if (!existsSync(FILE_SECONDS_DIR)) {
    console.error(`no ${FILE_SECONDS_DIR}: run npm test first (its vitest lanes write the files' times there)`);
    return 1;
  }
  const measured = laneFileSeconds();
  const list = refreshed(knownDurations(), measured, (file) => existsSync(join(projectRoot(), file)));
  writeFileSync(DURATIONS_FILE, `${JSON.stringify(list, null, 2)}\n`);
  console.log(`${DURATIONS_FILE}: ${Object.keys(list).length} files, ${measured.length} timed by the last npm test`);
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = main();
