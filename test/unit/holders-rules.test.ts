/**
 * A hold's rules (src/subscriptions/holders.rules.ts) and how a customer's own pause lives under a
 * hold (subscriptions.rules.ts, FIRE): a hold keeps a pending own pause, which falls due as the
 * customer's own; its release resumes only what it alone keeps paused then; only own pauses are
 * recorded for the pause policy. Pure, with times passed in.
 */
import { describe, expect, it } from 'vitest';
import {
  HOLD_RELEASE,
  holdRule,
  planHoldPause,
  releaseResumes,
  resumedByRelease,
  type HolderState,
} from '../../src/subscriptions/holders.rules.js';
import { NO_PAUSE_POLICY } from '../../src/pause-policy/pause-policy.rules.js';
import { recordingPause } from '../../src/subscriptions/subscription.document.js';
import { decide } from '../../src/subscriptions/subscriptions.rules.js';

const H = 'hold-1';
const day = (n: number) => new Date(Date.UTC(2026, 11, 1) + n * 86_400_000).toISOString().replace('Z', '000Z');
const RELEASE = day(3);

describe("a hold's pause and release", () => {
  it('pauses a fulfilled subscription with the hold as its only holder, keeping its own schedule, and records nothing for the policy', () => {
    const hold = planHoldPause();
    expect([hold.from, hold.already, hold.alreadyUnset]).toEqual(['fulfilled', 'paused', []]);
    expect(hold.whenFrom).toEqual({ status: 'paused', set: { ownPause: false }, unset: [], records: 'nothing' });
    expect(recordingPause({ $set: {} }, 'fulfilled', hold.whenFrom, day(0))).toEqual({ $set: {} });
  });

  it('its release resumes, keeping a pending own schedule, and records no resume for the cooldown', () => {
    expect(HOLD_RELEASE).toEqual({ status: 'fulfilled', set: {}, unset: ['ownPause', 'holdIds'], records: 'nothing' });
    expect(recordingPause({ $set: {} }, 'paused', HOLD_RELEASE, day(3))).toEqual({ $set: {} });
  });

  it('an explicit resume of one paused by its holds alone ends no own pause: nothing recorded for the cooldown', () => {
    const resume = decide({ status: 'paused', pauseAt: null, resumeAt: null, heldOnly: true }, { kind: 'RESUME' }).change!;
    expect(resume).toMatchObject({ status: 'fulfilled', records: 'nothing' });
    expect(recordingPause({ $set: {} }, 'paused', resume, day(1))).toEqual({ $set: {} });
  });

  it('an own pause and its end are recorded as before', () => {
    const pause = decide({ status: 'fulfilled', pauseAt: null, resumeAt: null }, { kind: 'PAUSE' }).change!;
    expect(recordingPause({}, 'fulfilled', pause, day(0)).$push).toEqual({ recentPauses: { $each: [day(0)], $slice: -100 } });
    const resume = decide({ status: 'paused', pauseAt: null, resumeAt: null }, { kind: 'RESUME' }).change!;
    expect(recordingPause({}, 'paused', resume, day(1)).$set).toEqual({ lastResumedAt: day(1) });
  });
});

describe('which subscriptions a release resumes', () => {
  const heldOnly = { status: 'paused', ownPause: false, holdIds: [H] } as const;
  // [what it is, the subscription, resumed by the release at RELEASE (read then), resumed by it (read before, for its notice)]
  const table: [string, HolderState, boolean, boolean][] = [
    ['paused by the hold alone', heldOnly, true, true],
    ['paused by the hold alone, under another hold too', { ...heldOnly, holdIds: [H, 'hold-2'] }, false, false],
    ['paused on its own', { status: 'paused', holdIds: [H] }, false, false],
    ['paused on its own until before the release', { status: 'paused', holdIds: [H], resumeAt: day(2) }, false, true],
    ['paused on its own until after the release', { status: 'paused', holdIds: [H], resumeAt: day(5) }, false, false],
    ['its own pause due before the release, no end', { ...heldOnly, pauseAt: day(1) }, false, false],
    ['its own pause due before the release, to end after', { ...heldOnly, pauseAt: day(1), resumeAt: day(10) }, false, false],
    ['its own pause due and ended before the release', { ...heldOnly, pauseAt: day(1), resumeAt: day(2) }, false, true],
    ['its own pause due after the release', { ...heldOnly, pauseAt: day(4), resumeAt: day(10) }, true, true],
    [
      'not paused yet by the hold, its own pause due before the release',
      { status: 'fulfilled', holdIds: [H], pauseAt: day(1) },
      false,
      false,
    ],
    ['not paused yet by the hold', { status: 'fulfilled', holdIds: [H] }, false, true],
    ['cancelled', { status: 'cancelled', holdIds: [H] }, false, false],
  ];
  it.each(table)('%s', (_name, state, atRelease, before) => {
    expect(releaseResumes(state, H, RELEASE)).toBe(atRelease);
    expect(resumedByRelease(state, H, RELEASE)).toBe(before);
  });
});

describe("a customer's own schedule under a hold (FIRE)", () => {
  const due = { status: 'paused', pauseAt: day(1), resumeAt: day(10), held: true, heldOnly: true } as const;

  it('its pauseAt falling due starts its own pause: ownPause goes, its resumeAt stays, the pause is recorded', () => {
    const ruling = decide(due, { kind: 'FIRE', now: day(1) });
    expect(ruling.outcome).toBe('applied');
    expect(ruling.change).toMatchObject({ status: 'paused', set: { resumeAt: day(10), nextScheduledAt: day(10) }, records: 'pause' });
    expect(ruling.change!.unset).toEqual(expect.arrayContaining(['pauseAt', 'ownPause']));
    expect(ruling.events).toEqual([]);
  });

  it('its pauseAt falling due is held to the pause policy like any pause that starts', () => {
    const policy = { ...NO_PAUSE_POLICY, maxPausesPerYear: 1 };
    const ruling = decide(due, { kind: 'FIRE', now: day(1), policy, history: { recentPauses: [day(-5)] } });
    expect(ruling.outcome).toBe('refused');
    expect(ruling.breach?.rule).toBe('maxPausesPerYear');
  });

  it('an explicit resume before its pauseAt comes drops the whole pending schedule, with its event, never leaving a pause without its end', () => {
    const ruling = decide({ status: 'paused', pauseAt: day(1), resumeAt: day(10), held: true, heldOnly: true }, { kind: 'RESUME' });
    expect(ruling.change!.unset).toEqual(expect.arrayContaining(['pauseAt', 'resumeAt', 'pauseReason', 'ownPause', 'holdIds']));
    expect(ruling.events).toEqual([{ kind: 'status' }, { kind: 'schedule_removed', removed: ['pauseAt', 'resumeAt'] }]);
  });

  it('its resumeAt falling due under the hold ends its own pause: the cooldown counts from then', () => {
    const ruling = decide({ status: 'paused', pauseAt: null, resumeAt: day(2), held: true }, { kind: 'FIRE', now: day(2) });
    expect(ruling.change).toMatchObject({ status: 'paused', set: { ownPause: false }, records: 'resume' });
    expect(recordingPause({}, 'paused', ruling.change!, day(2)).$set).toEqual({ lastResumedAt: day(2) });
  });
});

describe("a hold's command on each subscription it reaches (the hold's rows of the rules table)", () => {
  // [command, the subscription, changed by it, its move of the holders]
  const rows: [string, 'PAUSE' | 'RESUME', HolderState, boolean, string][] = [
    ['pause, fulfilled: paused, the hold joins its holders', 'PAUSE', { status: 'fulfilled' }, true, 'join'],
    ['pause, paused by its own: left paused, the hold joins its holders', 'PAUSE', { status: 'paused' }, false, 'join'],
    [
      'pause, held by another: left paused, the hold joins its holders',
      'PAUSE',
      { status: 'paused', ownPause: false, holdIds: ['h0'] },
      false,
      'join',
    ],
    ['pause, cancelled: left alone, not covered', 'PAUSE', { status: 'cancelled' }, false, 'none'],
    ['release, held by it alone: resumed', 'RESUME', { status: 'paused', ownPause: false, holdIds: [H] }, true, 'leave'],
    [
      'release, held by another too: left paused, the hold leaves',
      'RESUME',
      { status: 'paused', ownPause: false, holdIds: [H, 'h2'] },
      false,
      'leave',
    ],
    ['release, paused by its own too: left paused, the hold leaves', 'RESUME', { status: 'paused', holdIds: [H] }, false, 'leave'],
    [
      'release, its own pauseAt due: left for the schedule workers',
      'RESUME',
      { status: 'paused', ownPause: false, holdIds: [H], pauseAt: day(2) },
      false,
      'leave',
    ],
    ['release, fulfilled (resumed explicitly): the hold leaves', 'RESUME', { status: 'fulfilled', holdIds: [H] }, false, 'leave'],
  ];
  it.each(rows)('%s', (_, operation, state, changed, move) => {
    const rule = holdRule(operation, H, RELEASE);
    expect(rule.changes(state)).toBe(changed);
    expect(rule.holders(state)).toBe(move);
  });

  it("writes the pause's and the release's changes, from fulfilled and from paused", () => {
    expect(holdRule('PAUSE', H, RELEASE)).toMatchObject({ from: 'fulfilled', change: planHoldPause().whenFrom, rearmsNotice: false });
    expect(holdRule('RESUME', H, RELEASE)).toMatchObject({ from: 'paused', change: HOLD_RELEASE, rearmsNotice: true });
  });
});
