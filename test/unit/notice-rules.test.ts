/**
 * The notice before an automatic resume in the rules (src/subscriptions/notice.rules.ts, docs/design.md §9
 * "Notices"): what a pause that sets a resumeAt stores under resumeNoticeHours, what a due schedule
 * does with a pending notice, and what a resume or dropped schedule leaves of it.
 */
import { describe, expect, it } from 'vitest';
import { noticeDueAt, noticeTimeOf } from '../../src/subscriptions/notice.rules.js';
import { NO_PAUSE_POLICY } from '../../src/pause-policy/pause-policy.rules.js';
import { decide, type Command } from '../../src/subscriptions/subscriptions.rules.js';

const NOW = '2026-06-01T00:00:00.000000Z';
const IN_A_DAY = '2026-06-02T00:00:00.000000Z';
const IN_TEN_DAYS = '2026-06-11T00:00:00.000000Z';
const notice = (hours: number | null) => ({ hours, now: NOW });
const fire = (now: string, resumeNoticeHours: number | null = null): Command => ({
  kind: 'FIRE',
  now,
  policy: { ...NO_PAUSE_POLICY, resumeNoticeHours },
});

describe('a pause that sets a resumeAt', () => {
  it('stores its notice time, which becomes the next pending time, and records no notice yet', () => {
    const ruling = decide(
      { status: 'fulfilled', pauseAt: null, resumeAt: null },
      { kind: 'PAUSE', schedule: { resumeAt: IN_TEN_DAYS }, notice: notice(24) },
    );
    expect(ruling.change?.set).toEqual({
      resumeAt: IN_TEN_DAYS,
      noticeAt: '2026-06-10T00:00:00.000000Z',
      nextScheduledAt: '2026-06-10T00:00:00.000000Z',
    });
    expect(ruling.change?.unset).toContain('noticeFor');
    expect(ruling.events.map((e) => e.kind)).toEqual(['status', 'resume_scheduled']);
  });

  it('inside the window, is noticed at once: noticeFor set, a resume_upcoming event after its others', () => {
    const ruling = decide(
      { status: 'paused', pauseAt: null, resumeAt: IN_TEN_DAYS },
      { kind: 'PAUSE', schedule: { resumeAt: IN_A_DAY }, notice: notice(48) },
    );
    expect(ruling.change?.set).toMatchObject({ resumeAt: IN_A_DAY, noticeFor: IN_A_DAY, nextScheduledAt: IN_A_DAY });
    expect(ruling.change?.unset).toContain('noticeAt');
    expect(ruling.events.map((e) => e.kind)).toEqual(['resume_scheduled', 'resume_upcoming']);
  });

  it('with notices off, stores none and drops any notice of the resume it replaces', () => {
    const ruling = decide(
      { status: 'paused', pauseAt: null, resumeAt: IN_A_DAY },
      { kind: 'PAUSE', schedule: { resumeAt: IN_TEN_DAYS }, notice: notice(null) },
    );
    expect(ruling.change?.set).toEqual({ resumeAt: IN_TEN_DAYS, nextScheduledAt: IN_TEN_DAYS });
    expect(ruling.change?.unset).toEqual(expect.arrayContaining(['noticeAt', 'noticeFor']));
  });
});

describe('a due schedule with a notice', () => {
  const noticeAt = noticeTimeOf(IN_TEN_DAYS, 24);

  it('a due notice records resume_upcoming, sets noticeFor and changes no modifiedAt', () => {
    const ruling = decide({ status: 'paused', pauseAt: null, resumeAt: IN_TEN_DAYS, noticeAt }, fire(noticeAt, 24));
    expect(ruling).toMatchObject({ outcome: 'applied', touches: false, due: 'notice', events: [{ kind: 'resume_upcoming' }] });
    expect(ruling.change).toEqual({ status: 'paused', set: { noticeFor: IN_TEN_DAYS, nextScheduledAt: IN_TEN_DAYS }, unset: ['noticeAt'] });
  });

  it('before its time, only corrects the next pending time to it', () => {
    const ruling = decide({ status: 'paused', pauseAt: null, resumeAt: IN_TEN_DAYS, noticeAt }, fire(NOW, 24));
    expect(ruling).toMatchObject({ outcome: 'corrected', events: [] });
    expect(ruling.change?.set).toEqual({ nextScheduledAt: noticeAt });
  });

  it('a due pause keeps the notice of the resumeAt it keeps', () => {
    const ruling = decide({ status: 'fulfilled', pauseAt: NOW, resumeAt: IN_TEN_DAYS, noticeAt }, fire(NOW, 24));
    expect(ruling.change?.set).toEqual({ resumeAt: IN_TEN_DAYS, nextScheduledAt: noticeAt });
    expect(ruling.change?.unset).not.toContain('noticeAt');
    expect(ruling.change?.unset).not.toContain('noticeFor');
  });

  it('a due pause given its resumeAt by maxPauseDays gets that resume a notice', () => {
    const command: Command = { kind: 'FIRE', now: NOW, policy: { ...NO_PAUSE_POLICY, maxPauseDays: 10, resumeNoticeHours: 24 } };
    const ruling = decide({ status: 'fulfilled', pauseAt: NOW, resumeAt: null }, command);
    expect(ruling.change?.set).toMatchObject({ resumeAt: IN_TEN_DAYS, noticeAt, nextScheduledAt: noticeAt });
    // The reason shows once paused, as with a resumeAt given.
    expect(ruling.change?.unset).not.toContain('pauseReason');
    expect(ruling.events.map((e) => e.kind)).toEqual(['status', 'resume_scheduled']);
  });

  it('under a hold, a due notice waits, pending, until its resume: no event, the next pending time its resumeAt', () => {
    const ruling = decide({ status: 'paused', pauseAt: null, resumeAt: IN_TEN_DAYS, noticeAt, held: true }, fire(noticeAt, 24));
    expect(ruling).toMatchObject({ outcome: 'corrected', touches: false, events: [] });
    expect(ruling.change).toEqual({ status: 'paused', set: { nextScheduledAt: IN_TEN_DAYS }, unset: [] });
  });

  it('under a hold, its resume falling due with its notice still waiting ends its own pause and drops the notice', () => {
    const ruling = decide({ status: 'paused', pauseAt: null, resumeAt: IN_TEN_DAYS, noticeAt, held: true }, fire(IN_TEN_DAYS, 24));
    expect(ruling).toMatchObject({ outcome: 'applied', due: 'resume', events: [] });
    expect(ruling.change?.set).toEqual({ ownPause: false });
    expect(ruling.change?.unset).toEqual(expect.arrayContaining(['noticeAt', 'noticeFor', 'resumeAt']));
  });

  it('the due resume drops what is left of the notice', () => {
    const ruling = decide({ status: 'paused', pauseAt: null, resumeAt: IN_TEN_DAYS, noticeAt: null }, fire(IN_TEN_DAYS, 24));
    expect(ruling).toMatchObject({ outcome: 'applied', due: 'resume' });
    expect(ruling.change?.unset).toEqual(expect.arrayContaining(['noticeAt', 'noticeFor']));
  });
});

describe('a resume and a dropped schedule', () => {
  it.each<[string, Command]>([
    ['resume', { kind: 'RESUME' }],
    ['DELETE …/schedule', { kind: 'DROP_SCHEDULE' }],
  ])('%s drops the pending notice and the record of one sent', (_, command) => {
    const ruling = decide({ status: 'paused', pauseAt: null, resumeAt: IN_TEN_DAYS }, command);
    expect(ruling.change?.unset).toEqual(expect.arrayContaining(['noticeAt', 'noticeFor']));
    expect(ruling.events.map((e) => e.kind)).not.toContain('resume_upcoming');
  });
});

describe('a notice moved by a change of resumeNoticeHours', () => {
  it('falls due at its time, or at the change when that time has passed: never dated before the change', () => {
    expect(noticeDueAt(IN_TEN_DAYS, 24, NOW)).toBe('2026-06-10T00:00:00.000000Z');
    expect(noticeDueAt(IN_A_DAY, 48, NOW)).toBe(NOW);
    expect(noticeDueAt(IN_A_DAY, 24, NOW)).toBe(NOW);
  });
});
