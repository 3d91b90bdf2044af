/** What a billing connection operation is refused for (mapped to problems in src/http/problem.middleware.ts). */
import { DomainError } from '../errors.js';

/** No connection in the caller's mode: 404 0120. */
export class BillingConnectionNotFoundError extends DomainError {}

/** A Stripe key of the other mode than the API key's (a test key with a live API key, or the reverse): 422 0053. */
export class StripeKeyModeError extends DomainError {}

/** A Stripe event whose `Stripe-Signature` is missing, malformed, not the connection's or too old: 400 0049. */
export class StripeSignatureError extends DomainError {}

/** Stripe did not answer the backfill's reads, or refused them (the connection's key): 409 0038, nothing imported. */
export class StripeReadFailedError extends DomainError {}
