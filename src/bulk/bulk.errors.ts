/** What a bulk request is refused for (mapped to problems in src/http/problem.middleware.ts). */
import { DomainError } from '../errors.js';

/** A filter that matches more subscriptions than one bulk request takes: 400. */
export class FilterTooBroadError extends DomainError {}
