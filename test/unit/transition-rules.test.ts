/**
 * The one table of rules (docs/design.md §4 and §9), cell by cell: every command (pause, a pause
 * with a schedule, resume, dropping the schedule, a due schedule firing) on a subscription in every
 * status with every kind of schedule, checked as the document the write leaves, its outcome and its events.
 */
import { describe, expect, it } from 'vitest';
import { CorruptSubscriptionError } from '../../src/subscriptions/subscriptions.errors.js';
import {
  decide,
  planCommand,
  type Command,
  type Outcome,
  type RuledEvent,
  type StoredSchedule,
  type SubscriptionStatus,
} from '../../src/subscriptions/subscriptions.rules.js';

const PAST = '2026-01-01T00:00:00.000000Z';
const NOW = '2026-06-01T00:00:00.000000Z';
const LATER = '2026-07-01T00:00:00.000000Z';
const LATEST = '2026-08-01T00:00:00.000000Z';

/** A stored subscription as far as the rules go. */
type Doc = { readonly status: SubscriptionStatus } & Partial<StoredSchedule>;

const SCHEDULES = {
  none: {},
  pausePending: { pauseAt: LATER, resumeAt: LATEST, pauseReason: 'r', nextScheduledAt: LATER },
  resumePending: { resumeAt: LATER, pauseReason: 'r', nextScheduledAt: LATER },
  pauseDue: { pauseAt: PAST, resumeAt: LATEST, pauseReason: 'r', nextScheduledAt: PAST },
  resumeDue: { resumeAt: PAST, pauseReason: 'r', nextScheduledAt: PAST },
  /** A `nextScheduledAt` left earlier than what is pending (a command dropped a time). */
  stale: { resumeAt: LATER, nextScheduledAt: PAST },
} satisfies Record<string, Partial<StoredSchedule>>;
type ScheduleName = keyof typeof SCHEDULES;

const COMMANDS = {
  pause: { kind: 'PAUSE' },
  pauseAtLater: { kind: 'PAUSE', schedule: { pauseAt: LATER, resumeAt: LATEST, reason: 'x' } },
  pauseUntil: { kind: 'PAUSE', schedule: { resumeAt: LATEST } },
  resume: { kind: 'RESUME' },
  drop: { kind: 'DROP_SCHEDULE' },
  fire: { kind: 'FIRE', now: NOW },
} satisfies Record<string, Command>;
type CommandName = keyof typeof COMMANDS;

/** The document a ruling's write leaves (the state before, when it writes nothing). */
function after(doc: Doc, command: Command): { outcome: Outcome; doc: Doc; event: boolean; touches: boolean } {
  const ruling = decide({ status: doc.status, pauseAt: doc.pauseAt ?? null, resumeAt: doc.resumeAt ?? null }, command);
  const written: Record<string, unknown> = { ...doc };
  if (ruling.change) {
    written.status = ruling.change.status;
    Object.assign(written, ruling.change.set);
    for (const field of ruling.change.unset) delete written[field];
  }
  expect(ruling.event !== undefined).toBe(written.status !== doc.status);
  if (ruling.event) expect(ruling.event).toEqual({ from: doc.status, to: written.status });
  return { outcome: ruling.outcome, doc: written as Doc, event: ruling.event !== undefined, touches: ruling.touches };
}

const doc = (status: SubscriptionStatus, schedule: ScheduleName): Doc => ({ status, ...SCHEDULES[schedule] });

describe('pause and resume: what they do depends on the status alone', () => {
  // [status, command, outcome, the document afterwards (from a subscription with no schedule)]
  const table: [SubscriptionStatus, CommandName, Outcome, Doc][] = [
    ['fulfilled', 'pause', 'applied', { status: 'paused' }],
    ['paused', 'pause', 'noop', { status: 'paused' }],
    ['cancelled', 'pause', 'cancelled', { status: 'cancelled' }],
    [
      'fulfilled',
      'pauseAtLater',
      'applied',
      { status: 'fulfilled', pauseAt: LATER, resumeAt: LATEST, pauseReason: 'x', nextScheduledAt: LATER },
    ],
    // Already paused: the pauseAt has nothing left to do; the rest of the schedule replaces the old one.
    ['paused', 'pauseAtLater', 'noop', { status: 'paused', resumeAt: LATEST, pauseReason: 'x', nextScheduledAt: LATEST }],
    ['cancelled', 'pauseAtLater', 'cancelled', { status: 'cancelled' }],
    ['fulfilled', 'pauseUntil', 'applied', { status: 'paused', resumeAt: LATEST, nextScheduledAt: LATEST }],
    ['paused', 'pauseUntil', 'noop', { status: 'paused', resumeAt: LATEST, nextScheduledAt: LATEST }],
    ['cancelled', 'pauseUntil', 'cancelled', { status: 'cancelled' }],
    ['paused', 'resume', 'applied', { status: 'fulfilled' }],
    ['fulfilled', 'resume', 'noop', { status: 'fulfilled' }],
    ['cancelled', 'resume', 'cancelled', { status: 'cancelled' }],
  ];

  it.each(table)('%s, %s: %s', (status, command, outcome, expected) => {
    const result = after(doc(status, 'none'), COMMANDS[command]);
    expect(result.outcome).toBe(outcome);
    expect(result.doc).toEqual(expected);
    expect(result.touches).toBe(outcome === 'applied' || (outcome === 'noop' && command !== 'pause' && command !== 'resume'));
  });

  const schedules = Object.keys(SCHEDULES) as ScheduleName[];
  const commands = ['pause', 'pauseAtLater', 'pauseUntil', 'resume'] as const;
  it.each(
    schedules.flatMap((s) => commands.flatMap((c) => (['fulfilled', 'paused', 'cancelled'] as const).map((st) => [st, s, c] as const))),
  )('%s with schedule %s, %s: the same outcome and event as with none', (status, schedule, command) => {
    const plain = after(doc(status, 'none'), COMMANDS[command]);
    const scheduled = after(doc(status, schedule), COMMANDS[command]);
    expect([scheduled.outcome, scheduled.event, scheduled.doc.status]).toEqual([plain.outcome, plain.event, plain.doc.status]);
  });

  it('a pause now drops a pending pauseAt and keeps the scheduled resume; a resume drops the scheduled resume and the reason', () => {
    expect(after(doc('fulfilled', 'pausePending'), COMMANDS.pause).doc).toEqual({
      status: 'paused',
      resumeAt: LATEST,
      pauseReason: 'r',
      nextScheduledAt: LATER,
    });
    expect(after(doc('paused', 'resumePending'), COMMANDS.resume).doc).toEqual({ status: 'fulfilled', nextScheduledAt: LATER });
    // Already paused, a pause without schedule leaves everything, its schedule included.
    expect(after(doc('paused', 'resumePending'), COMMANDS.pause).doc).toEqual(doc('paused', 'resumePending'));
  });
});

describe('dropping the schedule and a due schedule firing: what they do depends on the status and the schedule', () => {
  // [status, schedule, command, outcome, the document afterwards]
  const table: [SubscriptionStatus, ScheduleName, 'drop' | 'fire', Outcome, Doc][] = [
    ['fulfilled', 'none', 'drop', 'noop', { status: 'fulfilled' }],
    ['fulfilled', 'pausePending', 'drop', 'applied', { status: 'fulfilled' }],
    ['paused', 'resumePending', 'drop', 'applied', { status: 'paused', pauseReason: 'r' }],
    ['paused', 'none', 'drop', 'noop', { status: 'paused' }],
    ['cancelled', 'pausePending', 'drop', 'cancelled', { status: 'cancelled', ...SCHEDULES.pausePending }],
    ['cancelled', 'none', 'drop', 'cancelled', { status: 'cancelled' }],
    ['fulfilled', 'pauseDue', 'fire', 'applied', { status: 'paused', resumeAt: LATEST, pauseReason: 'r', nextScheduledAt: LATEST }],
    ['paused', 'pauseDue', 'fire', 'noop', { status: 'paused', resumeAt: LATEST, pauseReason: 'r', nextScheduledAt: LATEST }],
    ['cancelled', 'pauseDue', 'fire', 'cancelled', { status: 'cancelled' }],
    ['paused', 'resumeDue', 'fire', 'applied', { status: 'fulfilled' }],
    ['fulfilled', 'resumeDue', 'fire', 'noop', { status: 'fulfilled' }],
    ['cancelled', 'resumeDue', 'fire', 'cancelled', { status: 'cancelled' }],
    ['fulfilled', 'pausePending', 'fire', 'corrected', { status: 'fulfilled', ...SCHEDULES.pausePending }],
    ['paused', 'stale', 'fire', 'corrected', { status: 'paused', resumeAt: LATER, nextScheduledAt: LATER }],
    ['fulfilled', 'none', 'fire', 'corrected', { status: 'fulfilled' }],
  ];

  it.each(table)('%s with schedule %s, %s: %s', (status, schedule, command, outcome, expected) => {
    const result = after(doc(status, schedule), COMMANDS[command]);
    expect(result.outcome).toBe(outcome);
    expect(result.doc).toEqual(expected);
    // modifiedAt changes with any change of status or schedule; not for a correction, nor a cancelled one's dead schedule.
    expect(result.touches).toBe(outcome === 'applied' || (command === 'fire' && outcome === 'noop'));
  });

  it('a due schedule reports which transition fell due', () => {
    expect(decide({ status: 'fulfilled', pauseAt: PAST, resumeAt: LATEST }, COMMANDS.fire).due).toBe('pause');
    expect(decide({ status: 'paused', pauseAt: null, resumeAt: PAST }, COMMANDS.fire).due).toBe('resume');
    expect(decide({ status: 'paused', pauseAt: null, resumeAt: LATER }, COMMANDS.fire).due).toBeUndefined();
  });
});

describe('the table has no gap', () => {
  const statuses = ['fulfilled', 'paused', 'cancelled'] as const;
  const cells = statuses.flatMap((status) =>
    (Object.keys(SCHEDULES) as ScheduleName[]).flatMap((schedule) =>
      (Object.keys(COMMANDS) as CommandName[]).map((command) => [status, schedule, command] as const),
    ),
  );

  it.each(cells)(
    '%s with schedule %s, %s: a ruling whose event is its change of status; a cancelled subscription never changes status',
    (status, schedule, command) => {
      const result = after(doc(status, schedule), COMMANDS[command]);
      if (status === 'cancelled') expect([result.outcome, result.doc.status, result.event]).toEqual(['cancelled', 'cancelled', false]);
      else expect(['applied', 'noop', 'corrected']).toContain(result.outcome);
    },
  );

  it.each(Object.keys(COMMANDS) as CommandName[])(
    '%s on a status the model does not know is an internal error, not a decision',
    (command) => {
      expect(() => decide({ status: 'teleported', pauseAt: null, resumeAt: null }, COMMANDS[command])).toThrow(CorruptSubscriptionError);
      expect(() => decide({ status: 'Paused', pauseAt: null, resumeAt: null }, COMMANDS[command])).toThrow(CorruptSubscriptionError);
    },
  );
});

describe('the events of every cell', () => {
  const statuses = ['fulfilled', 'paused', 'cancelled'] as const;
  const cells = statuses.flatMap((status) =>
    (Object.keys(SCHEDULES) as ScheduleName[]).flatMap((schedule) =>
      (Object.keys(COMMANDS) as CommandName[]).map((command) => [status, schedule, command] as const),
    ),
  );
  const eventsOf = (status: SubscriptionStatus, schedule: ScheduleName, command: CommandName) => {
    const before = doc(status, schedule);
    return decide({ status, pauseAt: before.pauseAt ?? null, resumeAt: before.resumeAt ?? null }, COMMANDS[command]).events;
  };

  // Read off the documents before and after, independently of how the rules compute them.
  it.each(cells)(
    '%s with schedule %s, %s: its change of status, then each time the request gives, then the pending times it drops',
    (status, schedule, command) => {
      const before = doc(status, schedule);
      const written = after(before, COMMANDS[command]).doc;
      const expected: RuledEvent[] = [];
      if (written.status !== before.status) expected.push({ kind: 'status' });
      const given = (COMMANDS[command] as Command & { schedule?: { pauseAt?: string; resumeAt?: string } }).schedule ?? {};
      const ofRequest = command !== 'fire' && status !== 'cancelled';
      if (ofRequest && given.pauseAt !== undefined && written.pauseAt === given.pauseAt) expected.push({ kind: 'pause_scheduled' });
      if (ofRequest && given.resumeAt !== undefined && written.resumeAt === given.resumeAt) expected.push({ kind: 'resume_scheduled' });
      const removed = (['pauseAt', 'resumeAt'] as const).filter((t) => before[t] !== undefined && written[t] === undefined);
      if (ofRequest && removed.length > 0) expected.push({ kind: 'schedule_removed', removed });
      expect(eventsOf(status, schedule, command)).toEqual(expected);
    },
  );

  // The cells the docs name (docs/design.md §7a), spelled out.
  it.each([
    ['fulfilled', 'none', 'pauseAtLater', [{ kind: 'pause_scheduled' }, { kind: 'resume_scheduled' }]],
    ['fulfilled', 'none', 'pauseUntil', [{ kind: 'status' }, { kind: 'resume_scheduled' }]],
    ['fulfilled', 'pausePending', 'pause', [{ kind: 'status' }, { kind: 'schedule_removed', removed: ['pauseAt'] }]],
    ['fulfilled', 'pausePending', 'pauseAtLater', [{ kind: 'pause_scheduled' }, { kind: 'resume_scheduled' }]],
    ['paused', 'resumePending', 'resume', [{ kind: 'status' }, { kind: 'schedule_removed', removed: ['resumeAt'] }]],
    ['paused', 'resumePending', 'pauseUntil', [{ kind: 'resume_scheduled' }]],
    ['paused', 'resumePending', 'pause', []],
    ['paused', 'resumePending', 'drop', [{ kind: 'schedule_removed', removed: ['resumeAt'] }]],
    ['fulfilled', 'pausePending', 'drop', [{ kind: 'schedule_removed', removed: ['pauseAt', 'resumeAt'] }]],
    ['fulfilled', 'none', 'drop', []],
    ['fulfilled', 'pauseDue', 'fire', [{ kind: 'status' }]],
    ['paused', 'resumeDue', 'fire', [{ kind: 'status' }]],
    ['cancelled', 'pausePending', 'drop', []],
  ] as const)('%s with schedule %s, %s: %j', (status, schedule, command, expected) => {
    expect(eventsOf(status, schedule, command)).toEqual(expected);
  });
});

describe('planCommand: a pause or resume as one conditional write per status, for a bulk chunk', () => {
  it.each([
    ['PAUSE', undefined],
    ['PAUSE', { pauseAt: LATER, resumeAt: LATEST, reason: 'x' }],
    ['PAUSE', { resumeAt: LATEST }],
    ['RESUME', undefined],
  ] as const)('%s %j writes what the table rules for each status', (operation, schedule) => {
    const plan = planCommand(operation, schedule, schedule);
    const command: Command = operation === 'PAUSE' ? { kind: 'PAUSE', ...(schedule ? { schedule } : {}) } : { kind: 'RESUME' };
    expect(plan.whenFrom).toEqual(decide({ status: plan.from, pauseAt: null, resumeAt: null }, command).change);
    expect(plan.whenAlready).toEqual(decide({ status: plan.already, pauseAt: null, resumeAt: null }, command).change);
    expect([plan.from, plan.already]).toEqual(operation === 'PAUSE' ? ['fulfilled', 'paused'] : ['paused', 'fulfilled']);
  });
});

describe("a subscription's holders (issue 46 §1): paused while it has one, its own pause or a hold", () => {
  const H = 'hold-1';
  /** A document with its holders: ownPause false while paused by its holds alone; absent, it holds its own pause. */
  type Held = Doc & { readonly ownPause?: false; readonly holdIds?: readonly string[] };
  const heldOnly: Held = { status: 'paused', ownPause: false, holdIds: [H] };
  const heldAndOwn: Held = { status: 'paused', holdIds: [H] };
  const withHolders = (held: Held, command: Command) => {
    const ruling = decide(
      { status: held.status, pauseAt: held.pauseAt ?? null, resumeAt: held.resumeAt ?? null, held: (held.holdIds ?? []).length > 0 },
      command,
    );
    const written: Record<string, unknown> = { ...held };
    if (ruling.change) {
      written.status = ruling.change.status;
      Object.assign(written, ruling.change.set);
      for (const field of ruling.change.unset) delete written[field];
    }
    return { outcome: ruling.outcome, doc: written, events: ruling.events };
  };

  // [what it is, the document before, the command, outcome, the document afterwards]
  const table: [string, Held, CommandName, Outcome, Held][] = [
    ['an explicit resume of one paused by a hold alone clears every holder', heldOnly, 'resume', 'applied', { status: 'fulfilled' }],
    ['an explicit resume of one paused on its own and held clears every holder', heldAndOwn, 'resume', 'applied', { status: 'fulfilled' }],
    [
      'an explicit pause with a resumeAt of one paused by a hold alone makes the pause its own again',
      heldOnly,
      'pauseUntil',
      'noop',
      { status: 'paused', holdIds: [H], resumeAt: LATEST, nextScheduledAt: LATEST },
    ],
    [
      'its own scheduled resume falling due under a hold ends its own pause only: it stays paused',
      { ...heldAndOwn, ...SCHEDULES.resumeDue },
      'fire',
      'applied',
      { status: 'paused', ownPause: false, holdIds: [H] },
    ],
    [
      'its own scheduled resume not yet due under a hold is only corrected',
      { ...heldAndOwn, ...SCHEDULES.resumePending },
      'fire',
      'corrected',
      { ...heldAndOwn, ...SCHEDULES.resumePending },
    ],
    [
      'an explicit pause of one covered, not yet paused by the hold, is its own',
      { status: 'fulfilled', holdIds: [H] },
      'pause',
      'applied',
      { status: 'paused', holdIds: [H] },
    ],
  ];

  it.each(table)('%s', (_name, before, command, outcome, expected) => {
    const result = withHolders(before, COMMANDS[command]);
    expect(result.outcome).toBe(outcome);
    expect(result.doc).toEqual(expected);
  });

  it('its own scheduled resume under a hold records no event: its status does not change', () => {
    expect(withHolders({ ...heldAndOwn, ...SCHEDULES.resumeDue }, COMMANDS.fire).events).toEqual([]);
  });

  it("a bulk pause gives those already paused their own pause back; a resume does not (a hold's pause: holders-rules.test.ts)", () => {
    expect(planCommand('PAUSE', undefined, undefined).alreadyUnset).toEqual(['ownPause']);
    expect(planCommand('RESUME', undefined, undefined).alreadyUnset).toEqual([]);
  });
});
