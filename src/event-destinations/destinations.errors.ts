/** The named errors of event destinations: http/problem.middleware.ts maps each to its problem. */
import { DomainError } from '../errors.js';

/** An unknown event destination, or another merchant's: 404. */
export class EventDestinationNotFoundError extends DomainError {}

/** Credentials on a connection without TLS: 400. */
export class CredentialsNeedTlsError extends DomainError {}
