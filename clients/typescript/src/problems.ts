// Generated from the spec's "Error codes" table by scripts/clients/problems.ts: do not edit.
import { ProblemError } from './layer/problem.js';

/** 0010: Unauthorized. */
export class UnauthorizedError extends ProblemError {
  static override readonly code = '0010';
}

/** 0011: Test mode only. */
export class TestModeOnlyError extends ProblemError {
  static override readonly code = '0011';
}

/** 0020: Subscription not found. */
export class SubscriptionNotFoundError extends ProblemError {
  static override readonly code = '0020';
}

/** 0021: Problem 0021. */
export class Problem0021Error extends ProblemError {
  static override readonly code = '0021';
}

/** 0022: Bulk request not found. */
export class BulkRequestNotFoundError extends ProblemError {
  static override readonly code = '0022';
}

/** 0023: Webhook endpoint not found. */
export class WebhookEndpointNotFoundError extends ProblemError {
  static override readonly code = '0023';
}

/** 0024: Event not found. */
export class EventNotFoundError extends ProblemError {
  static override readonly code = '0024';
}

/** 0025: API key not found. */
export class ApiKeyNotFoundError extends ProblemError {
  static override readonly code = '0025';
}

/** 0026: Hold not found. */
export class HoldNotFoundError extends ProblemError {
  static override readonly code = '0026';
}

/** 0027: Portal link not found. */
export class PortalLinkNotFoundError extends ProblemError {
  static override readonly code = '0027';
}

/** 0028: Plan not found. */
export class PlanNotFoundError extends ProblemError {
  static override readonly code = '0028';
}

/** 0029: Subscription import not found. */
export class SubscriptionImportNotFoundError extends ProblemError {
  static override readonly code = '0029';
}

/** 0030: Invalid status transition. */
export class InvalidStatusTransitionError extends ProblemError {
  static override readonly code = '0030';
}

/** 0031: Last API key. */
export class LastApiKeyError extends ProblemError {
  static override readonly code = '0031';
}

/** 0032: Pause policy violated. */
export class PausePolicyViolatedError extends ProblemError {
  static override readonly code = '0032';
}

/** 0033: Bulk request not finished. */
export class BulkRequestNotFinishedError extends ProblemError {
  static override readonly code = '0033';
}

/** 0034: Bulk request already undone. */
export class BulkRequestAlreadyUndoneError extends ProblemError {
  static override readonly code = '0034';
}

/** 0035: Hold released. */
export class HoldReleasedError extends ProblemError {
  static override readonly code = '0035';
}

/** 0036: Test clock moved. */
export class TestClockMovedError extends ProblemError {
  static override readonly code = '0036';
}

/** 0037: External id in use. */
export class ExternalIdInUseError extends ProblemError {
  static override readonly code = '0037';
}

/** 0038: Stripe read failed. */
export class StripeReadFailedError extends ProblemError {
  static override readonly code = '0038';
}

/** 0040: Invalid request. */
export class InvalidRequestError extends ProblemError {
  static override readonly code = '0040';
}

/** 0041: Unsupported media type. */
export class UnsupportedMediaTypeError extends ProblemError {
  static override readonly code = '0041';
}

/** 0042: Payload too large. */
export class PayloadTooLargeError extends ProblemError {
  static override readonly code = '0042';
}

/** 0043: Invalid schedule. */
export class InvalidScheduleError extends ProblemError {
  static override readonly code = '0043';
}

/** 0044: Webhook URL not allowed. */
export class WebhookUrlNotAllowedError extends ProblemError {
  static override readonly code = '0044';
}

/** 0045: Method not allowed. */
export class MethodNotAllowedError extends ProblemError {
  static override readonly code = '0045';
}

/** 0046: Filter too broad. */
export class FilterTooBroadError extends ProblemError {
  static override readonly code = '0046';
}

/** 0047: Status not patchable. */
export class StatusNotPatchableError extends ProblemError {
  static override readonly code = '0047';
}

/** 0049: Stripe signature invalid. */
export class StripeSignatureInvalidError extends ProblemError {
  static override readonly code = '0049';
}

/** 0050: Idempotency key reused. */
export class IdempotencyKeyReusedError extends ProblemError {
  static override readonly code = '0050';
}

/** 0051: Idempotency key in use. */
export class IdempotencyKeyInUseError extends ProblemError {
  static override readonly code = '0051';
}

/** 0053: Stripe key of the other mode. */
export class StripeKeyOfTheOtherModeError extends ProblemError {
  static override readonly code = '0053';
}

/** 0060: Too many requests. */
export class TooManyRequestsError extends ProblemError {
  static override readonly code = '0060';
}

/** 0120: Billing connection not found. */
export class BillingConnectionNotFoundError extends ProblemError {
  static override readonly code = '0120';
}

/** 0121: Event destination not found. */
export class EventDestinationNotFoundError extends ProblemError {
  static override readonly code = '0121';
}

/** 0140: Invalid analytics range. */
export class InvalidAnalyticsRangeError extends ProblemError {
  static override readonly code = '0140';
}

/** 0141: Credentials need TLS. */
export class CredentialsNeedTlsError extends ProblemError {
  static override readonly code = '0141';
}

/** 0142: Problem 0142. */
export class Problem0142Error extends ProblemError {
  static override readonly code = '0142';
}

/** 0143: Problem 0143. */
export class Problem0143Error extends ProblemError {
  static override readonly code = '0143';
}

/** 0900: Internal Server Error. */
export class InternalServerError extends ProblemError {
  static override readonly code = '0900';
}

/** 0901: Problem 0901. */
export class Problem0901Error extends ProblemError {
  static override readonly code = '0901';
}

/** 0910: Service unavailable. */
export class ServiceUnavailableError extends ProblemError {
  static override readonly code = '0910';
}

/** 0911: Secrets key missing. */
export class SecretsKeyMissingError extends ProblemError {
  static override readonly code = '0911';
}

/** 0920: Gateway timeout. */
export class GatewayTimeoutError extends ProblemError {
  static override readonly code = '0920';
}

/** Each code's error type. */
export const PROBLEM_TYPES: Readonly<Record<string, typeof ProblemError>> = {
  '0010': UnauthorizedError,
  '0011': TestModeOnlyError,
  '0020': SubscriptionNotFoundError,
  '0021': Problem0021Error,
  '0022': BulkRequestNotFoundError,
  '0023': WebhookEndpointNotFoundError,
  '0024': EventNotFoundError,
  '0025': ApiKeyNotFoundError,
  '0026': HoldNotFoundError,
  '0027': PortalLinkNotFoundError,
  '0028': PlanNotFoundError,
  '0029': SubscriptionImportNotFoundError,
  '0030': InvalidStatusTransitionError,
  '0031': LastApiKeyError,
  '0032': PausePolicyViolatedError,
  '0033': BulkRequestNotFinishedError,
  '0034': BulkRequestAlreadyUndoneError,
  '0035': HoldReleasedError,
  '0036': TestClockMovedError,
  '0037': ExternalIdInUseError,
  '0038': StripeReadFailedError,
  '0040': InvalidRequestError,
  '0041': UnsupportedMediaTypeError,
  '0042': PayloadTooLargeError,
  '0043': InvalidScheduleError,
  '0044': WebhookUrlNotAllowedError,
  '0045': MethodNotAllowedError,
  '0046': FilterTooBroadError,
  '0047': StatusNotPatchableError,
  '0049': StripeSignatureInvalidError,
  '0050': IdempotencyKeyReusedError,
  '0051': IdempotencyKeyInUseError,
  '0053': StripeKeyOfTheOtherModeError,
  '0060': TooManyRequestsError,
  '0120': BillingConnectionNotFoundError,
  '0121': EventDestinationNotFoundError,
  '0140': InvalidAnalyticsRangeError,
  '0141': CredentialsNeedTlsError,
  '0142': Problem0142Error,
  '0143': Problem0143Error,
  '0900': InternalServerError,
  '0901': Problem0901Error,
  '0910': ServiceUnavailableError,
  '0911': SecretsKeyMissingError,
  '0920': GatewayTimeoutError,
};
