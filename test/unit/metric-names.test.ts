/**
 * The metrics a process registers are the ones src/observability/metric-names.ts lists (the list the alert
 * rules, the dashboard and docs/operations.md are checked against by `npm run check`): the same
 * names, types and label names, no more and no fewer.
 */
import { describe, expect, it } from 'vitest';
import { SERVICE_METRICS } from '../../src/observability/metric-names.js';
import { Metrics } from '../../src/observability/metrics.js';

describe('registered metrics', () => {
  it('are exactly the service metrics of observability/metric-names.ts, with their types and labels', async () => {
    const metrics = new Metrics();
    const registered = (await metrics.registry.getMetricsAsJSON()).filter((m) => m.name.startsWith('subsvc_'));
    const labelsOf = (name: string) =>
      [...((metrics.registry.getSingleMetric(name) as unknown as { labelNames: readonly string[] }).labelNames ?? [])].sort();
    const seen = Object.fromEntries(registered.map((m) => [m.name, { type: String(m.type), labels: labelsOf(m.name) }]));
    const listed = Object.fromEntries(
      Object.entries(SERVICE_METRICS).map(([name, m]) => [name, { type: m.type, labels: [...m.labels].sort() }]),
    );
    expect(seen).toEqual(listed);
  });
});
