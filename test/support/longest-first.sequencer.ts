/**
 * Starts the longest test files first, by the times in test/support/file-durations.json (refreshed
 * by `npm run test:durations` from the last `npm test`): a clean clone has no vitest cache, and
 * vitest's fallback (the largest file first) once started a 136 s file near the end of its group,
 * where it ran on while the other worker had nothing left. A file the list does not know yet
 * starts first, as the longest would. Groups and projects keep vitest's own order.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { projectRoot } from '../../src/lib/project-root.js';

export const DURATIONS_FILE = join(projectRoot(), 'test', 'support', 'file-durations.json');

/** Seconds per test file (its path from the project root), as the list holds them. */
export function knownDurations(path = DURATIONS_FILE): ReadonlyMap<string, number> {
  try {
    return new Map(Object.entries(JSON.parse(readFileSync(path, 'utf8')) as Record<string, number>));
  } catch {
    return new Map();
  }
}

/** `files` (paths from the project root) longest first; those `durations` lacks before all, in their own order. */
export function longestFirst<T>(files: readonly T[], pathOf: (file: T) => string, durations: ReadonlyMap<string, number>): T[] {
  const seconds = (file: T) => durations.get(pathOf(file)) ?? Number.POSITIVE_INFINITY;
  return [...files].sort((a, b) => (seconds(a) === seconds(b) ? 0 : seconds(b) > seconds(a) ? 1 : -1));
}

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations = knownDurations();
    const pathOf = (spec: TestSpecification) => relative(projectRoot(), spec.moduleId);
    const byGroup = new Map<string, TestSpecification[]>();
    // vitest's order of groups and projects, then the longest first within each.
    for (const spec of await super.sort(files)) {
      const key = `${spec.project.config.sequence.groupOrder}\u0000${spec.project.name}`;
      byGroup.set(key, [...(byGroup.get(key) ?? []), spec]);
    }
    return [...byGroup.values()].flatMap((specs) => longestFirst(specs, pathOf, durations));
  }
}
