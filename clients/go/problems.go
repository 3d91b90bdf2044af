// Generated from the spec's "Error codes" table by scripts/clients/problems.ts: do not edit.

package subsvc

// UnauthorizedError is the problem 0010: Unauthorized.
type UnauthorizedError struct{ *ProblemError }

func (e *UnauthorizedError) Unwrap() error { return e.ProblemError }

// TestModeOnlyError is the problem 0011: Test mode only.
type TestModeOnlyError struct{ *ProblemError }

func (e *TestModeOnlyError) Unwrap() error { return e.ProblemError }

// SubscriptionNotFoundError is the problem 0020: Subscription not found.
type SubscriptionNotFoundError struct{ *ProblemError }

func (e *SubscriptionNotFoundError) Unwrap() error { return e.ProblemError }

// Problem0021Error is the problem 0021: Problem 0021.
type Problem0021Error struct{ *ProblemError }

func (e *Problem0021Error) Unwrap() error { return e.ProblemError }

// BulkRequestNotFoundError is the problem 0022: Bulk request not found.
type BulkRequestNotFoundError struct{ *ProblemError }

func (e *BulkRequestNotFoundError) Unwrap() error { return e.ProblemError }

// WebhookEndpointNotFoundError is the problem 0023: Webhook endpoint not found.
type WebhookEndpointNotFoundError struct{ *ProblemError }

func (e *WebhookEndpointNotFoundError) Unwrap() error { return e.ProblemError }

// EventNotFoundError is the problem 0024: Event not found.
type EventNotFoundError struct{ *ProblemError }

func (e *EventNotFoundError) Unwrap() error { return e.ProblemError }

// ApiKeyNotFoundError is the problem 0025: API key not found.
type ApiKeyNotFoundError struct{ *ProblemError }

func (e *ApiKeyNotFoundError) Unwrap() error { return e.ProblemError }

// HoldNotFoundError is the problem 0026: Hold not found.
type HoldNotFoundError struct{ *ProblemError }

func (e *HoldNotFoundError) Unwrap() error { return e.ProblemError }

// PortalLinkNotFoundError is the problem 0027: Portal link not found.
type PortalLinkNotFoundError struct{ *ProblemError }

func (e *PortalLinkNotFoundError) Unwrap() error { return e.ProblemError }

// PlanNotFoundError is the problem 0028: Plan not found.
type PlanNotFoundError struct{ *ProblemError }

func (e *PlanNotFoundError) Unwrap() error { return e.ProblemError }

// SubscriptionImportNotFoundError is the problem 0029: Subscription import not found.
type SubscriptionImportNotFoundError struct{ *ProblemError }

func (e *SubscriptionImportNotFoundError) Unwrap() error { return e.ProblemError }

// InvalidStatusTransitionError is the problem 0030: Invalid status transition.
type InvalidStatusTransitionError struct{ *ProblemError }

func (e *InvalidStatusTransitionError) Unwrap() error { return e.ProblemError }

// LastApiKeyError is the problem 0031: Last API key.
type LastApiKeyError struct{ *ProblemError }

func (e *LastApiKeyError) Unwrap() error { return e.ProblemError }

// PausePolicyViolatedError is the problem 0032: Pause policy violated.
type PausePolicyViolatedError struct{ *ProblemError }

func (e *PausePolicyViolatedError) Unwrap() error { return e.ProblemError }

// BulkRequestNotFinishedError is the problem 0033: Bulk request not finished.
type BulkRequestNotFinishedError struct{ *ProblemError }

func (e *BulkRequestNotFinishedError) Unwrap() error { return e.ProblemError }

// BulkRequestAlreadyUndoneError is the problem 0034: Bulk request already undone.
type BulkRequestAlreadyUndoneError struct{ *ProblemError }

func (e *BulkRequestAlreadyUndoneError) Unwrap() error { return e.ProblemError }

// HoldReleasedError is the problem 0035: Hold released.
type HoldReleasedError struct{ *ProblemError }

func (e *HoldReleasedError) Unwrap() error { return e.ProblemError }

// TestClockMovedError is the problem 0036: Test clock moved.
type TestClockMovedError struct{ *ProblemError }

func (e *TestClockMovedError) Unwrap() error { return e.ProblemError }

// ExternalIdInUseError is the problem 0037: External id in use.
type ExternalIdInUseError struct{ *ProblemError }

func (e *ExternalIdInUseError) Unwrap() error { return e.ProblemError }

// StripeReadFailedError is the problem 0038: Stripe read failed.
type StripeReadFailedError struct{ *ProblemError }

func (e *StripeReadFailedError) Unwrap() error { return e.ProblemError }

// InvalidRequestError is the problem 0040: Invalid request.
type InvalidRequestError struct{ *ProblemError }

func (e *InvalidRequestError) Unwrap() error { return e.ProblemError }

// UnsupportedMediaTypeError is the problem 0041: Unsupported media type.
type UnsupportedMediaTypeError struct{ *ProblemError }

func (e *UnsupportedMediaTypeError) Unwrap() error { return e.ProblemError }

// PayloadTooLargeError is the problem 0042: Payload too large.
type PayloadTooLargeError struct{ *ProblemError }

func (e *PayloadTooLargeError) Unwrap() error { return e.ProblemError }

// InvalidScheduleError is the problem 0043: Invalid schedule.
type InvalidScheduleError struct{ *ProblemError }

func (e *InvalidScheduleError) Unwrap() error { return e.ProblemError }

// WebhookUrlNotAllowedError is the problem 0044: Webhook URL not allowed.
type WebhookUrlNotAllowedError struct{ *ProblemError }

func (e *WebhookUrlNotAllowedError) Unwrap() error { return e.ProblemError }

// MethodNotAllowedError is the problem 0045: Method not allowed.
type MethodNotAllowedError struct{ *ProblemError }

func (e *MethodNotAllowedError) Unwrap() error { return e.ProblemError }

// FilterTooBroadError is the problem 0046: Filter too broad.
type FilterTooBroadError struct{ *ProblemError }

func (e *FilterTooBroadError) Unwrap() error { return e.ProblemError }

// StatusNotPatchableError is the problem 0047: Status not patchable.
type StatusNotPatchableError struct{ *ProblemError }

func (e *StatusNotPatchableError) Unwrap() error { return e.ProblemError }

// StripeSignatureInvalidError is the problem 0049: Stripe signature invalid.
type StripeSignatureInvalidError struct{ *ProblemError }

func (e *StripeSignatureInvalidError) Unwrap() error { return e.ProblemError }

// IdempotencyKeyReusedError is the problem 0050: Idempotency key reused.
type IdempotencyKeyReusedError struct{ *ProblemError }

func (e *IdempotencyKeyReusedError) Unwrap() error { return e.ProblemError }

// IdempotencyKeyInUseError is the problem 0051: Idempotency key in use.
type IdempotencyKeyInUseError struct{ *ProblemError }

func (e *IdempotencyKeyInUseError) Unwrap() error { return e.ProblemError }

// StripeKeyOfTheOtherModeError is the problem 0053: Stripe key of the other mode.
type StripeKeyOfTheOtherModeError struct{ *ProblemError }

func (e *StripeKeyOfTheOtherModeError) Unwrap() error { return e.ProblemError }

// TooManyRequestsError is the problem 0060: Too many requests.
type TooManyRequestsError struct{ *ProblemError }

func (e *TooManyRequestsError) Unwrap() error { return e.ProblemError }

// BillingConnectionNotFoundError is the problem 0120: Billing connection not found.
type BillingConnectionNotFoundError struct{ *ProblemError }

func (e *BillingConnectionNotFoundError) Unwrap() error { return e.ProblemError }

// EventDestinationNotFoundError is the problem 0121: Event destination not found.
type EventDestinationNotFoundError struct{ *ProblemError }

func (e *EventDestinationNotFoundError) Unwrap() error { return e.ProblemError }

// InvalidAnalyticsRangeError is the problem 0140: Invalid analytics range.
type InvalidAnalyticsRangeError struct{ *ProblemError }

func (e *InvalidAnalyticsRangeError) Unwrap() error { return e.ProblemError }

// CredentialsNeedTlsError is the problem 0141: Credentials need TLS.
type CredentialsNeedTlsError struct{ *ProblemError }

func (e *CredentialsNeedTlsError) Unwrap() error { return e.ProblemError }

// Problem0142Error is the problem 0142: Problem 0142.
type Problem0142Error struct{ *ProblemError }

func (e *Problem0142Error) Unwrap() error { return e.ProblemError }

// Problem0143Error is the problem 0143: Problem 0143.
type Problem0143Error struct{ *ProblemError }

func (e *Problem0143Error) Unwrap() error { return e.ProblemError }

// InternalServerError is the problem 0900: Internal Server Error.
type InternalServerError struct{ *ProblemError }

func (e *InternalServerError) Unwrap() error { return e.ProblemError }

// Problem0901Error is the problem 0901: Problem 0901.
type Problem0901Error struct{ *ProblemError }

func (e *Problem0901Error) Unwrap() error { return e.ProblemError }

// ServiceUnavailableError is the problem 0910: Service unavailable.
type ServiceUnavailableError struct{ *ProblemError }

func (e *ServiceUnavailableError) Unwrap() error { return e.ProblemError }

// SecretsKeyMissingError is the problem 0911: Secrets key missing.
type SecretsKeyMissingError struct{ *ProblemError }

func (e *SecretsKeyMissingError) Unwrap() error { return e.ProblemError }

// GatewayTimeoutError is the problem 0920: Gateway timeout.
type GatewayTimeoutError struct{ *ProblemError }

func (e *GatewayTimeoutError) Unwrap() error { return e.ProblemError }

// problemType wraps a problem in its code's error type.
func problemType(p *ProblemError) error {
	switch p.Code {
	case "0010":
		return &UnauthorizedError{p}
	case "0011":
		return &TestModeOnlyError{p}
	case "0020":
		return &SubscriptionNotFoundError{p}
	case "0021":
		return &Problem0021Error{p}
	case "0022":
		return &BulkRequestNotFoundError{p}
	case "0023":
		return &WebhookEndpointNotFoundError{p}
	case "0024":
		return &EventNotFoundError{p}
	case "0025":
		return &ApiKeyNotFoundError{p}
	case "0026":
		return &HoldNotFoundError{p}
	case "0027":
		return &PortalLinkNotFoundError{p}
	case "0028":
		return &PlanNotFoundError{p}
	case "0029":
		return &SubscriptionImportNotFoundError{p}
	case "0030":
		return &InvalidStatusTransitionError{p}
	case "0031":
		return &LastApiKeyError{p}
	case "0032":
		return &PausePolicyViolatedError{p}
	case "0033":
		return &BulkRequestNotFinishedError{p}
	case "0034":
		return &BulkRequestAlreadyUndoneError{p}
	case "0035":
		return &HoldReleasedError{p}
	case "0036":
		return &TestClockMovedError{p}
	case "0037":
		return &ExternalIdInUseError{p}
	case "0038":
		return &StripeReadFailedError{p}
	case "0040":
		return &InvalidRequestError{p}
	case "0041":
		return &UnsupportedMediaTypeError{p}
	case "0042":
		return &PayloadTooLargeError{p}
	case "0043":
		return &InvalidScheduleError{p}
	case "0044":
		return &WebhookUrlNotAllowedError{p}
	case "0045":
		return &MethodNotAllowedError{p}
	case "0046":
		return &FilterTooBroadError{p}
	case "0047":
		return &StatusNotPatchableError{p}
	case "0049":
		return &StripeSignatureInvalidError{p}
	case "0050":
		return &IdempotencyKeyReusedError{p}
	case "0051":
		return &IdempotencyKeyInUseError{p}
	case "0053":
		return &StripeKeyOfTheOtherModeError{p}
	case "0060":
		return &TooManyRequestsError{p}
	case "0120":
		return &BillingConnectionNotFoundError{p}
	case "0121":
		return &EventDestinationNotFoundError{p}
	case "0140":
		return &InvalidAnalyticsRangeError{p}
	case "0141":
		return &CredentialsNeedTlsError{p}
	case "0142":
		return &Problem0142Error{p}
	case "0143":
		return &Problem0143Error{p}
	case "0900":
		return &InternalServerError{p}
	case "0901":
		return &Problem0901Error{p}
	case "0910":
		return &ServiceUnavailableError{p}
	case "0911":
		return &SecretsKeyMissingError{p}
	case "0920":
		return &GatewayTimeoutError{p}
	}
	return p
}
