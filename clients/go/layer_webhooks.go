// The client layer (hand-written; docs/clients.md): webhooks verified and typed.

package subsvc

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// WebhookTolerance is how far a delivery's timestamp may be from now (the Standard Webhooks default).
const WebhookTolerance = 5 * time.Minute

// WebhookVerificationError is a delivery that is not the service's: a missing header, a bad
// signature, or a timestamp too old or too new.
type WebhookVerificationError struct{ Reason string }

func (e *WebhookVerificationError) Error() string { return "webhook not verified: " + e.Reason }

// WebhookEvent is a verified delivery: Subscription for subscription.* events, BulkRequest for bulk_request.* ones.
type WebhookEvent struct {
	Type         string
	Subscription *SubscriptionWebhook
	BulkRequest  *BulkRequestWebhook
}

// Verify checks a delivery as the service signs it (Standard Webhooks): the signature over
// `webhook-id.webhook-timestamp.body` with the endpoint's whsec_ secret, and the timestamp's age;
// then it gives the typed event. body is the request body exactly as received.
func Verify(body []byte, header http.Header, secret string) (*WebhookEvent, error) {
	return verifyAt(body, header, secret, time.Now())
}

func verifyAt(body []byte, header http.Header, secret string, now time.Time) (*WebhookEvent, error) {
	id, timestamp, signatures := header.Get("webhook-id"), header.Get("webhook-timestamp"), header.Get("webhook-signature")
	if id == "" || timestamp == "" || signatures == "" {
		return nil, &WebhookVerificationError{"a webhook-id, webhook-timestamp or webhook-signature header is missing"}
	}
	seconds, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || now.Sub(time.Unix(seconds, 0)).Abs() > WebhookTolerance {
		return nil, &WebhookVerificationError{"the webhook-timestamp is too old or too new"}
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return nil, &WebhookVerificationError{"the secret is not a whsec_ secret"}
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(body)
	expected := mac.Sum(nil)
	matched := false
	for _, entry := range strings.Split(signatures, " ") {
		version, signature, _ := strings.Cut(entry, ",")
		decoded, err := base64.StdEncoding.DecodeString(signature)
		if version == "v1" && err == nil && hmac.Equal(decoded, expected) {
			matched = true
			break
		}
	}
	if !matched {
		return nil, &WebhookVerificationError{"no webhook-signature matches the body"}
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return nil, &WebhookVerificationError{"the body is not JSON"}
	}
	event := &WebhookEvent{Type: head.Type}
	if strings.HasPrefix(head.Type, "bulk_request.") {
		event.BulkRequest = &BulkRequestWebhook{}
		err = json.Unmarshal(body, event.BulkRequest)
	} else {
		event.Subscription = &SubscriptionWebhook{}
		err = json.Unmarshal(body, event.Subscription)
	}
	if err != nil {
		return nil, &WebhookVerificationError{"the body is not the event's schema: " + err.Error()}
	}
	return event, nil
}
