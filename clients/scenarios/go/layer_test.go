// The client layer of the Go client (subsvc.NewClient, subsvc.All, subsvc.Verify) as a merchant uses
// it, against the target SUBSVC_TARGET names (scripts/clients/test.ts): retries through lost answers,
// every page of a list, typed errors and webhook verification. The same scenarios in TypeScript,
// Python and Java: clients/scenarios/*.
// Lost answers are made for real by a loopback proxy in front of the target: it forwards a request,
// then answers 503 in place of the target's answer (the target did the work; the client never heard).
package scenarios

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	subsvc "subscription-pause-resume/clients/go"
)

// layerTarget is what the layer's scenarios read of the target file beside `the`.
type layerTarget struct {
	// LayerIDs are subscriptions for these scenarios alone (scenarios_test.go takes from `ids`).
	LayerIDs map[string][]string `json:"layerIds"`
	// ListAPIKey is a merchant's with ListCount subscriptions and nothing else (null on the mock).
	ListAPIKey string `json:"listApiKey"`
	ListCount  *int   `json:"listCount"`
}

var (
	layer     layerTarget
	layerOnce sync.Once
)

func layerTake(t *testing.T, status string) string {
	layerOnce.Do(func() {
		raw, err := os.ReadFile(os.Getenv("SUBSVC_TARGET"))
		if err == nil {
			err = json.Unmarshal(raw, &layer)
		}
		if err != nil {
			panic(err)
		}
	})
	takeLock.Lock()
	defer takeLock.Unlock()
	if len(layer.LayerIDs[status]) == 0 {
		t.Fatalf("the target has no %s subscription left for the layer", status)
	}
	id := layer.LayerIDs[status][0]
	layer.LayerIDs[status] = layer.LayerIDs[status][1:]
	return id
}

// mockHeaders picks the mock's answer; an error's body is problem+json, so Accept names it.
func mockHeaders(prefer string) map[string]string {
	if the.Stateful {
		return nil
	}
	return map[string]string{"Prefer": prefer, "Accept": "application/json, application/problem+json"}
}

// lossyProxy forwards every request to the target, and answers 503 in place of the target's answer to the next `lose` POSTs.
type lossyProxy struct {
	mu   sync.Mutex
	lose int
	keys []string
}

func (p *lossyProxy) start(t *testing.T) *httptest.Server {
	upstream, err := url.Parse(the.BaseURL)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(upstream)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.keys = append(p.keys, r.Header.Get("Idempotency-Key"))
		lost := r.Method == http.MethodPost && p.lose > 0
		if lost {
			p.lose--
		}
		p.mu.Unlock()
		if !lost {
			forward.ServeHTTP(w, r)
			return
		}
		forward.ServeHTTP(httptest.NewRecorder(), r)
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"type":"about:blank","title":"Service unavailable","status":503,"detail":"lost on purpose","code":"0910"}`)
	}))
	t.Cleanup(server.Close)
	return server
}

func TestLayerRetriesAPauseWhoseFirstTwoAnswersAreLostWithOneIdempotencyKey200AppliedOnce(t *testing.T) {
	proxy := &lossyProxy{lose: 2}
	server := proxy.start(t)
	client := subsvc.NewClient(subsvc.Options{APIKey: the.APIKey, BaseURL: server.URL, InitialDelay: 20 * time.Millisecond})
	ctx := context.Background()
	id := layerTake(t, "fulfilled")
	paused, _, err := client.SubscriptionsAPI.PauseSubscription(ctx, id).Execute()
	if err != nil {
		t.Fatalf("pause: %v", err)
	}
	if paused.Status != subsvc.SUBSCRIPTIONSTATUS_PAUSED {
		t.Fatalf("status %s, want paused", paused.Status)
	}
	if len(proxy.keys) != 3 || proxy.keys[0] != proxy.keys[1] || proxy.keys[1] != proxy.keys[2] || !uuidPattern.MatchString(proxy.keys[0]) {
		t.Fatalf("Idempotency-Keys of the attempts: %q, want one UUID three times", proxy.keys)
	}
	if the.Stateful {
		if count := pausedEvents(t, client, id); count != 1 {
			t.Fatalf("%d subscription.paused events, want 1", count)
		}
	}
}

// pausedEvents counts the subscription's subscription.paused events, once there is one (events are recorded just after the change).
func pausedEvents(t *testing.T, client *subsvc.APIClient, id string) int {
	deadline := time.Now().Add(20 * time.Second)
	for {
		events, _, err := client.EventsAPI.ListEvents(context.Background()).SubscriptionId(id).Execute()
		if err != nil {
			t.Fatal(err)
		}
		count := 0
		for _, e := range events.Data {
			if e.SubscriptionEvent != nil && e.SubscriptionEvent.Type == "subscription.paused" {
				count++
			}
		}
		if count > 0 || time.Now().After(deadline) {
			return count
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestLayerSendsAPauseThroughSubsvcTestOutcomeUnavailable2RetriedWithOneKey200AppliedOnce(t *testing.T) {
	if !the.Stateful {
		t.Skip("the mock has no failures on demand: the service only")
	}
	client := subsvc.NewClient(subsvc.Options{APIKey: the.TestAPIKey, BaseURL: the.BaseURL, InitialDelay: 20 * time.Millisecond})
	ctx := context.Background()
	made, _, err := client.TestHelpersAPI.CreateTestSubscriptions(ctx).TestSubscriptionsCreate(*subsvc.NewTestSubscriptionsCreate(1)).Execute()
	if err != nil {
		t.Fatal(err)
	}
	id := made.Data[0].Id
	paused, _, err := client.SubscriptionsAPI.PauseSubscription(ctx, id).SubsvcTestOutcome("unavailable:2").Execute()
	if err != nil {
		t.Fatalf("pause through unavailable:2: %v", err)
	}
	if paused.Status != subsvc.SUBSCRIPTIONSTATUS_PAUSED {
		t.Fatalf("status %s, want paused", paused.Status)
	}
	if count := pausedEvents(t, client, id); count != 1 {
		t.Fatalf("%d subscription.paused events, want 1", count)
	}
}

func TestLayerIteratesOverEveryPageOfAListEachSubscriptionOnce(t *testing.T) {
	layerTake(t, "fulfilled") // reads the target's layer part
	client := subsvc.NewClient(subsvc.Options{APIKey: layer.ListAPIKey, BaseURL: the.BaseURL})
	seen := map[string]bool{}
	count := 0
	for s, err := range subsvc.All[subsvc.Subscription](client.SubscriptionsAPI.ListSubscriptions(context.Background()).Limit(100)) {
		if err != nil {
			t.Fatal(err)
		}
		seen[s.Id] = true
		count++
	}
	if len(seen) != count {
		t.Fatalf("%d items, %d distinct", count, len(seen))
	}
	if layer.ListCount != nil && count != *layer.ListCount {
		t.Fatalf("%d subscriptions listed, want %d", count, *layer.ListCount)
	}
	if count == 0 {
		t.Fatal("nothing listed")
	}
}

func TestLayerReturnsAConflictAsInvalidStatusTransitionErrorWithStatusCodeDetailAndRequestID(t *testing.T) {
	client := subsvc.NewClient(subsvc.Options{APIKey: the.APIKey, BaseURL: the.BaseURL, Headers: mockHeaders("code=409")})
	_, _, err := client.SubscriptionsAPI.PauseSubscription(context.Background(), layerTake(t, "cancelled")).Execute()
	var conflict *subsvc.InvalidStatusTransitionError
	if !errors.As(err, &conflict) {
		t.Fatalf("got %v, want an InvalidStatusTransitionError", err)
	}
	if conflict.Status != 409 || conflict.Code != "0030" || conflict.Detail == "" || (the.Stateful && conflict.RequestID == "") {
		t.Fatalf("got %+v", conflict.ProblemError)
	}
	var problem *subsvc.ProblemError
	if !errors.As(err, &problem) {
		t.Fatal("an InvalidStatusTransitionError is a ProblemError too")
	}
}

const webhookBody = `{"type":"subscription.paused","timestamp":"2026-12-06T10:00:00.000000Z","livemode":true,"data":{"subscription":{"id":"6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60","merchantId":"0b7e4c1a-2d3f-4e5a-8b9c-0d1e2f3a4b5c","planId":"1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f","status":"paused","cycle":3,"createdAt":"2026-11-01T08:00:00.000000Z","modifiedAt":"2026-12-06T10:00:00.000000Z","livemode":true},"previousStatus":"fulfilled","cause":{"kind":"api"}}}`

// signedHeader signs body as the service does (Standard Webhooks), with key at `at`.
func signedHeader(key []byte, body string, at time.Time) http.Header {
	id := "msg_" + strconv.FormatInt(at.UnixNano(), 10)
	timestamp := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "." + body))
	header := http.Header{}
	header.Set("webhook-id", id)
	header.Set("webhook-timestamp", timestamp)
	header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	return header
}

func TestLayerVerifyAcceptsAGoodSignatureAndGivesTheTypedEvent(t *testing.T) {
	key := bytes.Repeat([]byte("k"), 24)
	event, err := subsvc.Verify([]byte(webhookBody), signedHeader(key, webhookBody, time.Now()), "whsec_"+base64.StdEncoding.EncodeToString(key))
	if err != nil {
		t.Fatal(err)
	}
	if event.Type != "subscription.paused" || event.Subscription == nil || event.Subscription.Data.PreviousStatus != subsvc.SUBSCRIPTIONSTATUS_FULFILLED {
		t.Fatalf("got %+v", event)
	}
}

func TestLayerVerifyRefusesABadSignatureAndAnOldTimestamp(t *testing.T) {
	key := bytes.Repeat([]byte("k"), 24)
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	var refused *subsvc.WebhookVerificationError
	tampered := strings.Replace(webhookBody, `"cycle":3`, `"cycle":4`, 1)
	if _, err := subsvc.Verify([]byte(tampered), signedHeader(key, webhookBody, time.Now()), secret); !errors.As(err, &refused) {
		t.Fatalf("a tampered body: got %v", err)
	}
	if _, err := subsvc.Verify([]byte(webhookBody), signedHeader(key, webhookBody, time.Now().Add(-10*time.Minute)), secret); !errors.As(err, &refused) {
		t.Fatalf("an old timestamp: got %v", err)
	}
	if _, err := subsvc.Verify([]byte(webhookBody), signedHeader([]byte("not the secret"), webhookBody, time.Now()), secret); !errors.As(err, &refused) {
		t.Fatalf("another key: got %v", err)
	}
}
