/** The named errors of events: http/problem.middleware.ts maps each to its problem. */
import { DomainError } from '../errors.js';

/** An unknown event, or another merchant's: 404. */
export class EventNotFoundError extends DomainError {}
