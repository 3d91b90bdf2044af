/** The named errors of idempotency keys: http/problem.middleware.ts maps each to its problem. */
import { DomainError } from '../errors.js';

/** The key was used with a different request: 422. */
export class IdempotencyKeyReusedError extends DomainError {}

/** A request with the key is still being served: 409. */
export class IdempotencyKeyInFlightError extends DomainError {}
