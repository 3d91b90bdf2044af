/** The pause policy's rules (src/pause-policy/pause-policy.rules.ts, docs/design.md §11): pure, with `now` passed in. */
import { describe, expect, it } from 'vitest';
import { NO_PAUSE_POLICY, pausesInYearBefore, pauseVerdict, type PausePolicy } from '../../src/pause-policy/pause-policy.rules.js';
import { decide } from '../../src/subscriptions/subscriptions.rules.js';

const NOW = '2026-11-25T12:00:00.000000Z';
const NONE = { recentPauses: [] };
const policy = (p: Partial<PausePolicy>): PausePolicy => ({ ...NO_PAUSE_POLICY, ...p });
const daysFromNow = (days: number) => new Date(Date.parse(NOW) + days * 86_400_000).toISOString().replace('Z', '000Z');

describe('pauseVerdict', () => {
  it('every rule off: the schedule as sent, whatever the history', () => {
    expect(pauseVerdict(NO_PAUSE_POLICY, 'fulfilled', undefined, { recentPauses: [daysFromNow(-1), daysFromNow(-2)] }, NOW)).toEqual({
      schedule: undefined,
    });
  });

  it('maxPauseDays: a resumeAt past the limit from the pause start breaks it; at the limit it does not', () => {
    const p = policy({ maxPauseDays: 10 });
    expect(pauseVerdict(p, 'fulfilled', { resumeAt: daysFromNow(10) }, NONE, NOW)).toEqual({ schedule: { resumeAt: daysFromNow(10) } });
    expect(pauseVerdict(p, 'fulfilled', { resumeAt: daysFromNow(10.5) }, NONE, NOW)).toMatchObject({
      breach: { rule: 'maxPauseDays', detail: `maxPauseDays is 10; this pause would last 11 days (resumeAt ${daysFromNow(10.5)}).` },
    });
    expect(pauseVerdict(p, 'fulfilled', { pauseAt: daysFromNow(5), resumeAt: daysFromNow(15) }, NONE, NOW)).toEqual({
      schedule: { pauseAt: daysFromNow(5), resumeAt: daysFromNow(15) },
    });
  });

  it('maxPauseDays fills resumeAt from the pause start, which satisfies requireResumeAt', () => {
    const p = policy({ maxPauseDays: 7, requireResumeAt: true });
    expect(pauseVerdict(p, 'fulfilled', undefined, NONE, NOW)).toEqual({ schedule: { resumeAt: daysFromNow(7) } });
    expect(pauseVerdict(p, 'fulfilled', { pauseAt: daysFromNow(1), reason: 'r' }, NONE, NOW)).toEqual({
      schedule: { pauseAt: daysFromNow(1), reason: 'r', resumeAt: daysFromNow(8) },
    });
  });

  it('requireResumeAt alone: a pause without resumeAt breaks it', () => {
    expect(pauseVerdict(policy({ requireResumeAt: true }), 'fulfilled', { reason: 'x' }, NONE, NOW)).toMatchObject({
      breach: { rule: 'requireResumeAt' },
    });
  });

  it('maxPausesPerYear counts the pauses in the 365 days before now: 364 days back counts, 366 does not; 0 refuses every pause', () => {
    const history = [daysFromNow(-366), daysFromNow(-364), daysFromNow(-1)];
    expect(pausesInYearBefore(history, NOW)).toBe(2);
    expect(pauseVerdict(policy({ maxPausesPerYear: 2 }), 'fulfilled', undefined, { recentPauses: history }, NOW)).toMatchObject({
      breach: { rule: 'maxPausesPerYear', detail: 'maxPausesPerYear is 2; this subscription was paused 2 times in the 365 days before.' },
    });
    expect(pauseVerdict(policy({ maxPausesPerYear: 3 }), 'fulfilled', undefined, { recentPauses: history }, NOW)).toEqual({
      schedule: undefined,
    });
    expect(pauseVerdict(policy({ maxPausesPerYear: 0 }), 'fulfilled', undefined, NONE, NOW)).toMatchObject({
      breach: { rule: 'maxPausesPerYear' },
    });
  });

  it('maxPausesPerYear says from when a pause fits again: when the oldest pause past the limit leaves the 365 days; never under 0', () => {
    const history = [daysFromNow(-400), daysFromNow(-1), daysFromNow(-300), daysFromNow(-100)];
    expect(pauseVerdict(policy({ maxPausesPerYear: 2 }), 'fulfilled', undefined, { recentPauses: history }, NOW)).toMatchObject({
      breach: { rule: 'maxPausesPerYear', allowedFrom: daysFromNow(-100 + 365) },
    });
    expect(pauseVerdict(policy({ maxPausesPerYear: 3 }), 'fulfilled', undefined, { recentPauses: history }, NOW)).toMatchObject({
      breach: { rule: 'maxPausesPerYear', allowedFrom: daysFromNow(-300 + 365) },
    });
    const never = pauseVerdict(policy({ maxPausesPerYear: 0 }), 'fulfilled', undefined, { recentPauses: history }, NOW);
    expect(never).toMatchObject({ breach: { rule: 'maxPausesPerYear' } });
    expect('breach' in never && never.breach.allowedFrom).toBeUndefined();
  });

  it('a paused subscription paused again starts nothing: only a resumeAt sent is held to maxPauseDays; a cancelled one is left to decide', () => {
    const strict = policy({ maxPauseDays: 5, maxPausesPerYear: 0, requireResumeAt: true });
    expect(pauseVerdict(strict, 'paused', undefined, NONE, NOW)).toEqual({ schedule: undefined });
    expect(pauseVerdict(strict, 'paused', { resumeAt: daysFromNow(6) }, NONE, NOW)).toMatchObject({ breach: { rule: 'maxPauseDays' } });
    expect(pauseVerdict(strict, 'cancelled', undefined, NONE, NOW)).toEqual({ schedule: undefined });
  });
});

describe('pauseVerdict: cooldownDays and allowedPauseDays', () => {
  const resumed = (days: number) => ({ recentPauses: [], lastResumedAt: daysFromNow(days) });

  it('cooldownDays: a pause that starts within that many days after the last resume breaks it; at the limit it does not', () => {
    const p = policy({ cooldownDays: 30 });
    expect(pauseVerdict(p, 'fulfilled', undefined, resumed(-29.5), NOW)).toEqual({
      breach: {
        rule: 'cooldownDays',
        detail: `cooldownDays is 30; this subscription was last resumed at ${daysFromNow(-29.5)} and can be paused from ${daysFromNow(0.5)}.`,
        allowedFrom: daysFromNow(0.5),
      },
    });
    expect(pauseVerdict(p, 'fulfilled', undefined, resumed(-30), NOW)).toEqual({ schedule: undefined });
    expect(pauseVerdict(p, 'fulfilled', undefined, NONE, NOW)).toEqual({ schedule: undefined });
  });

  it('cooldownDays counts to the pause start: a pauseAt past the cooldown passes, one inside it does not', () => {
    const p = policy({ cooldownDays: 10 });
    expect(pauseVerdict(p, 'fulfilled', { pauseAt: daysFromNow(8) }, resumed(-2), NOW)).toEqual({ schedule: { pauseAt: daysFromNow(8) } });
    expect(pauseVerdict(p, 'fulfilled', { pauseAt: daysFromNow(7) }, resumed(-2), NOW)).toMatchObject({ breach: { rule: 'cooldownDays' } });
  });

  it('allowedPauseDays: the length from the pause start, rounded up, must be listed', () => {
    const p = policy({ allowedPauseDays: [7, 30] });
    expect(pauseVerdict(p, 'fulfilled', { resumeAt: daysFromNow(30) }, NONE, NOW)).toEqual({ schedule: { resumeAt: daysFromNow(30) } });
    expect(pauseVerdict(p, 'fulfilled', { resumeAt: daysFromNow(6.01) }, NONE, NOW)).toEqual({ schedule: { resumeAt: daysFromNow(6.01) } });
    expect(pauseVerdict(p, 'fulfilled', { resumeAt: daysFromNow(7.01) }, NONE, NOW)).toEqual({
      breach: {
        rule: 'allowedPauseDays',
        detail: `allowedPauseDays is [7, 30]; this pause would last 8 days (resumeAt ${daysFromNow(7.01)}).`,
      },
    });
    expect(pauseVerdict(p, 'fulfilled', { pauseAt: daysFromNow(3), resumeAt: daysFromNow(10) }, NONE, NOW)).toEqual({
      schedule: { pauseAt: daysFromNow(3), resumeAt: daysFromNow(10) },
    });
  });

  it('allowedPauseDays: no resumeAt breaks it, unless maxPauseDays gives one of a listed length', () => {
    expect(pauseVerdict(policy({ allowedPauseDays: [7] }), 'fulfilled', undefined, NONE, NOW)).toEqual({
      breach: { rule: 'allowedPauseDays', detail: 'allowedPauseDays is [7]; this pause has no resumeAt.' },
    });
    expect(pauseVerdict(policy({ allowedPauseDays: [7, 14], maxPauseDays: 14 }), 'fulfilled', undefined, NONE, NOW)).toEqual({
      schedule: { resumeAt: daysFromNow(14) },
    });
    expect(pauseVerdict(policy({ allowedPauseDays: [7], maxPauseDays: 14 }), 'fulfilled', undefined, NONE, NOW)).toMatchObject({
      breach: {
        rule: 'allowedPauseDays',
        detail: 'allowedPauseDays is [7]; this pause has no resumeAt, and maxPauseDays would give it 14 days.',
      },
    });
  });

  it('a paused subscription paused again: cooldownDays does not apply; a resumeAt sent is held to allowedPauseDays from now', () => {
    const p = policy({ cooldownDays: 30, allowedPauseDays: [7] });
    expect(pauseVerdict(p, 'paused', undefined, resumed(-1), NOW)).toEqual({ schedule: undefined });
    expect(pauseVerdict(p, 'paused', { resumeAt: daysFromNow(7) }, resumed(-1), NOW)).toEqual({ schedule: { resumeAt: daysFromNow(7) } });
    expect(pauseVerdict(p, 'paused', { resumeAt: daysFromNow(8) }, resumed(-1), NOW)).toMatchObject({
      breach: { rule: 'allowedPauseDays' },
    });
  });

  it('the first broken rule is reported: maxPauseDays, requireResumeAt, allowedPauseDays, cooldownDays, maxPausesPerYear', () => {
    const all = policy({ maxPauseDays: 20, allowedPauseDays: [10], cooldownDays: 5, maxPausesPerYear: 0 });
    const history = { recentPauses: [], lastResumedAt: daysFromNow(-1) };
    const ruleOf = (p: PausePolicy, schedule?: { resumeAt: string }) => {
      const verdict = pauseVerdict(p, 'fulfilled', schedule, history, NOW);
      return 'breach' in verdict ? verdict.breach.rule : 'none';
    };
    expect(ruleOf(all, { resumeAt: daysFromNow(25) })).toBe('maxPauseDays');
    expect(ruleOf(policy({ requireResumeAt: true, allowedPauseDays: [10] }))).toBe('requireResumeAt');
    expect(ruleOf(all, { resumeAt: daysFromNow(15) })).toBe('allowedPauseDays');
    expect(ruleOf(all, { resumeAt: daysFromNow(10) })).toBe('cooldownDays');
    expect(ruleOf({ ...all, cooldownDays: null }, { resumeAt: daysFromNow(10) })).toBe('maxPausesPerYear');
    expect(ruleOf({ ...all, cooldownDays: null, maxPausesPerYear: null }, { resumeAt: daysFromNow(10) })).toBe('none');
  });
});

describe('a due pause under a policy (FIRE)', () => {
  const due = { status: 'fulfilled', pauseAt: daysFromNow(-0.001), resumeAt: daysFromNow(60) };

  it('breaking it: refused, its schedule removed with a schedule_removed event, status unchanged', () => {
    const ruling = decide(due, { kind: 'FIRE', now: NOW, policy: policy({ maxPauseDays: 30 }), history: NONE });
    expect(ruling).toMatchObject({ outcome: 'refused', due: 'pause', breach: { rule: 'maxPauseDays' }, touches: true, event: undefined });
    expect(ruling.change).toMatchObject({ status: 'fulfilled', set: {} });
    expect(ruling.events).toEqual([{ kind: 'schedule_removed', removed: ['pauseAt', 'resumeAt'] }]);
  });

  it('without resumeAt under maxPauseDays: applied, resumeAt set that many days after now, with resume_scheduled after the status event', () => {
    const ruling = decide({ ...due, resumeAt: null }, { kind: 'FIRE', now: NOW, policy: policy({ maxPauseDays: 3 }), history: NONE });
    expect(ruling).toMatchObject({
      outcome: 'applied',
      change: { status: 'paused', set: { resumeAt: daysFromNow(3), nextScheduledAt: daysFromNow(3) } },
    });
    expect(ruling.events).toEqual([{ kind: 'status' }, { kind: 'resume_scheduled' }]);
  });

  it('within the cooldown when due: refused, its schedule removed, the breach naming cooldownDays', () => {
    const ruling = decide(due, {
      kind: 'FIRE',
      now: NOW,
      policy: policy({ cooldownDays: 7 }),
      history: { recentPauses: [], lastResumedAt: daysFromNow(-3) },
    });
    expect(ruling).toMatchObject({ outcome: 'refused', due: 'pause', breach: { rule: 'cooldownDays' } });
    expect(ruling.events).toEqual([{ kind: 'schedule_removed', removed: ['pauseAt', 'resumeAt'] }]);
  });

  it('a due pause whose length from now is not allowed: refused under allowedPauseDays', () => {
    const ruling = decide(due, { kind: 'FIRE', now: NOW, policy: policy({ allowedPauseDays: [30] }), history: NONE });
    expect(ruling).toMatchObject({ outcome: 'refused', breach: { rule: 'allowedPauseDays' } });
    expect(decide(due, { kind: 'FIRE', now: NOW, policy: policy({ allowedPauseDays: [60] }), history: NONE })).toMatchObject({
      outcome: 'applied',
    });
  });

  it('no policy: exactly the ruling of before policies', () => {
    expect(decide(due, { kind: 'FIRE', now: NOW, policy: NO_PAUSE_POLICY, history: { recentPauses: [NOW], lastResumedAt: NOW } })).toEqual(
      decide(due, { kind: 'FIRE', now: NOW }),
    );
  });
});
