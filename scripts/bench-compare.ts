/**
 * Two runs of `npm run bench` side by side: every ratio (a median of alternating rounds, with its
 * spread) of each run, and how far the second's median is from the first's. Issue 29 asks two
 * consecutive runs on a quiet machine to agree within 15% on every ratio. Beside each change, the
 * noise its rounds imply (the standard error of the difference of two medians, from each run's
 * rounds: medianNoise): a change within twice that is what the rounds' own spread makes likely,
 * not a sign that the code or the machine changed.
 *
 *   npx tsx scripts/bench-compare.ts [previous.json latest.json]
 *
 * Without arguments: bench/results/previous.json and bench/results/latest.json (a full run keeps the
 * run before it as previous.json). `npm run bench` prints the same comparison at its end.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../src/lib/project-root.js';
import { formatSpread, medianNoise, type Spread as RoundSpread } from './bench-rounds.js';

/** How far apart two runs' medians may be (relative to the first). */
export const AGREEMENT = 0.15;

/** A ratio as a run stores it (runs written before `rounds` was stored have only these three). */
type Spread = Pick<RoundSpread, 'median' | 'min' | 'max'> & Partial<Pick<RoundSpread, 'rounds'>>;

/** The noise of the change between two runs' medians (both relative), when both stored their rounds. */
export function changeNoise(a: Spread, b: Spread): number | undefined {
  const [na, nb] = [a, b].map((s) => (s.rounds ? medianNoise(s.rounds) : undefined));
  return na === undefined || nb === undefined ? undefined : Math.hypot(na, nb);
}

const isSpread = (value: unknown): value is Spread =>
  typeof value === 'object' &&
  value !== null &&
  ['median', 'min', 'max'].every((k) => typeof (value as Record<string, unknown>)[k] === 'number');

/** Every ratio of a run by its path in the results (the same ratio stored twice is listed once). */
export function ratiosOf(results: unknown): Map<string, Spread> {
  const found = new Map<string, Spread>();
  const seen = new Set<string>();
  const walk = (value: unknown, path: string) => {
    if (isSpread(value)) {
      const key = `${value.median}|${value.min}|${value.max}`;
      if (!seen.has(key)) found.set(path, value);
      seen.add(key);
      return;
    }
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
  };
  walk(results, '');
  return found;
}

export interface Comparison {
  readonly lines: string[];
  /** Whether every ratio found in both runs agrees within AGREEMENT. */
  readonly agree: boolean;
  /** The ratios outside AGREEMENT, and of those the ones whose change is within twice its noise. */
  readonly outside: readonly string[];
  readonly outsideWithinNoise: readonly string[];
}

export function compareRuns(previous: { measuredAt?: string } & object, latest: { measuredAt?: string } & object): Comparison {
  const before = ratiosOf(previous);
  const after = ratiosOf(latest);
  const lines = [
    `ratios of the run of ${previous.measuredAt ?? '?'} and of ${latest.measuredAt ?? '?'} (median of the rounds, least–greatest round)`,
    '| ratio                                  |          previous run |            this run | change | noise | within 15% |',
    '|----------------------------------------|----------------------:|--------------------:|-------:|------:|:----------:|',
  ];
  const outside: string[] = [];
  const outsideWithinNoise: string[] = [];
  for (const [path, b] of after) {
    const a = before.get(path);
    if (!a) continue;
    const change = b.median / a.median - 1;
    const noise = changeNoise(a, b);
    const ok = Math.abs(change) <= AGREEMENT;
    if (!ok) outside.push(path);
    const withinNoise = !ok && noise !== undefined && Math.abs(change) <= 2 * noise;
    if (withinNoise) outsideWithinNoise.push(path);
    const noiseText = noise === undefined ? '-' : `±${(noise * 100).toFixed(0)}%`;
    lines.push(
      `| ${path.padEnd(38)} | ${formatSpread(a).padStart(21)} | ${formatSpread(b).padStart(19)} | ${`${change >= 0 ? '+' : ''}${(change * 100).toFixed(0)}%`.padStart(6)} | ${noiseText.padStart(5)} | ${(ok ? 'yes' : withinNoise ? 'NO, noise' : 'NO').padStart(10)} |`,
    );
  }
  const agree = outside.length === 0;
  lines.push(`every ratio within ${AGREEMENT * 100}% of the previous run: ${agree ? 'yes' : 'NO'}`);
  if (!agree) {
    lines.push(
      `outside: ${outside.length}; within twice the noise their rounds imply (NO, noise): ${outsideWithinNoise.length}` +
        " (noise: the standard error of the change, from the spread of both runs' rounds; more rounds narrow it)",
    );
  }
  return { lines, agree, outside, outsideWithinNoise };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const dir = join(projectRoot(), 'bench', 'results');
  const [first = join(dir, 'previous.json'), second = join(dir, 'latest.json')] = process.argv.slice(2);
  for (const file of [first, second]) if (!existsSync(file)) throw new Error(`${file}: no such run (run npm run bench twice)`);
  const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as object;
  const { lines, agree } = compareRuns(read(first), read(second));
  console.log(lines.join('\n'));
  process.exitCode = agree ? 0 : 1;
}
