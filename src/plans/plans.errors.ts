/** What a plan operation is refused for (mapped to problems in src/http/problem.middleware.ts). */
import { DomainError } from '../errors.js';

/** A plan id the caller never named in its mode, or another merchant's: 404 0028. */
export class PlanNotFoundError extends DomainError {}
