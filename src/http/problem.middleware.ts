/**
 * The one place errors become responses: every error, thrown anywhere below, is rendered as
 * application/problem+json from the catalogue. Unknown errors become a logged 500 whose body
 * says nothing internal.
 */
import type { Context, Middleware } from 'koa';
import {
  MongoClientClosedError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from 'mongodb';
import { InvalidAnalyticsRangeError } from '../analytics/analytics.errors.js';
import { ApiKeyNotFoundError, ApiKeysContendedError, LastApiKeyError } from '../api-keys/api-keys.errors.js';
import { NotAuthenticatedError } from '../auth/auth.errors.js';
import {
  BulkRequestAlreadyUndoneError,
  BulkRequestNotFinishedError,
  BulkRequestNotFoundError,
  FilterTooBroadError,
} from '../bulk/bulk.errors.js';
import { DomainError, InvalidRequestError, Problems, ProblemError, problemBody, type ProblemBody, type ProblemKind } from '../errors.js';
import { EventNotFoundError } from '../events/events.errors.js';
import { HoldNotFoundError, HoldReleasedError } from '../holds/holds.errors.js';
import { ImportFileRefusedError, ImportNotFoundError, ImportTooLargeError, ImportUploadIdleError } from '../imports/imports.errors.js';
import { IdempotencyKeyInFlightError, IdempotencyKeyReusedError } from '../idempotency/idempotency.errors.js';
import type { Logger } from '../logger.js';
import { PortalLinkNotFoundError, PortalSubscriptionCancelledError } from '../portal/portal.errors.js';
import { PlanNotFoundError } from '../plans/plans.errors.js';
import { PausePolicyError } from '../pause-policy/pause-policy.errors.js';
import {
  ExternalIdInUseError,
  InvalidScheduleError,
  InvalidTransitionError,
  StatusNotPatchableError,
  SubscriptionNotFoundError,
} from '../subscriptions/subscriptions.errors.js';
import {
  BillingConnectionNotFoundError,
  StripeKeyModeError,
  StripeReadFailedError,
  StripeSignatureError,
} from '../billing/billing.errors.js';
import { SecretsKeyMissingError } from '../secrets/secrets.errors.js';
import {
  InvalidTestOutcomeError,
  TestClockMovedError,
  TestModeOnlyError,
  TestOutcomeWithLiveKeyError,
} from '../test-mode/test-mode.errors.js';
import { WebhookEndpointNotFoundError, WebhookUrlNotAllowedError } from '../webhooks/webhooks.errors.js';
import { CredentialsNeedTlsError, EventDestinationNotFoundError } from '../event-destinations/destinations.errors.js';

/** Each named domain error's catalogue entry: its message is the detail, its `errors` the fields at fault. */
export const DOMAIN_PROBLEMS: ReadonlyArray<readonly [abstract new (...args: never[]) => DomainError, ProblemKind]> = [
  [InvalidRequestError, Problems.invalidRequest],
  [SubscriptionNotFoundError, Problems.subscriptionNotFound],
  [InvalidTransitionError, Problems.invalidStatusTransition],
  [ExternalIdInUseError, Problems.externalIdInUse],
  [ImportNotFoundError, Problems.importNotFound],
  [ImportTooLargeError, Problems.payloadTooLarge],
  [ImportUploadIdleError, Problems.requestTimeout],
  [ImportFileRefusedError, Problems.invalidRequest],
  [StatusNotPatchableError, Problems.statusNotPatchable],
  [PausePolicyError, Problems.pausePolicyViolated],
  [InvalidScheduleError, Problems.invalidSchedule],
  [BulkRequestNotFoundError, Problems.bulkRequestNotFound],
  [NotAuthenticatedError, Problems.unauthorized],
  [ApiKeyNotFoundError, Problems.apiKeyNotFound],
  [PortalLinkNotFoundError, Problems.portalLinkNotFound],
  [PlanNotFoundError, Problems.planNotFound],
  [BillingConnectionNotFoundError, Problems.billingConnectionNotFound],
  [StripeKeyModeError, Problems.stripeKeyMode],
  [StripeSignatureError, Problems.stripeSignatureInvalid],
  [StripeReadFailedError, Problems.stripeReadFailed],
  [SecretsKeyMissingError, Problems.secretsKeyMissing],
  [InvalidAnalyticsRangeError, Problems.invalidAnalyticsRange],
  [PortalSubscriptionCancelledError, Problems.invalidStatusTransition],
  [LastApiKeyError, Problems.lastApiKey],
  [ApiKeysContendedError, Problems.unavailable],
  [TestModeOnlyError, Problems.testModeOnly],
  [TestClockMovedError, Problems.testClockMoved],
  [TestOutcomeWithLiveKeyError, Problems.testOutcomeWithLiveKey],
  [InvalidTestOutcomeError, Problems.invalidTestOutcome],
  [FilterTooBroadError, Problems.filterTooBroad],
  [BulkRequestNotFinishedError, Problems.bulkRequestNotFinished],
  [BulkRequestAlreadyUndoneError, Problems.bulkRequestAlreadyUndone],
  [HoldNotFoundError, Problems.holdNotFound],
  [HoldReleasedError, Problems.holdReleased],
  [EventNotFoundError, Problems.eventNotFound],
  [WebhookEndpointNotFoundError, Problems.webhookEndpointNotFound],
  [WebhookUrlNotAllowedError, Problems.webhookUrlNotAllowed],
  [EventDestinationNotFoundError, Problems.eventDestinationNotFound],
  [CredentialsNeedTlsError, Problems.credentialsNeedTls],
  [IdempotencyKeyReusedError, Problems.idempotencyKeyReused],
  [IdempotencyKeyInFlightError, Problems.idempotencyKeyInFlight],
];

/** A domain error with no entry above is a defect: undefined, so that it answers a logged 500. */
function domainProblem(error: DomainError): ProblemBody | undefined {
  const kind = DOMAIN_PROBLEMS.find(([type]) => error instanceof type)?.[1];
  return kind && problemBody(kind, error.message, error.errors);
}

/**
 * The driver (7.9) lets a write to a connection that the server side has just closed escape as
 * Node's own EPIPE or ECONNRESET error, not a MongoNetworkError; seen through the wire proxy.
 */
const SOCKET_GONE = new Set(['EPIPE', 'ECONNRESET']);

function isDatabaseUnavailable(error: unknown): boolean {
  return (
    SOCKET_GONE.has((error as NodeJS.ErrnoException | undefined)?.code ?? '') ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNetworkError ||
    error instanceof MongoTopologyClosedError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoClientClosedError ||
    // No connection free within DB_SLOW_CAP_MS (where requests have few: src/db/mongo.ts); the
    // driver does not export this error's class. (Operations interrupted because the server
    // stopped answering the driver's checks fail with its PoolClearedError, a MongoNetworkError.)
    (error instanceof Error && error.name === 'MongoWaitQueueTimeoutError')
  );
}

export function toProblem(error: unknown): ProblemBody | undefined {
  if (error instanceof ProblemError) return problemBody(error.kind, error.detail, error.errors);
  if (error instanceof DomainError) return domainProblem(error);
  if (isDatabaseUnavailable(error)) {
    return problemBody(Problems.unavailable, 'The database is unavailable; retry later.');
  }
  return undefined;
}

/**
 * `quotaFields` sets the rate-limit fields on a client error that has none yet (answered before the
 * API key was checked, or for a key refused): the contract declares them on every 4xx.
 */
export function problemMiddleware(log: Logger, quotaFields?: (ctx: Context) => void): Middleware {
  // A handler on the chain's promise rather than an async function around it: one frame fewer per request.
  return (ctx, next) =>
    next().catch((error: unknown) => {
      let body = toProblem(error);
      if (!body) {
        log.error({ err: error }, 'unexpected error');
        body = problemBody(Problems.internal, 'An unexpected error occurred.');
      } else if (body.status >= 500) {
        log.warn({ err: error, code: body.code }, 'request failed');
      }
      ctx.status = body.status;
      if (body.status < 500 && !ctx.response.get('RateLimit')) quotaFields?.(ctx);
      ctx.type = 'application/problem+json';
      ctx.body = body;
    });
}
