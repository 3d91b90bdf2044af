/** The named errors of stored secrets: http/problem.middleware.ts maps each to its problem. */
import { DomainError } from '../errors.js';

/** A secret to store where the service has no key to seal it with (MongoDB without SECRETS_KEY): 422. */
export class SecretsUnavailableError extends DomainError {}
