/**
 * Tests that cannot hold on this run's server without one of its engine workarounds: when
 * DB_WORKAROUNDS switches that workaround off (docs/engine.md, "Running without the workarounds"),
 * they skip, and say why. On a server that does not need the workaround (MongoDB) they run.
 */
import { inject } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { describeWorkarounds, switchedOff, workaroundsFor, type WorkaroundName } from '../../src/db/workarounds.js';

/** The workarounds this run's server needs that DB_WORKAROUNDS switched off, each with why it is needed. */
function neededButOff(): Map<WorkaroundName, string> {
  const off = switchedOff(loadConfig({ DB_WORKAROUNDS: process.env.DB_WORKAROUNDS }).dbWorkarounds);
  const needed = describeWorkarounds(workaroundsFor(inject('dbCapabilities')));
  return new Map(needed.filter((w) => off.includes(w.workaround)).map((w) => [w.workaround, `without ${w.missing}: ${w.why}`]));
}

/**
 * Why a test that needs `workaround` cannot hold in this run (printed), or undefined when it can:
 * `it.skipIf(cannotHoldWithout('keyedMutex'))(…)`.
 */
export function cannotHoldWithout(workaround: WorkaroundName, test = ''): string | undefined {
  const why = neededButOff().get(workaround);
  if (why === undefined) return undefined;
  const reason = `needs the ${workaround} workaround, switched off by DB_WORKAROUNDS on a server ${why}`;
  console.log(`skipped${test ? ` (${test})` : ''}: ${reason}`);
  return reason;
}
