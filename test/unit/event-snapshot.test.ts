/** An event's subscription is made of the fields no change alters and a snapshot of the others (src/subscriptions/outbox.ts): together they must be every field of the schema. */
import { describe, expect, it } from 'vitest';
import { IMMUTABLE_FIELDS, READ_ONLY_FIELDS, SNAPSHOT_FIELDS } from '../../src/subscriptions/outbox.js';
import { loadSpec } from '../../src/lib/spec.js';
import type { Change } from '../../src/subscriptions/subscriptions.rules.js';
import { snapshotAfter, snapshotOf } from '../../src/subscriptions/subscription.document.js';
import { subscriptionEventId, subscriptionEvents } from '../../src/events/event.payload.js';

describe('the subscription an event carries', () => {
  it("every property of the Subscription schema is immutable, in the snapshot its change writes, or a read's alone: one of the three", () => {
    const schema = (loadSpec().components!.schemas as Record<string, { properties: Record<string, unknown> }>)['Subscription']!;
    const covered: string[] = [...IMMUTABLE_FIELDS, ...SNAPSHOT_FIELDS, ...READ_ONLY_FIELDS];
    // `livemode` is neither: it follows from merchantId, and is added where events are shown (event.payload.ts shownAs).
    expect(
      Object.keys(schema.properties)
        .filter((p) => p !== 'livemode')
        .sort(),
    ).toEqual([...covered].sort());
    expect(new Set(covered).size).toBe(covered.length);
  });

  it('a snapshot holds snapshot fields only, each that the document has', () => {
    const doc = { status: 'paused' as const, modifiedAt: 'm', pauseAt: 'p', resumeAt: 'r', pauseReason: 'why', nextScheduledAt: 'p' };
    expect(Object.keys(snapshotOf(doc)).sort()).toEqual([...SNAPSHOT_FIELDS].sort());
  });

  it('after a change, fields it keeps come from before, fields it sets or removes from the change', () => {
    const resume: Change = { status: 'fulfilled', set: {}, unset: ['resumeAt', 'pauseReason'] };
    expect(snapshotAfter(resume, { pauseAt: 'p', resumeAt: 'r', pauseReason: 'why' }, 'at')).toEqual({
      status: 'fulfilled',
      modifiedAt: 'at',
      schedule: { pauseAt: 'p', resumeAt: null },
    });
  });
});

describe('the events made of a subscription’s pending entries (src/events/event.payload.ts)', () => {
  const stored = {
    id: '0f6a4c1e-2b8d-4f3a-9c5e-7d1b2a3c4e5f',
    merchantId: 'merchant_1',
    planId: 'plan_1',
    status: 'paused' as const,
    cycle: 3,
    createdAt: '2026-01-01T00:00:00.000000Z',
    modifiedAt: '2026-03-01T00:00:00.000000Z',
    schedule: { pauseAt: null, resumeAt: '2026-04-01T00:00:00.000000Z' },
    pauseReason: 'travel',
  };
  const entry = {
    key: 'k',
    type: 'subscription.paused' as const,
    seq: 0,
    status: 'paused' as const,
    previousStatus: 'fulfilled' as const,
    at: '2026-02-01T00:00:00.000000Z',
    cause: { kind: 'api' as const },
  };

  it('shows the subscription as its change left it: the fields no change alters as stored, the others from its entry', () => {
    const { schedule: _schedule, pauseReason: _reason, status: _status, modifiedAt: _modifiedAt, ...unchangeable } = stored;
    const [event] = subscriptionEvents({
      subscription: stored,
      entries: [{ ...entry, subscription: { status: 'paused', modifiedAt: entry.at } }],
    });
    expect(event).toEqual({
      id: subscriptionEventId(entry, stored.id),
      type: 'subscription.paused',
      createdAt: entry.at,
      livemode: true,
      data: {
        subscription: { ...unchangeable, status: 'paused', modifiedAt: entry.at, livemode: true },
        previousStatus: 'fulfilled',
        cause: { kind: 'api' },
      },
    });
  });

  it('a hold’s notice, which changed nothing, shows the subscription as stored', () => {
    const notice = {
      ...entry,
      type: 'subscription.resume_upcoming' as const,
      previousStatus: 'paused' as const,
      announces: '2026-05-01T00:00:00.000000Z',
    };
    const [event] = subscriptionEvents({ subscription: stored, entries: [notice] });
    expect(event!.type).toBe('subscription.resume_upcoming');
    expect((event!.data as { subscription: unknown }).subscription).toEqual({ ...stored, livemode: true });
  });
});
