/**
 * A run's bulk commands walked for one subscription (src/subscriptions/bulk-commands.rules.ts):
 * the same outcomes as the commands applied one after another, whatever marks earlier runs left.
 */
import { describe, expect, it } from 'vitest';
import { commandOutcome, walkCommands } from '../../src/subscriptions/bulk-commands.rules.js';
import { planCommand } from '../../src/subscriptions/subscriptions.rules.js';

const PAUSE = planCommand('PAUSE', undefined, undefined);
const RESUME = planCommand('RESUME', undefined, undefined);

describe('walkCommands', () => {
  it('when three pauses name an active subscription, the first applies and the two others are no-ops', () => {
    expect(walkCommands(PAUSE, 'fulfilled', [undefined, undefined, undefined])).toEqual({
      status: 'paused',
      applied: 0,
      reached: [0, 1, 2],
      marks: ['applied', 'noop', 'noop'],
    });
  });

  it('when it is already paused, every pause is a no-op and none applies', () => {
    expect(walkCommands(PAUSE, 'paused', [undefined, undefined])).toEqual({
      status: 'paused',
      applied: -1,
      reached: [0, 1],
      marks: ['noop', 'noop'],
    });
  });

  it('a command that left its mark in an earlier run keeps it and is not written again; one that does not name it has none', () => {
    expect(walkCommands(RESUME, 'fulfilled', ['applied', 'unnamed', undefined])).toEqual({
      status: 'fulfilled',
      applied: -1,
      reached: [2],
      marks: ['applied', undefined, 'noop'],
    });
  });

  it('a command that does not name it is passed over: the next one applies, and the later one is a no-op', () => {
    expect(walkCommands(PAUSE, 'fulfilled', ['unnamed', undefined, 'noop', undefined])).toEqual({
      status: 'paused',
      applied: 1,
      reached: [1, 3],
      marks: [undefined, 'applied', 'noop', 'noop'],
    });
  });

  it('a cancelled subscription is reached by none: each is left to commandOutcome, which skips it', () => {
    const walk = walkCommands(PAUSE, 'cancelled', [undefined, undefined]);
    expect(walk).toEqual({ status: 'cancelled', applied: -1, reached: [], marks: [undefined, undefined] });
    expect(commandOutcome('PAUSE', { status: walk.status, mark: walk.marks[0] })).toEqual({ outcome: 'skipped', reason: 'cancelled' });
  });
});

describe('commandOutcome', () => {
  it('a subscription not found is skipped as not_found; one marked has its mark; one in the from status has none yet', () => {
    expect(commandOutcome('RESUME', undefined)).toEqual({ outcome: 'skipped', reason: 'not_found' });
    expect(commandOutcome('RESUME', { status: 'fulfilled', mark: 'applied' })).toEqual({ outcome: 'applied' });
    expect(commandOutcome('RESUME', { status: 'paused', mark: undefined })).toBeUndefined();
  });

  it('a status the rules do not know fails the command with the reason', () => {
    const outcome = commandOutcome('PAUSE', { status: 'archived' as never, mark: undefined });
    expect(outcome).toEqual({ outcome: 'failed', reason: 'unknown subscription status "archived"' });
  });
});
