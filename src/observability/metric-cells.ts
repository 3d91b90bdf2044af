/**
 * One label set of a prom-client histogram or counter, counted on the request path without
 * prom-client's work per call. A prom-client child (`histogram.labels(...)`) still builds a labels
 * object, validates it, joins the label values into a hash string, looks that string up and
 * converts the bucket's bound (a number) into a property name on every observation: a few µs,
 * about six times per request (the request's duration and count, and for each database command
 * the pool's wait and the connection's hold). A cell does that once, then adds to the stored
 * counts directly.
 *
 * The counts are prom-client's own (its `hashMap` entries, which its types do not show), so the
 * exposition, `reset()` and the registry are untouched: the first observation, and the first
 * after a `reset()` replaced the map, goes through prom-client's child and the cell then finds
 * the entry it made. test/unit/metric-cells.test.ts checks that a cell and prom-client's child
 * give the same exposition for the same observations, so a release that stores them otherwise
 * fails there.
 */
import type { Counter, Histogram } from 'prom-client';

interface HistogramEntry {
  readonly labels: Readonly<Record<string, string | number>>;
  readonly bucketValues: Record<string, number>;
  sum: number;
  count: number;
}

interface CounterEntry {
  readonly labels: Readonly<Record<string, string | number>>;
  value: number;
}

/** What prom-client keeps of a metric (not in its types). */
interface Stored<E> {
  readonly hashMap: Record<string, E>;
}

function sameLabels(a: Readonly<Record<string, string | number>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(b);
  return Object.keys(a).length === keys.length && keys.every((k) => String(a[k]) === b[k]);
}

function entryOf<E extends { readonly labels: Readonly<Record<string, string | number>> }>(
  stored: Stored<E>,
  labels: Readonly<Record<string, string>>,
): E | undefined {
  return Object.values(stored.hashMap).find((entry) => sameLabels(entry.labels, labels));
}

/** Observes values into the histogram under `labels`, as `histogram.labels(labels).observe` does. */
export function histogramCell<L extends string>(
  histogram: Histogram<L>,
  labels: Readonly<Partial<Record<L, string>>>,
): (value: number) => void {
  const child = histogram.labels(labels);
  const stored = histogram as unknown as Stored<HistogramEntry> & { readonly upperBounds: readonly number[] };
  const bounds = stored.upperBounds;
  // prom-client keys the counts of each bucket by its bound as a property name.
  const keys = bounds.map(String);
  let entry: HistogramEntry | undefined;
  let map: object | undefined;
  return (value) => {
    // The first time, after a reset(), and for what prom-client refuses (NaN, ±Infinity: it throws): its own path.
    if (entry === undefined || map !== stored.hashMap || !Number.isFinite(value)) {
      child.observe(value);
      map = stored.hashMap;
      entry = entryOf(stored, labels as Readonly<Record<string, string>>);
      return;
    }
    entry.sum += value;
    entry.count += 1;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        entry.bucketValues[keys[i]!]! += 1;
        return;
      }
    }
  };
}

/** Adds one to the counter under `labels`, as `counter.labels(labels).inc()` does. */
export function counterCell<L extends string>(counter: Counter<L>, labels: Readonly<Partial<Record<L, string>>>): () => void {
  const child = counter.labels(labels);
  const stored = counter as unknown as Stored<CounterEntry>;
  let entry: CounterEntry | undefined;
  let map: object | undefined;
  return () => {
    if (entry === undefined || map !== stored.hashMap) {
      child.inc();
      map = stored.hashMap;
      entry = entryOf(stored, labels as Readonly<Record<string, string>>);
      return;
    }
    entry.value += 1;
  };
}
