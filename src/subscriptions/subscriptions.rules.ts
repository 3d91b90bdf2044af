/**
 * The state rules of docs/design.md §4, apart from HTTP and from MongoDB.
 *
 * | operation       | from        | result                          |
 * | pause           | fulfilled   | paused, modifiedAt = now        |
 * | pause           | paused      | no change (idempotent)          |
 * | resume          | paused      | fulfilled, modifiedAt = now     |
 * | resume          | fulfilled   | no change (idempotent)          |
 * | pause or resume | cancelled   | rejected                        |
 *
 * Schedules (pauseAt, resumeAt, reason) add to these: src/schedules/schedule.rules.ts.
 */
import type { components } from '../../generated/openapi.js';

export type SubscriptionStatus = components['schemas']['SubscriptionStatus'];
export type Operation = components['schemas']['BulkOperation'];

export interface Subscription {
  readonly id: string;
  readonly merchantId: string;
  readonly planId: string;
  readonly status: SubscriptionStatus;
  readonly cycle: number;
  readonly createdAt: string;
  readonly modifiedAt: string;
  /** Present only while a pause or resume is scheduled. */
  readonly schedule?: components['schemas']['Schedule'];
  /** Present only while paused with a reason. */
  readonly pauseReason?: string;
}

/** What made a change: recorded in its event (`cause`). `requestId`: the bulk request's id for `bulk`. */
export interface ChangeCause {
  readonly kind: 'api' | 'bulk' | 'schedule';
  readonly requestId?: string;
}

export interface Transition {
  readonly from: SubscriptionStatus;
  readonly to: SubscriptionStatus;
}

export const TRANSITIONS: Readonly<Record<Operation, Transition>> = Object.freeze({
  PAUSE: { from: 'fulfilled', to: 'paused' },
  RESUME: { from: 'paused', to: 'fulfilled' },
});

/** What an operation does to a subscription in a given status. */
export type Decision = 'apply' | 'noop' | 'reject';

export function decide(operation: Operation, status: string): Decision {
  const { from, to } = TRANSITIONS[operation];
  if (status === from) return 'apply';
  if (status === to) return 'noop';
  if (status === 'cancelled') return 'reject';
  throw new CorruptSubscriptionError(`unknown subscription status ${JSON.stringify(status)}`);
}

export class SubscriptionNotFoundError extends Error {
  override name = 'SubscriptionNotFoundError';

  constructor(readonly subscriptionId: string) {
    super(`Subscription ${subscriptionId} not found`);
  }
}

export class InvalidTransitionError extends Error {
  override name = 'InvalidTransitionError';

  constructor(
    readonly subscriptionId: string,
    readonly status: SubscriptionStatus,
    readonly operation: Operation | 'SCHEDULE',
  ) {
    const change = { PAUSE: 'be paused', RESUME: 'be resumed', SCHEDULE: 'have its schedule changed' }[operation];
    super(`Subscription ${subscriptionId} is ${status} and cannot ${change}`);
  }
}

/** Stored data that breaks the model: an internal error, never the caller's fault. */
export class CorruptSubscriptionError extends Error {
  override name = 'CorruptSubscriptionError';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Subscription ids are UUIDs compared case-insensitively and stored lower-case. */
export function normaliseId(raw: string): string | undefined {
  return UUID.test(raw) ? raw.toLowerCase() : undefined;
}
