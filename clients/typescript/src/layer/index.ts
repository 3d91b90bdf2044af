/** The hand-written client layer over the generated client (docs/clients.md). */
export { ProblemError } from './problem.js';
export { retryingFetch, type RetryOptions } from './retry.js';
export { SubsvcClient, listAll, type ClientOptions, type ItemOf, type Page } from './client.js';
export { verify, WebhookVerificationError, WEBHOOK_TOLERANCE_SECONDS, type WebhookEvent } from './webhooks.js';
