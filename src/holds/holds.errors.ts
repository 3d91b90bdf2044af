/** What a hold operation is refused for (mapped to problems in src/http/problem.middleware.ts). */
import { DomainError } from '../errors.js';

/** An unknown hold, or another merchant's: 404 0026. */
export class HoldNotFoundError extends DomainError {}

/** A release of a hold released already: 409 0035, naming its release. */
export class HoldReleasedError extends DomainError {}
