/** The named errors of webhooks: http/problem.middleware.ts maps each to its problem. */
import { DomainError } from '../errors.js';

/** A webhook URL that is not https or reaches a non-public address: 400. */
export class WebhookUrlNotAllowedError extends DomainError {}

/** An unknown webhook endpoint, or another merchant's: 404. */
export class WebhookEndpointNotFoundError extends DomainError {}
