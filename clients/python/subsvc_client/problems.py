"""Generated from the spec's "Error codes" table by scripts/clients/problems.ts: do not edit."""

from subsvc_client.layer.problem import ProblemError


class UnauthorizedError(ProblemError):
    """0010: Unauthorized."""

    code = "0010"


class TestModeOnlyError(ProblemError):
    """0011: Test mode only."""

    code = "0011"


class SubscriptionNotFoundError(ProblemError):
    """0020: Subscription not found."""

    code = "0020"


class Problem0021Error(ProblemError):
    """0021: Problem 0021."""

    code = "0021"


class BulkRequestNotFoundError(ProblemError):
    """0022: Bulk request not found."""

    code = "0022"


class WebhookEndpointNotFoundError(ProblemError):
    """0023: Webhook endpoint not found."""

    code = "0023"


class EventNotFoundError(ProblemError):
    """0024: Event not found."""

    code = "0024"


class ApiKeyNotFoundError(ProblemError):
    """0025: API key not found."""

    code = "0025"


class HoldNotFoundError(ProblemError):
    """0026: Hold not found."""

    code = "0026"


class PortalLinkNotFoundError(ProblemError):
    """0027: Portal link not found."""

    code = "0027"


class PlanNotFoundError(ProblemError):
    """0028: Plan not found."""

    code = "0028"


class SubscriptionImportNotFoundError(ProblemError):
    """0029: Subscription import not found."""

    code = "0029"


class InvalidStatusTransitionError(ProblemError):
    """0030: Invalid status transition."""

    code = "0030"


class LastApiKeyError(ProblemError):
    """0031: Last API key."""

    code = "0031"


class PausePolicyViolatedError(ProblemError):
    """0032: Pause policy violated."""

    code = "0032"


class BulkRequestNotFinishedError(ProblemError):
    """0033: Bulk request not finished."""

    code = "0033"


class BulkRequestAlreadyUndoneError(ProblemError):
    """0034: Bulk request already undone."""

    code = "0034"


class HoldReleasedError(ProblemError):
    """0035: Hold released."""

    code = "0035"


class TestClockMovedError(ProblemError):
    """0036: Test clock moved."""

    code = "0036"


class ExternalIdInUseError(ProblemError):
    """0037: External id in use."""

    code = "0037"


class StripeReadFailedError(ProblemError):
    """0038: Stripe read failed."""

    code = "0038"


class InvalidRequestError(ProblemError):
    """0040: Invalid request."""

    code = "0040"


class UnsupportedMediaTypeError(ProblemError):
    """0041: Unsupported media type."""

    code = "0041"


class PayloadTooLargeError(ProblemError):
    """0042: Payload too large."""

    code = "0042"


class InvalidScheduleError(ProblemError):
    """0043: Invalid schedule."""

    code = "0043"


class WebhookUrlNotAllowedError(ProblemError):
    """0044: Webhook URL not allowed."""

    code = "0044"


class MethodNotAllowedError(ProblemError):
    """0045: Method not allowed."""

    code = "0045"


class FilterTooBroadError(ProblemError):
    """0046: Filter too broad."""

    code = "0046"


class StatusNotPatchableError(ProblemError):
    """0047: Status not patchable."""

    code = "0047"


class StripeSignatureInvalidError(ProblemError):
    """0049: Stripe signature invalid."""

    code = "0049"


class IdempotencyKeyReusedError(ProblemError):
    """0050: Idempotency key reused."""

    code = "0050"


class IdempotencyKeyInUseError(ProblemError):
    """0051: Idempotency key in use."""

    code = "0051"


class StripeKeyOfTheOtherModeError(ProblemError):
    """0053: Stripe key of the other mode."""

    code = "0053"


class TooManyRequestsError(ProblemError):
    """0060: Too many requests."""

    code = "0060"


class BillingConnectionNotFoundError(ProblemError):
    """0120: Billing connection not found."""

    code = "0120"


class EventDestinationNotFoundError(ProblemError):
    """0121: Event destination not found."""

    code = "0121"


class InvalidAnalyticsRangeError(ProblemError):
    """0140: Invalid analytics range."""

    code = "0140"


class CredentialsNeedTlsError(ProblemError):
    """0141: Credentials need TLS."""

    code = "0141"


class Problem0142Error(ProblemError):
    """0142: Problem 0142."""

    code = "0142"


class Problem0143Error(ProblemError):
    """0143: Problem 0143."""

    code = "0143"


class InternalServerError(ProblemError):
    """0900: Internal Server Error."""

    code = "0900"


class Problem0901Error(ProblemError):
    """0901: Problem 0901."""

    code = "0901"


class ServiceUnavailableError(ProblemError):
    """0910: Service unavailable."""

    code = "0910"


class SecretsKeyMissingError(ProblemError):
    """0911: Secrets key missing."""

    code = "0911"


class GatewayTimeoutError(ProblemError):
    """0920: Gateway timeout."""

    code = "0920"


PROBLEM_TYPES: dict[str, type[ProblemError]] = {
    "0010": UnauthorizedError,
    "0011": TestModeOnlyError,
    "0020": SubscriptionNotFoundError,
    "0021": Problem0021Error,
    "0022": BulkRequestNotFoundError,
    "0023": WebhookEndpointNotFoundError,
    "0024": EventNotFoundError,
    "0025": ApiKeyNotFoundError,
    "0026": HoldNotFoundError,
    "0027": PortalLinkNotFoundError,
    "0028": PlanNotFoundError,
    "0029": SubscriptionImportNotFoundError,
    "0030": InvalidStatusTransitionError,
    "0031": LastApiKeyError,
    "0032": PausePolicyViolatedError,
    "0033": BulkRequestNotFinishedError,
    "0034": BulkRequestAlreadyUndoneError,
    "0035": HoldReleasedError,
    "0036": TestClockMovedError,
    "0037": ExternalIdInUseError,
    "0038": StripeReadFailedError,
    "0040": InvalidRequestError,
    "0041": UnsupportedMediaTypeError,
    "0042": PayloadTooLargeError,
    "0043": InvalidScheduleError,
    "0044": WebhookUrlNotAllowedError,
    "0045": MethodNotAllowedError,
    "0046": FilterTooBroadError,
    "0047": StatusNotPatchableError,
    "0049": StripeSignatureInvalidError,
    "0050": IdempotencyKeyReusedError,
    "0051": IdempotencyKeyInUseError,
    "0053": StripeKeyOfTheOtherModeError,
    "0060": TooManyRequestsError,
    "0120": BillingConnectionNotFoundError,
    "0121": EventDestinationNotFoundError,
    "0140": InvalidAnalyticsRangeError,
    "0141": CredentialsNeedTlsError,
    "0142": Problem0142Error,
    "0143": Problem0143Error,
    "0900": InternalServerError,
    "0901": Problem0901Error,
    "0910": ServiceUnavailableError,
    "0911": SecretsKeyMissingError,
    "0920": GatewayTimeoutError,
}

__all__ = ["UnauthorizedError", "TestModeOnlyError", "SubscriptionNotFoundError", "Problem0021Error", "BulkRequestNotFoundError", "WebhookEndpointNotFoundError", "EventNotFoundError", "ApiKeyNotFoundError", "HoldNotFoundError", "PortalLinkNotFoundError", "PlanNotFoundError", "SubscriptionImportNotFoundError", "InvalidStatusTransitionError", "LastApiKeyError", "PausePolicyViolatedError", "BulkRequestNotFinishedError", "BulkRequestAlreadyUndoneError", "HoldReleasedError", "TestClockMovedError", "ExternalIdInUseError", "StripeReadFailedError", "InvalidRequestError", "UnsupportedMediaTypeError", "PayloadTooLargeError", "InvalidScheduleError", "WebhookUrlNotAllowedError", "MethodNotAllowedError", "FilterTooBroadError", "StatusNotPatchableError", "StripeSignatureInvalidError", "IdempotencyKeyReusedError", "IdempotencyKeyInUseError", "StripeKeyOfTheOtherModeError", "TooManyRequestsError", "BillingConnectionNotFoundError", "EventDestinationNotFoundError", "InvalidAnalyticsRangeError", "CredentialsNeedTlsError", "Problem0142Error", "Problem0143Error", "InternalServerError", "Problem0901Error", "ServiceUnavailableError", "SecretsKeyMissingError", "GatewayTimeoutError", "PROBLEM_TYPES"]
