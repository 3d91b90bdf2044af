/** The named errors of subscriptions: http/problem.middleware.ts maps each to its problem. */
import type { components } from '../../generated/openapi.js';
import { DomainError } from '../errors.js';

// The spec's types, as subscriptions.rules.ts names them: read from the spec so that the rules, which throw these, need not be read here.
type SubscriptionStatus = components['schemas']['SubscriptionStatus'];
type Operation = components['schemas']['BulkOperation'];

export class SubscriptionNotFoundError extends DomainError {
  constructor(readonly subscriptionId: string) {
    super(`Subscription ${subscriptionId} not found`);
  }
}

export class InvalidTransitionError extends DomainError {
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

/** Seeding stopped after some parts went in: `inserted` of `requested` (the part in flight may have too); `cause` is why. */
export class SeedInterruptedError extends Error {
  override name = 'SeedInterruptedError';

  constructor(
    readonly inserted: number,
    readonly requested: number,
    override readonly cause: unknown,
  ) {
    super(`seeding stopped after ${inserted} of ${requested} subscriptions`);
  }
}

/** A pause's schedule breaks a rule its schema cannot state: in the future, at most 3 years ahead, in order (400). */
export class InvalidScheduleError extends DomainError {
  constructor(
    readonly field: 'pauseAt' | 'resumeAt' | 'reason',
    readonly rule: string,
  ) {
    super(`${field} ${rule}.`, [{ path: `/${field}`, message: rule }]);
  }
}

/** Another subscription of the merchant (in this mode) already has this externalId (409 0037). */
export class ExternalIdInUseError extends DomainError {
  constructor(
    readonly externalId: string,
    readonly existingId: string,
  ) {
    super(`Subscription ${existingId} already has externalId ${externalId}`);
  }
}

/** A PATCH that names `status`, which only pause, resume and cancel change (400 0047). */
export class StatusNotPatchableError extends DomainError {
  constructor() {
    super('status is changed by pause, resume and cancel (POST /v2/subscriptions/{id}/pause, /resume, /cancel), not by PATCH.', [
      { path: '/status', message: 'not patchable; use pause, resume or cancel' },
    ]);
  }
}
