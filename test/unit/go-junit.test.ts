/** The Go scenarios' `go test -json` events, read as the clients suite counts them (scripts/clients/go.ts). */
import { describe, expect, it } from 'vitest';
import { goJunit } from '../../scripts/clients/go.js';
import { junitCaseCounts } from '../../scripts/test-summary.js';

const event = (Action: string, Test?: string, Output?: string) =>
  JSON.stringify({ Action, Package: 'merchant-scenarios', ...(Test ? { Test } : {}), ...(Output ? { Output } : {}) });

describe('the Go scenarios report', () => {
  it('counts each passed, failed and skipped test once, with a failure’s output in the report', () => {
    const events = [
      event('run', 'TestA'),
      event('pass', 'TestA'),
      event('run', 'TestB'),
      event('output', 'TestB', '    scenarios_test.go:9: 404 0020, got 400 0040\n'),
      event('fail', 'TestB'),
      event('output', 'TestC', '    the mock sends no webhooks\n'),
      event('skip', 'TestC'),
      event('output', undefined, 'FAIL\n'),
      event('fail'),
    ].join('\n');
    const { xml, lines } = goJunit(events);
    expect(junitCaseCounts(xml)).toEqual({ passed: 1, failed: 1, skipped: 1 });
    expect(xml).toContain('404 0020, got 400 0040');
    expect(lines).toHaveLength(3);
    expect(lines.join('\n')).not.toMatch(/^(ok|PASS|FAIL)\b/m);
  });

  it('reports no test at all when nothing ran (a build failure), so the suite counts it as failed', () => {
    expect(goJunit(['# merchant-scenarios', 'scenarios_test.go:3: undefined: x', event('fail')].join('\n')).lines).toEqual([]);
  });
});
