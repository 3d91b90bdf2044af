/**
 * How `npm run bench` turns measurements into ratios it can stand behind: every ratio is the median
 * of BENCH_ROUNDS rounds (at least 3) that run the measured thing (A) and its baseline (B) in turn,
 * A, B, A, B, ..., each round giving one ratio A/B; the spread beside it is the least and the
 * greatest of those round ratios. On a shared machine one pair of runs varied by a fifth; the
 * median of alternating rounds moves far less, and the spread says how much to believe it.
 */

/** Rounds per ratio (BENCH_ROUNDS, default 3; fewer than 3 is refused: a median of two is a mean). */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
if (!Number.isInteger(ROUNDS) || ROUNDS < 3)
  throw new Error(`BENCH_ROUNDS=${process.env.BENCH_ROUNDS}: at least 3 rounds are needed for a median with a spread`);

export interface Spread {
  /** The median of the round ratios: the figure the target is judged on. */
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** Each round's ratio, in the order run. */
  readonly rounds: number[];
}

export function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function spreadOf(ratios: readonly number[]): Spread {
  return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios), rounds: [...ratios] };
}

/**
 * How far a median of round ratios is likely to be from the one another run would find, relative
 * to it: its standard error, 1.2533 σ / √n for n rounds, with σ taken from the rounds themselves as
 * 1.4826 times their median absolute deviation (so that one wild round does not make every run
 * look noisy). Undefined under 3 rounds (runs stored before the rounds were kept have none).
 */
export function medianNoise(rounds: readonly number[]): number | undefined {
  if (rounds.length < 3) return undefined;
  const m = median(rounds);
  const sigma = 1.4826 * median(rounds.map((r) => Math.abs(r - m)));
  return (1.2533 * sigma) / Math.sqrt(rounds.length) / m;
}

/** `0.52 (0.48–0.55)`: the median and, in brackets, the least and greatest round. */
export function formatSpread(s: Pick<Spread, 'median' | 'min' | 'max'>, digits = 2): string {
  return `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;
}

/**
 * `rounds` rounds of A then B, strictly alternating (A, B, A, B, ...); `ratio` makes one round's
 * ratio of its A and B. Returns every run of each side and the spread of the round ratios.
 */
export async function alternate<A, B>(
  runA: (round: number) => Promise<A>,
  runB: (round: number) => Promise<B>,
  ratio: (a: A, b: B) => number,
  rounds = ROUNDS,
): Promise<{ a: A[]; b: B[]; ratio: Spread }> {
  const a: A[] = [];
  const b: B[] = [];
  for (let round = 0; round < rounds; round++) {
    a.push(await runA(round));
    b.push(await runB(round));
  }
  return { a, b, ratio: spreadOf(a.map((x, i) => ratio(x, b[i]!))) };
}
