/** What the key-set rules refuse (mapped to problems in src/http/problem.middleware.ts). */
import { DomainError } from '../errors.js';

/** The merchant or key named does not exist: 404. */
export class ApiKeyNotFoundError extends DomainError {}

/** Revoking this key would leave the merchant no key that never expires: 409. */
export class LastApiKeyError extends DomainError {}

/** The key set kept changing under a request until it gave up: 503, retry. */
export class ApiKeysContendedError extends DomainError {}
