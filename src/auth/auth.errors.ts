/** What authentication refuses (mapped to a problem in src/http/problem.middleware.ts). */
import { DomainError } from '../errors.js';

/** No valid API key, or two different ones: 401. */
export class NotAuthenticatedError extends DomainError {}
