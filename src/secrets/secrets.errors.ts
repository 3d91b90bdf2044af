/** What storing or reading a secret is refused for (mapped to problems in src/http/problem.middleware.ts). */
import { DomainError } from '../errors.js';

/** No key to encrypt secrets with (SECRETS_KEY unset on a MongoDB URI): 503 0911. */
export class SecretsKeyMissingError extends DomainError {}

/** A sealed secret that does not open under the current key (tampered with, or another key's). */
export class SecretUnreadableError extends Error {}
