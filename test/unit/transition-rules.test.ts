/** The state rules of docs/design.md §4 as one table: every operation from every status. */
import { describe, expect, it } from 'vitest';
import { CorruptSubscriptionError, decide, TRANSITIONS, type Decision, type Operation } from '../../src/subscriptions/subscriptions.rules.js';

describe('decide: what pause and resume do from each status', () => {
  const table: [Operation, string, Decision, string | undefined][] = [
    ['PAUSE', 'fulfilled', 'apply', 'paused'],
    ['PAUSE', 'paused', 'noop', undefined],
    ['PAUSE', 'cancelled', 'reject', undefined],
    ['RESUME', 'paused', 'apply', 'fulfilled'],
    ['RESUME', 'fulfilled', 'noop', undefined],
    ['RESUME', 'cancelled', 'reject', undefined],
  ];

  it.each(table)('%s from %s: %s', (operation, status, decision, target) => {
    expect(decide(operation, status)).toBe(decision);
    if (target) expect(TRANSITIONS[operation]).toEqual({ from: status, to: target });
  });

  it.each(['PAUSE', 'RESUME'] as const)('%s from a status the model does not know is an internal error, not a decision', (operation) => {
    expect(() => decide(operation, 'teleported')).toThrow(CorruptSubscriptionError);
    expect(() => decide(operation, 'Paused')).toThrow(CorruptSubscriptionError);
  });
});
