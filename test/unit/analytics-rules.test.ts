/** The analytics rules (src/analytics/analytics.rules.ts): causes, weeks, figures and the day a subscription resumes. */
import { describe, expect, it } from 'vitest';
import { causeKindOf, cellsOf, figuresOf, isoWeekOf, resumeOf, type Pause, type ResumeState } from '../../src/analytics/analytics.rules.js';

describe('causeKindOf', () => {
  it.each([
    [{ kind: 'api' }, 'merchant'],
    [{ kind: 'bulk' }, 'merchant'],
    [{ kind: 'schedule' }, 'schedule'],
    [{ kind: 'hold' }, 'hold'],
    [{ kind: 'portal' }, 'customer'],
    [{ kind: 'billing' }, 'billing'],
    [undefined, 'merchant'],
  ])('%o counts as %s', (cause, kind) => expect(causeKindOf(cause)).toBe(kind));
});

describe('isoWeekOf', () => {
  it.each([
    ['2026-01-01', '2026-W01'],
    ['2027-01-01', '2026-W53'],
    ['2024-12-30', '2025-W01'],
    ['2026-12-06', '2026-W49'],
    ['2026-12-07', '2026-W50'],
  ])('%s is in %s', (day, week) => expect(isoWeekOf(day)).toBe(week));
});

describe('figuresOf', () => {
  const pause = (day: string, hours: number | undefined, extra: Partial<Pause> = {}): Pause => ({
    day,
    startedAt: `${day}T00:00:00.000000Z`,
    reason: null,
    cause: 'merchant',
    planId: 'p',
    ...(hours === undefined
      ? {}
      : { endedAt: new Date(Date.parse(`${day}T00:00:00Z`) + hours * 3_600_000).toISOString(), endedBy: 'schedule' }),
    ...extra,
  });

  it('takes the median and 90th percentile by nearest rank, of ended pauses only, in days with one decimal', () => {
    const day = '2026-03-02';
    const cells = cellsOf([
      pause(day, 24),
      pause(day, 48),
      pause(day, 36),
      pause(day, 240),
      pause(day, undefined),
      pause(day, 12, { endedBy: 'cancelled' }),
    ]);
    expect(figuresOf('day', [{ day, cells }])).toEqual([
      {
        key: day,
        pausesStarted: 6,
        resumed: 4,
        resumedBy: { merchant: 0, schedule: 4, hold: 0, customer: 0, billing: 0 },
        cancelledWhilePaused: 1,
        stillPaused: 1,
        resumeRate: 0.8,
        medianPauseDays: 1.5,
        p90PauseDays: 10,
      },
    ]);
  });

  it('has null rates and durations for a group with no ended pause, and orders other groups by pauses started', () => {
    const cells = cellsOf([
      pause('2026-03-02', undefined, { reason: 'a' }),
      pause('2026-03-02', undefined, { reason: 'b' }),
      pause('2026-03-03', undefined, { reason: 'b' }),
    ]);
    const byReason = figuresOf('reason', [{ day: '2026-03-02', cells }]);
    expect(byReason.map((f) => [f.key, f.pausesStarted, f.resumeRate, f.medianPauseDays])).toEqual([
      ['b', 2, null, null],
      ['a', 1, null, null],
    ]);
  });
});

describe('resumeOf', () => {
  const holds = new Map([
    ['h5', '2026-01-05T00:00:00.000000Z'],
    ['h9', '2026-01-09T00:00:00.000000Z'],
  ]);
  const cases: [string, ResumeState, ReturnType<typeof resumeOf>][] = [
    [
      'paused with its own resume',
      { status: 'paused', resumeAt: '2026-01-02T00:00:00.000000Z' },
      { at: '2026-01-02T00:00:00.000000Z', by: 'schedule' },
    ],
    ['paused without an end', { status: 'paused' }, undefined],
    ['cancelled', { status: 'cancelled', resumeAt: '2026-01-02T00:00:00.000000Z' }, undefined],
    [
      'fulfilled with a pause and resume to come',
      { status: 'fulfilled', pauseAt: '2026-01-01T00:00:00.000000Z', resumeAt: '2026-01-03T00:00:00.000000Z' },
      { at: '2026-01-03T00:00:00.000000Z', by: 'schedule' },
    ],
    ['held alone', { status: 'paused', ownPause: false, holdIds: ['h5'] }, { at: '2026-01-05T00:00:00.000000Z', by: 'hold' }],
    [
      'held by two: the later release',
      { status: 'paused', ownPause: false, holdIds: ['h5', 'h9'] },
      { at: '2026-01-09T00:00:00.000000Z', by: 'hold' },
    ],
    ['held by a hold without resumeAt', { status: 'paused', ownPause: false, holdIds: ['h5', 'open'] }, undefined],
    [
      'its own resume before the release waits for it',
      { status: 'paused', holdIds: ['h5'], resumeAt: '2026-01-02T00:00:00.000000Z' },
      { at: '2026-01-05T00:00:00.000000Z', by: 'hold' },
    ],
    [
      'its own resume after the release',
      { status: 'paused', holdIds: ['h5'], resumeAt: '2026-01-07T00:00:00.000000Z' },
      { at: '2026-01-07T00:00:00.000000Z', by: 'schedule' },
    ],
    ['its own pause without end outlasts the hold', { status: 'paused', holdIds: ['h5'] }, undefined],
    [
      'a pauseAt due under the hold starts its own pause',
      {
        status: 'paused',
        ownPause: false,
        holdIds: ['h5'],
        pauseAt: '2026-01-03T00:00:00.000000Z',
        resumeAt: '2026-01-08T00:00:00.000000Z',
      },
      { at: '2026-01-08T00:00:00.000000Z', by: 'schedule' },
    ],
    [
      'a pauseAt after the release: the release resumes it first',
      {
        status: 'paused',
        ownPause: false,
        holdIds: ['h5'],
        pauseAt: '2026-01-06T00:00:00.000000Z',
        resumeAt: '2026-01-08T00:00:00.000000Z',
      },
      { at: '2026-01-05T00:00:00.000000Z', by: 'hold' },
    ],
  ];
  it.each(cases)('%s', (_, state, expected) => expect(resumeOf(state, holds)).toEqual(expected));
});
