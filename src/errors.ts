/**
 * The one error catalogue (docs/design.md §7). Every error response is built from an entry here
 * and rendered as application/problem+json by the problem middleware.
 */
import { clipped } from './lib/text.js';

export interface ProblemKind {
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly slug: string;
}

function kind(status: number, code: string, title: string, slug: string): ProblemKind {
  return Object.freeze({ status, code, title, slug });
}

export const Problems = Object.freeze({
  invalidRequest: kind(400, '0040', 'Invalid request', 'invalid-request'),
  invalidSchedule: kind(400, '0043', 'Invalid schedule', 'invalid-schedule'),
  testOutcomeWithLiveKey: kind(400, '0142', 'Test outcome with a live key', 'test-outcome-with-live-key'),
  invalidTestOutcome: kind(400, '0143', 'Invalid test outcome', 'invalid-test-outcome'),
  // What node:http refuses before the app sees a request: invalid requests with their own status.
  requestTimeout: kind(408, '0040', 'Invalid request', 'request-timeout'),
  headersTooLarge: kind(431, '0040', 'Invalid request', 'request-header-fields-too-large'),
  unauthorized: kind(401, '0010', 'Unauthorized', 'unauthorized'),
  testModeOnly: kind(403, '0011', 'Test mode only', 'test-mode-only'),
  subscriptionNotFound: kind(404, '0020', 'Subscription not found', 'subscription-not-found'),
  routeNotFound: kind(404, '0021', 'Not found', 'not-found'),
  bulkRequestNotFound: kind(404, '0022', 'Bulk request not found', 'bulk-request-not-found'),
  webhookEndpointNotFound: kind(404, '0023', 'Webhook endpoint not found', 'webhook-endpoint-not-found'),
  eventNotFound: kind(404, '0024', 'Event not found', 'event-not-found'),
  apiKeyNotFound: kind(404, '0025', 'API key not found', 'api-key-not-found'),
  holdNotFound: kind(404, '0026', 'Hold not found', 'hold-not-found'),
  portalLinkNotFound: kind(404, '0027', 'Portal link not found', 'portal-link-not-found'),
  planNotFound: kind(404, '0028', 'Plan not found', 'plan-not-found'),
  billingConnectionNotFound: kind(404, '0120', 'Billing connection not found', 'billing-connection-not-found'),
  stripeKeyMode: kind(422, '0053', 'Stripe key of the other mode', 'stripe-key-mode'),
  stripeSignatureInvalid: kind(400, '0049', 'Stripe signature invalid', 'stripe-signature-invalid'),
  stripeReadFailed: kind(409, '0038', 'Stripe read failed', 'stripe-read-failed'),
  secretsKeyMissing: kind(503, '0911', 'Secrets key missing', 'secrets-key-missing'),
  invalidAnalyticsRange: kind(400, '0140', 'Invalid analytics range', 'invalid-analytics-range'),
  eventDestinationNotFound: kind(404, '0121', 'Event destination not found', 'event-destination-not-found'),
  credentialsNeedTls: kind(400, '0141', 'Credentials need TLS', 'credentials-need-tls'),
  importNotFound: kind(404, '0029', 'Subscription import not found', 'subscription-import-not-found'),
  filterTooBroad: kind(400, '0046', 'Filter too broad', 'filter-too-broad'),
  webhookUrlNotAllowed: kind(400, '0044', 'Webhook URL not allowed', 'webhook-url-not-allowed'),
  methodNotAllowed: kind(405, '0045', 'Method not allowed', 'method-not-allowed'),
  invalidStatusTransition: kind(409, '0030', 'Invalid status transition', 'invalid-status-transition'),
  lastApiKey: kind(409, '0031', 'Last API key', 'last-api-key'),
  bulkRequestNotFinished: kind(409, '0033', 'Bulk request not finished', 'bulk-request-not-finished'),
  bulkRequestAlreadyUndone: kind(409, '0034', 'Bulk request already undone', 'bulk-request-already-undone'),
  holdReleased: kind(409, '0035', 'Hold released', 'hold-released'),
  testClockMoved: kind(409, '0036', 'Test clock moved', 'test-clock-moved'),
  externalIdInUse: kind(409, '0037', 'External id in use', 'external-id-in-use'),
  statusNotPatchable: kind(400, '0047', 'Status not patchable', 'status-not-patchable'),
  pausePolicyViolated: kind(422, '0032', 'Pause policy violated', 'pause-policy-violated'),
  payloadTooLarge: kind(413, '0042', 'Payload too large', 'payload-too-large'),
  unsupportedMediaType: kind(415, '0041', 'Unsupported media type', 'unsupported-media-type'),
  idempotencyKeyReused: kind(422, '0050', 'Idempotency key reused', 'idempotency-key-reused'),
  idempotencyKeyInFlight: kind(409, '0051', 'Idempotency key in use', 'idempotency-key-in-flight'),
  tooManyRequests: kind(429, '0060', 'Too many requests', 'too-many-requests'),
  internal: kind(500, '0900', 'Internal Server Error', 'internal-server-error'),
  notImplemented: kind(501, '0901', 'Not implemented', 'not-implemented'),
  unavailable: kind(503, '0910', 'Service unavailable', 'service-unavailable'),
  gatewayTimeout: kind(504, '0920', 'Gateway timeout', 'gateway-timeout'),
});

export interface FieldError {
  readonly path: string;
  readonly message: string;
}

/** An error that already knows which catalogue entry it is. */
export class ProblemError extends Error {
  override name = 'ProblemError';

  constructor(
    readonly kind: ProblemKind,
    readonly detail: string,
    readonly errors?: readonly FieldError[],
  ) {
    super(detail);
  }
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldError[];
}

/** The contract's bounds on a problem's texts (`Problem` in openapi/openapi.yaml): a detail may quote a path or a URL. */
export const PROBLEM_DETAIL_MAX_LENGTH = 4096;
export const FIELD_ERROR_MAX_LENGTH = 500;

export function problemBody(kind: ProblemKind, detail: string, errors?: readonly FieldError[]): ProblemBody {
  const body: ProblemBody = {
    type: `urn:subsvc:problem:${kind.slug}`,
    title: kind.title,
    status: kind.status,
    detail: clipped(detail, PROBLEM_DETAIL_MAX_LENGTH),
    code: kind.code,
  };
  if (errors && errors.length > 0) {
    body.errors = errors.map((e) => ({
      path: clipped(e.path, FIELD_ERROR_MAX_LENGTH),
      message: clipped(e.message, FIELD_ERROR_MAX_LENGTH),
    }));
  }
  return body;
}

/**
 * A refusal by the domain, raised where its rule is and named for it: src/http/problem.middleware.ts
 * maps each kind to its catalogue entry, with the message as the detail and `errors` naming the
 * fields at fault. Services raise these, never a ProblemError: only src/http/ speaks HTTP.
 */
export class DomainError extends Error {
  constructor(
    message: string,
    readonly errors?: readonly FieldError[],
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The request breaks a rule of the contract that its schema cannot state (a range, a limit, a field's form). */
export class InvalidRequestError extends DomainError {}
