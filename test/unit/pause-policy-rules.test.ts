/** The pause policy's rules (src/subscriptions/subscriptions.rules.ts, docs/design.md §11): pure, with `now` passed in. */
import { describe, expect, it } from 'vitest';
import {
  NO_PAUSE_POLICY,
  decide,
  pauseVerdict,
  pausesInYearBefore,
  type PausePolicy,
} from '../../src/subscriptions/subscriptions.rules.js';

const NOW = '2026-11-25T12:00:00.000000Z';
const policy = (p: Partial<PausePolicy>): PausePolicy => ({ ...NO_PAUSE_POLICY, ...p });
const daysFromNow = (days: number) => new Date(Date.parse(NOW) + days * 86_400_000).toISOString().replace('Z', '000Z');

describe('pauseVerdict', () => {
  it('every rule off: the schedule as sent, whatever the history', () => {
    expect(pauseVerdict(NO_PAUSE_POLICY, 'fulfilled', undefined, [daysFromNow(-1), daysFromNow(-2)], NOW)).toEqual({ schedule: undefined });
  });

  it('maxPauseDays: a resumeAt past the limit from the pause start breaks it; at the limit it does not', () => {
    const p = policy({ maxPauseDays: 10 });
    expect(pauseVerdict(p, 'fulfilled', { resumeAt: daysFromNow(10) }, [], NOW)).toEqual({ schedule: { resumeAt: daysFromNow(10) } });
    expect(pauseVerdict(p, 'fulfilled', { resumeAt: daysFromNow(10.5) }, [], NOW)).toMatchObject({
      breach: { rule: 'maxPauseDays', detail: `maxPauseDays is 10; this pause would last 11 days (resumeAt ${daysFromNow(10.5)}).` },
    });
    expect(pauseVerdict(p, 'fulfilled', { pauseAt: daysFromNow(5), resumeAt: daysFromNow(15) }, [], NOW)).toEqual({
      schedule: { pauseAt: daysFromNow(5), resumeAt: daysFromNow(15) },
    });
  });

  it('maxPauseDays fills resumeAt from the pause start, which satisfies requireResumeAt', () => {
    const p = policy({ maxPauseDays: 7, requireResumeAt: true });
    expect(pauseVerdict(p, 'fulfilled', undefined, [], NOW)).toEqual({ schedule: { resumeAt: daysFromNow(7) } });
    expect(pauseVerdict(p, 'fulfilled', { pauseAt: daysFromNow(1), reason: 'r' }, [], NOW)).toEqual({
      schedule: { pauseAt: daysFromNow(1), reason: 'r', resumeAt: daysFromNow(8) },
    });
  });

  it('requireResumeAt alone: a pause without resumeAt breaks it', () => {
    expect(pauseVerdict(policy({ requireResumeAt: true }), 'fulfilled', { reason: 'x' }, [], NOW)).toMatchObject({
      breach: { rule: 'requireResumeAt' },
    });
  });

  it('maxPausesPerYear counts the pauses in the 365 days before now: 364 days back counts, 366 does not; 0 refuses every pause', () => {
    const history = [daysFromNow(-366), daysFromNow(-364), daysFromNow(-1)];
    expect(pausesInYearBefore(history, NOW)).toBe(2);
    expect(pauseVerdict(policy({ maxPausesPerYear: 2 }), 'fulfilled', undefined, history, NOW)).toMatchObject({
      breach: { rule: 'maxPausesPerYear', detail: 'maxPausesPerYear is 2; this subscription was paused 2 times in the 365 days before.' },
    });
    expect(pauseVerdict(policy({ maxPausesPerYear: 3 }), 'fulfilled', undefined, history, NOW)).toEqual({ schedule: undefined });
    expect(pauseVerdict(policy({ maxPausesPerYear: 0 }), 'fulfilled', undefined, [], NOW)).toMatchObject({
      breach: { rule: 'maxPausesPerYear' },
    });
  });

  it('a paused subscription paused again starts nothing: only a resumeAt sent is held to maxPauseDays; a cancelled one is left to decide', () => {
    const strict = policy({ maxPauseDays: 5, maxPausesPerYear: 0, requireResumeAt: true });
    expect(pauseVerdict(strict, 'paused', undefined, [], NOW)).toEqual({ schedule: undefined });
    expect(pauseVerdict(strict, 'paused', { resumeAt: daysFromNow(6) }, [], NOW)).toMatchObject({ breach: { rule: 'maxPauseDays' } });
    expect(pauseVerdict(strict, 'cancelled', undefined, [], NOW)).toEqual({ schedule: undefined });
  });
});

describe('a due pause under a policy (FIRE)', () => {
  const due = { status: 'fulfilled', pauseAt: daysFromNow(-0.001), resumeAt: daysFromNow(60) };

  it('breaking it: refused, its schedule removed with a schedule_removed event, status unchanged', () => {
    const ruling = decide(due, { kind: 'FIRE', now: NOW, policy: policy({ maxPauseDays: 30 }), recentPauses: [] });
    expect(ruling).toMatchObject({ outcome: 'refused', due: 'pause', breach: { rule: 'maxPauseDays' }, touches: true, event: undefined });
    expect(ruling.change).toMatchObject({ status: 'fulfilled', set: {} });
    expect(ruling.events).toEqual([{ kind: 'schedule_removed', removed: ['pauseAt', 'resumeAt'] }]);
  });

  it('without resumeAt under maxPauseDays: applied, resumeAt set that many days after now, with resume_scheduled after the status event', () => {
    const ruling = decide({ ...due, resumeAt: null }, { kind: 'FIRE', now: NOW, policy: policy({ maxPauseDays: 3 }), recentPauses: [] });
    expect(ruling).toMatchObject({
      outcome: 'applied',
      change: { status: 'paused', set: { resumeAt: daysFromNow(3), nextScheduledAt: daysFromNow(3) } },
    });
    expect(ruling.events).toEqual([{ kind: 'status' }, { kind: 'resume_scheduled' }]);
  });

  it('no policy: exactly the ruling of before policies', () => {
    expect(decide(due, { kind: 'FIRE', now: NOW, policy: NO_PAUSE_POLICY, recentPauses: [NOW] })).toEqual(
      decide(due, { kind: 'FIRE', now: NOW }),
    );
  });
});
