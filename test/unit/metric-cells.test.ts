/**
 * A metric cell (src/observability/metric-cells.ts) counts into prom-client's own storage: for the
 * same observations it must give the exposition prom-client's child gives, before and after a
 * reset, for values in every bucket, on a bound, above the last bound, and beside other label sets.
 */
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { counterCell, histogramCell } from '../../src/observability/metric-cells.js';

const BUCKETS = [0.001, 0.005, 0.01, 0.5, 2];
const VALUES = [0, 0.0004, 0.001, 0.003, 0.005, 0.0100001, 0.2, 0.5, 1.7, 2, 2.5, 90];

function pair() {
  const registries = [new Registry(), new Registry()] as const;
  const histograms = registries.map(
    (r) => new Histogram({ name: 'h_seconds', help: 'h', labelNames: ['client'], buckets: BUCKETS, registers: [r] }),
  );
  const counters = registries.map((r) => new Counter({ name: 'c_total', help: 'c', labelNames: ['operation', 'status'], registers: [r] }));
  return { registries, histograms, counters };
}

describe('metric cells', () => {
  it('give the exposition prom-client gives for the same observations, also after a reset', async () => {
    const { registries, histograms, counters } = pair();
    const [promHistogram, cellHistogram] = histograms;
    const [promCounter, cellCounter] = counters;
    const observe = histogramCell(cellHistogram!, { client: 'request' });
    const inc = counterCell(cellCounter!, { operation: 'pauseSubscription', status: '200' });
    const other = histogramCell(cellHistogram!, { client: 'background' });
    const run = () => {
      for (const value of VALUES) {
        promHistogram!.labels('request').observe(value);
        observe(value);
        promCounter!.labels('pauseSubscription', '200').inc();
        inc();
      }
      promHistogram!.labels('background').observe(0.02);
      other(0.02);
      promCounter!.labels('pauseSubscription', '404').inc();
      cellCounter!.labels('pauseSubscription', '404').inc();
    };
    run();
    const [prom, cells] = await Promise.all(registries.map((r) => r.metrics()));
    expect(cells).toBe(prom);
    expect(prom).toContain('h_seconds_bucket{le="0.005",client="request"} 5');
    expect(prom).toContain('c_total{operation="pauseSubscription",status="200"} 12');

    for (const r of registries) r.resetMetrics();
    run();
    run();
    const [promAfter, cellsAfter] = await Promise.all(registries.map((r) => r.metrics()));
    expect(cellsAfter).toBe(promAfter);
    expect(promAfter).toContain('h_seconds_count{client="request"} 24');
  });

  it('refuse what prom-client refuses', () => {
    const { histograms } = pair();
    const observe = histogramCell(histograms[1]!, { client: 'request' });
    observe(1);
    expect(() => observe(Number.NaN)).toThrow(TypeError);
    expect(() => histograms[0]!.labels('request').observe(Number.NaN)).toThrow(TypeError);
  });
});
