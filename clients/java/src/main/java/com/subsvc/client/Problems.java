// Generated from the spec's "Error codes" table by scripts/clients/problems.ts: do not edit.
package com.subsvc.client;

import java.net.http.HttpHeaders;
import com.subsvc.client.layer.ProblemException;

/** One exception per problem code of the spec, each a {@link ProblemException} (an {@link ApiException}). */
public final class Problems {
  private Problems() {}

  /** 0010: Unauthorized. */
  public static final class UnauthorizedError extends ProblemException {
    public static final String CODE = "0010";

    public UnauthorizedError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0011: Test mode only. */
  public static final class TestModeOnlyError extends ProblemException {
    public static final String CODE = "0011";

    public TestModeOnlyError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0020: Subscription not found. */
  public static final class SubscriptionNotFoundError extends ProblemException {
    public static final String CODE = "0020";

    public SubscriptionNotFoundError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0021: Problem 0021. */
  public static final class Problem0021Error extends ProblemException {
    public static final String CODE = "0021";

    public Problem0021Error(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0022: Bulk request not found. */
  public static final class BulkRequestNotFoundError extends ProblemException {
    public static final String CODE = "0022";

    public BulkRequestNotFoundError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0023: Webhook endpoint not found. */
  public static final class WebhookEndpointNotFoundError extends ProblemException {
    public static final String CODE = "0023";

    public WebhookEndpointNotFoundError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0024: Event not found. */
  public static final class EventNotFoundError extends ProblemException {
    public static final String CODE = "0024";

    public EventNotFoundError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0025: API key not found. */
  public static final class ApiKeyNotFoundError extends ProblemException {
    public static final String CODE = "0025";

    public ApiKeyNotFoundError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0026: Hold not found. */
  public static final class HoldNotFoundError extends ProblemException {
    public static final String CODE = "0026";

    public HoldNotFoundError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0027: Portal link not found. */
  public static final class PortalLinkNotFoundError extends ProblemException {
    public static final String CODE = "0027";

    public PortalLinkNotFoundError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0028: Plan not found. */
  public static final class PlanNotFoundError extends ProblemException {
    public static final String CODE = "0028";

    public PlanNotFoundError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0029: Subscription import not found. */
  public static final class SubscriptionImportNotFoundError extends ProblemException {
    public static final String CODE = "0029";

    public SubscriptionImportNotFoundError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0030: Invalid status transition. */
  public static final class InvalidStatusTransitionError extends ProblemException {
    public static final String CODE = "0030";

    public InvalidStatusTransitionError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0031: Last API key. */
  public static final class LastApiKeyError extends ProblemException {
    public static final String CODE = "0031";

    public LastApiKeyError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0032: Pause policy violated. */
  public static final class PausePolicyViolatedError extends ProblemException {
    public static final String CODE = "0032";

    public PausePolicyViolatedError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0033: Bulk request not finished. */
  public static final class BulkRequestNotFinishedError extends ProblemException {
    public static final String CODE = "0033";

    public BulkRequestNotFinishedError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0034: Bulk request already undone. */
  public static final class BulkRequestAlreadyUndoneError extends ProblemException {
    public static final String CODE = "0034";

    public BulkRequestAlreadyUndoneError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0035: Hold released. */
  public static final class HoldReleasedError extends ProblemException {
    public static final String CODE = "0035";

    public HoldReleasedError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0036: Test clock moved. */
  public static final class TestClockMovedError extends ProblemException {
    public static final String CODE = "0036";

    public TestClockMovedError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0037: External id in use. */
  public static final class ExternalIdInUseError extends ProblemException {
    public static final String CODE = "0037";

    public ExternalIdInUseError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0038: Stripe read failed. */
  public static final class StripeReadFailedError extends ProblemException {
    public static final String CODE = "0038";

    public StripeReadFailedError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0040: Invalid request. */
  public static final class InvalidRequestError extends ProblemException {
    public static final String CODE = "0040";

    public InvalidRequestError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0041: Unsupported media type. */
  public static final class UnsupportedMediaTypeError extends ProblemException {
    public static final String CODE = "0041";

    public UnsupportedMediaTypeError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0042: Payload too large. */
  public static final class PayloadTooLargeError extends ProblemException {
    public static final String CODE = "0042";

    public PayloadTooLargeError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0043: Invalid schedule. */
  public static final class InvalidScheduleError extends ProblemException {
    public static final String CODE = "0043";

    public InvalidScheduleError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0044: Webhook URL not allowed. */
  public static final class WebhookUrlNotAllowedError extends ProblemException {
    public static final String CODE = "0044";

    public WebhookUrlNotAllowedError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0045: Method not allowed. */
  public static final class MethodNotAllowedError extends ProblemException {
    public static final String CODE = "0045";

    public MethodNotAllowedError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0046: Filter too broad. */
  public static final class FilterTooBroadError extends ProblemException {
    public static final String CODE = "0046";

    public FilterTooBroadError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0047: Status not patchable. */
  public static final class StatusNotPatchableError extends ProblemException {
    public static final String CODE = "0047";

    public StatusNotPatchableError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0049: Stripe signature invalid. */
  public static final class StripeSignatureInvalidError extends ProblemException {
    public static final String CODE = "0049";

    public StripeSignatureInvalidError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0050: Idempotency key reused. */
  public static final class IdempotencyKeyReusedError extends ProblemException {
    public static final String CODE = "0050";

    public IdempotencyKeyReusedError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0051: Idempotency key in use. */
  public static final class IdempotencyKeyInUseError extends ProblemException {
    public static final String CODE = "0051";

    public IdempotencyKeyInUseError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0053: Stripe key of the other mode. */
  public static final class StripeKeyOfTheOtherModeError extends ProblemException {
    public static final String CODE = "0053";

    public StripeKeyOfTheOtherModeError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0060: Too many requests. */
  public static final class TooManyRequestsError extends ProblemException {
    public static final String CODE = "0060";

    public TooManyRequestsError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0120: Billing connection not found. */
  public static final class BillingConnectionNotFoundError extends ProblemException {
    public static final String CODE = "0120";

    public BillingConnectionNotFoundError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0121: Event destination not found. */
  public static final class EventDestinationNotFoundError extends ProblemException {
    public static final String CODE = "0121";

    public EventDestinationNotFoundError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0140: Invalid analytics range. */
  public static final class InvalidAnalyticsRangeError extends ProblemException {
    public static final String CODE = "0140";

    public InvalidAnalyticsRangeError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0141: Credentials need TLS. */
  public static final class CredentialsNeedTlsError extends ProblemException {
    public static final String CODE = "0141";

    public CredentialsNeedTlsError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0142: Problem 0142. */
  public static final class Problem0142Error extends ProblemException {
    public static final String CODE = "0142";

    public Problem0142Error(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0143: Problem 0143. */
  public static final class Problem0143Error extends ProblemException {
    public static final String CODE = "0143";

    public Problem0143Error(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0900: Internal Server Error. */
  public static final class InternalServerError extends ProblemException {
    public static final String CODE = "0900";

    public InternalServerError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0901: Problem 0901. */
  public static final class Problem0901Error extends ProblemException {
    public static final String CODE = "0901";

    public Problem0901Error(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0910: Service unavailable. */
  public static final class ServiceUnavailableError extends ProblemException {
    public static final String CODE = "0910";

    public ServiceUnavailableError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0911: Secrets key missing. */
  public static final class SecretsKeyMissingError extends ProblemException {
    public static final String CODE = "0911";

    public SecretsKeyMissingError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** 0920: Gateway timeout. */
  public static final class GatewayTimeoutError extends ProblemException {
    public static final String CODE = "0920";

    public GatewayTimeoutError(int status, String message, HttpHeaders headers, String body) {
      super(status, message, headers, body);
    }
  }

  /** An error answer as its code's exception, or a plain {@link ProblemException} for a code not in the table. */
  public static ProblemException of(int status, String message, HttpHeaders headers, String body) {
    switch (ProblemException.codeOf(body)) {
      case "0010":
        return new UnauthorizedError(status, message, headers, body);
      case "0011":
        return new TestModeOnlyError(status, message, headers, body);
      case "0020":
        return new SubscriptionNotFoundError(status, message, headers, body);
      case "0021":
        return new Problem0021Error(status, message, headers, body);
      case "0022":
        return new BulkRequestNotFoundError(status, message, headers, body);
      case "0023":
        return new WebhookEndpointNotFoundError(status, message, headers, body);
      case "0024":
        return new EventNotFoundError(status, message, headers, body);
      case "0025":
        return new ApiKeyNotFoundError(status, message, headers, body);
      case "0026":
        return new HoldNotFoundError(status, message, headers, body);
      case "0027":
        return new PortalLinkNotFoundError(status, message, headers, body);
      case "0028":
        return new PlanNotFoundError(status, message, headers, body);
      case "0029":
        return new SubscriptionImportNotFoundError(status, message, headers, body);
      case "0030":
        return new InvalidStatusTransitionError(status, message, headers, body);
      case "0031":
        return new LastApiKeyError(status, message, headers, body);
      case "0032":
        return new PausePolicyViolatedError(status, message, headers, body);
      case "0033":
        return new BulkRequestNotFinishedError(status, message, headers, body);
      case "0034":
        return new BulkRequestAlreadyUndoneError(status, message, headers, body);
      case "0035":
        return new HoldReleasedError(status, message, headers, body);
      case "0036":
        return new TestClockMovedError(status, message, headers, body);
      case "0037":
        return new ExternalIdInUseError(status, message, headers, body);
      case "0038":
        return new StripeReadFailedError(status, message, headers, body);
      case "0040":
        return new InvalidRequestError(status, message, headers, body);
      case "0041":
        return new UnsupportedMediaTypeError(status, message, headers, body);
      case "0042":
        return new PayloadTooLargeError(status, message, headers, body);
      case "0043":
        return new InvalidScheduleError(status, message, headers, body);
      case "0044":
        return new WebhookUrlNotAllowedError(status, message, headers, body);
      case "0045":
        return new MethodNotAllowedError(status, message, headers, body);
      case "0046":
        return new FilterTooBroadError(status, message, headers, body);
      case "0047":
        return new StatusNotPatchableError(status, message, headers, body);
      case "0049":
        return new StripeSignatureInvalidError(status, message, headers, body);
      case "0050":
        return new IdempotencyKeyReusedError(status, message, headers, body);
      case "0051":
        return new IdempotencyKeyInUseError(status, message, headers, body);
      case "0053":
        return new StripeKeyOfTheOtherModeError(status, message, headers, body);
      case "0060":
        return new TooManyRequestsError(status, message, headers, body);
      case "0120":
        return new BillingConnectionNotFoundError(status, message, headers, body);
      case "0121":
        return new EventDestinationNotFoundError(status, message, headers, body);
      case "0140":
        return new InvalidAnalyticsRangeError(status, message, headers, body);
      case "0141":
        return new CredentialsNeedTlsError(status, message, headers, body);
      case "0142":
        return new Problem0142Error(status, message, headers, body);
      case "0143":
        return new Problem0143Error(status, message, headers, body);
      case "0900":
        return new InternalServerError(status, message, headers, body);
      case "0901":
        return new Problem0901Error(status, message, headers, body);
      case "0910":
        return new ServiceUnavailableError(status, message, headers, body);
      case "0911":
        return new SecretsKeyMissingError(status, message, headers, body);
      case "0920":
        return new GatewayTimeoutError(status, message, headers, body);
      default:
        return new ProblemException(status, message, headers, body);
    }
  }
}
