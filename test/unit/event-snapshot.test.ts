/** An event's subscription is made of the fields no change alters and a snapshot of the others (src/subscriptions/outbox.ts): together they must be every field of the schema. */
import { describe, expect, it } from 'vitest';
import { IMMUTABLE_FIELDS, READ_ONLY_FIELDS, SNAPSHOT_FIELDS } from '../../src/subscriptions/outbox.js';
import { loadSpec } from '../../src/lib/spec.js';
import type { Change } from '../../src/subscriptions/subscriptions.rules.js';
import { snapshotAfter, snapshotOf } from '../../src/subscriptions/subscription.document.js';

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
