/**
 * The import's row of the lifecycle's rules (src/subscriptions/lifecycle.rules.ts, upsertPlan): what
 * an upsert by externalId does, by what the externalId names now and the row's status.
 */
import { describe, expect, it } from 'vitest';
import { upsertPlan, type UpsertRow } from '../../src/subscriptions/lifecycle.rules.js';
import type { Subscription } from '../../src/subscriptions/subscriptions.rules.js';

const CREATED_ID = '11111111-1111-4111-8111-111111111111';
const stored = (over: Partial<Subscription> = {}): Subscription => ({
  id: '22222222-2222-4222-8222-222222222222',
  merchantId: '33333333-3333-4333-8333-333333333333',
  planId: '44444444-4444-4444-8444-444444444444',
  status: 'fulfilled',
  cycle: 1,
  createdAt: '2026-12-01T00:00:00.000000Z',
  modifiedAt: '2026-12-01T00:00:00.000000Z',
  externalId: 'ext-1',
  ...over,
});
const row = (over: Partial<UpsertRow> = {}): UpsertRow => ({
  externalId: 'ext-1',
  planId: '55555555-5555-4555-8555-555555555555',
  ...over,
});

describe('upsertPlan', () => {
  it('creates where no subscription has the externalId', () => {
    expect(upsertPlan(undefined, row(), CREATED_ID)).toEqual({ kind: 'create' });
  });

  it('finds the row done where the subscription is the one its create gives (a chunk applied again)', () => {
    expect(upsertPlan(stored({ id: CREATED_ID }), row(), CREATED_ID)).toEqual({ kind: 'done' });
  });

  it('leaves a status that differs otherwise than by a cancel: pause state is the service’s', () => {
    expect(upsertPlan(stored({ status: 'paused' }), row({ status: 'fulfilled' }), CREATED_ID)).toEqual({ kind: 'differs' });
    expect(upsertPlan(stored({ status: 'cancelled' }), row({ status: 'paused' }), CREATED_ID)).toEqual({ kind: 'differs' });
  });

  it('patches plan, cycle and metadata to exactly the row’s keys, and cancels where the row is cancelled', () => {
    const current = stored({ metadata: { old: 'x', kept: 'y' } });
    expect(upsertPlan(current, row({ cycle: 3, metadata: { kept: 'z' } }), CREATED_ID)).toEqual({
      kind: 'patch',
      patch: { planId: row().planId, cycle: 3, metadata: { old: null, kept: 'z' } },
      cancels: false,
    });
    expect(upsertPlan(stored(), row({ status: 'cancelled' }), CREATED_ID)).toMatchObject({ kind: 'patch', cancels: true });
    expect(upsertPlan(stored({ status: 'cancelled' }), row({ status: 'cancelled' }), CREATED_ID)).toMatchObject({
      kind: 'patch',
      cancels: false,
    });
  });
});
