// A merchant's scenarios with the Go client (clients/go), run by `go test` in a scratch module
// (scripts/clients/test.ts) against the target SUBSVC_TARGET names: the Prism mock or the service,
// each behind a proxy that checks every answer against the spec. The same scenarios in Python and
// TypeScript: clients/scenarios/python, clients/scenarios/typescript.
package scenarios

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	subsvc "subscription-pause-resume/clients/go"
)

type target struct {
	Name        string              `json:"name"`
	BaseURL     string              `json:"baseUrl"`
	Stateful    bool                `json:"stateful"`
	SpecVersion string              `json:"specVersion"`
	APIKey      string              `json:"apiKey"`
	TestAPIKey  string              `json:"testApiKey"`
	IDs         map[string][]string `json:"ids"`
}

var (
	the             target
	takeLock        sync.Mutex
	microsecondsUTC = regexp.MustCompile(`\.\d{6}Z$`)
	uuidPattern     = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	reason          = "Travelling until the 1st"
	errNotReadyYet  = errors.New("not yet")
)

func TestMain(m *testing.M) {
	raw, err := os.ReadFile(os.Getenv("SUBSVC_TARGET"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "SUBSVC_TARGET names no readable target file:", err)
		os.Exit(2)
	}
	if err := json.Unmarshal(raw, &the); err != nil {
		fmt.Fprintln(os.Stderr, "the target file is not JSON:", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

func take(t *testing.T, status string) string {
	takeLock.Lock()
	defer takeLock.Unlock()
	if len(the.IDs[status]) == 0 {
		t.Fatalf("the target has no %s subscription left", status)
	}
	id := the.IDs[status][0]
	the.IDs[status] = the.IDs[status][1:]
	return id
}

// client is the Go client on the target; on the mock, `prefer` picks its answer (the service decides
// by itself). An error's body is application/problem+json, so Accept names it too.
func client(apiKey, prefer string) (*subsvc.APIClient, context.Context) {
	configuration := subsvc.NewConfiguration()
	configuration.Servers = subsvc.ServerConfigurations{{URL: the.BaseURL}}
	if !the.Stateful && prefer != "" {
		configuration.AddDefaultHeader("Prefer", prefer)
		configuration.AddDefaultHeader("Accept", "application/json, application/problem+json")
	}
	ctx := context.Background()
	if apiKey != "" {
		ctx = context.WithValue(ctx, subsvc.ContextAPIKeys, map[string]subsvc.APIKey{"ApiKey": {Key: apiKey}})
	}
	return subsvc.NewAPIClient(configuration), ctx
}

func poll[T any](t *testing.T, what string, read func() (T, error)) T {
	deadline := time.Now().Add(20 * time.Second)
	for {
		value, err := read()
		if err == nil {
			return value
		}
		if !errors.Is(err, errNotReadyYet) || time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// problemOf is the status and code of the problem an operation answered with.
func problemOf(t *testing.T, response *http.Response, err error) (int, string) {
	t.Helper()
	var apiError *subsvc.GenericOpenAPIError
	if !errors.As(err, &apiError) || response == nil {
		t.Fatalf("expected a problem, got %v", err)
	}
	if !strings.HasPrefix(response.Header.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("a problem's media type, got %q", response.Header.Get("Content-Type"))
	}
	var problem struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal(apiError.Body(), &problem); err != nil {
		t.Fatalf("the problem's body is not JSON: %v", err)
	}
	return response.StatusCode, problem.Code
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		var apiError *subsvc.GenericOpenAPIError
		if errors.As(err, &apiError) {
			t.Fatalf("%v: %s", err, apiError.Body())
		}
		t.Fatal(err)
	}
}

func TestIsTheContractsVersion(t *testing.T) {
	if version := subsvc.NewConfiguration().UserAgent; !strings.Contains(version, "/"+the.SpecVersion+"/") {
		t.Fatalf("the client's user agent %q names another version than the contract's %s", version, the.SpecVersion)
	}
}

func TestPausesASubscription200WithItPausedMerchantIDIncluded(t *testing.T) {
	api, ctx := client(the.APIKey, "")
	paused, _, err := api.SubscriptionsAPI.PauseSubscription(ctx, take(t, "fulfilled")).Execute()
	must(t, err)
	if paused.Status != subsvc.SUBSCRIPTIONSTATUS_PAUSED || !uuidPattern.MatchString(paused.MerchantId) || !microsecondsUTC.MatchString(paused.ModifiedAt) {
		t.Fatalf("a paused subscription with its merchant and a microsecond UTC modifiedAt, got %+v", paused)
	}
}

func TestCreatesASubscriptionFindsItByExternalIDAndCancelsIt(t *testing.T) {
	api, ctx := client(the.APIKey, "")
	externalID := "sub_" + newPlanID()
	body := subsvc.NewSubscriptionCreate(externalID, newPlanID())
	body.SetMetadata(map[string]string{"crm": "A-1"})
	created, _, err := api.SubscriptionsAPI.CreateSubscription(ctx).SubscriptionCreate(*body).Execute()
	must(t, err)
	if created.Status != subsvc.SUBSCRIPTIONSTATUS_FULFILLED {
		t.Fatalf("fulfilled, got %s", created.Status)
	}
	if the.Stateful {
		found, _, err := api.SubscriptionsAPI.ListSubscriptions(ctx).ExternalId(externalID).Execute()
		must(t, err)
		if created.GetExternalId() != externalID || len(found.Data) != 1 || found.Data[0].Id != created.Id {
			t.Fatalf("the subscription created, found by its externalId %s, got %+v and %+v", externalID, created, found.Data)
		}
	}
	reason := subsvc.NewSubscriptionCancel()
	reason.SetReason("closed")
	cancelled, _, err := api.SubscriptionsAPI.CancelSubscription(ctx, created.Id).SubscriptionCancel(*reason).Execute()
	must(t, err)
	if cancelled.Status != subsvc.SUBSCRIPTIONSTATUS_CANCELLED {
		t.Fatalf("cancelled, got %s", cancelled.Status)
	}
}

func TestResumesASubscription200WithItFulfilled(t *testing.T) {
	api, ctx := client(the.APIKey, "")
	resumed, _, err := api.SubscriptionsAPI.ResumeSubscription(ctx, take(t, "paused")).Execute()
	must(t, err)
	if resumed.Status != subsvc.SUBSCRIPTIONSTATUS_FULFILLED {
		t.Fatalf("fulfilled, got %s", resumed.Status)
	}
}

func TestRetriesAPauseWithTheSameIdempotencyKeyTheSameAnswerReplayedByTheService(t *testing.T) {
	api, ctx := client(the.APIKey, "")
	id, key := take(t, "fulfilled"), fmt.Sprintf("go-%d", time.Now().UnixNano())
	first, firstResponse, err := api.SubscriptionsAPI.PauseSubscription(ctx, id).IdempotencyKey(key).Execute()
	must(t, err)
	again, againResponse, err := api.SubscriptionsAPI.PauseSubscription(ctx, id).IdempotencyKey(key).Execute()
	must(t, err)
	if firstResponse.StatusCode != 200 || againResponse.StatusCode != 200 {
		t.Fatalf("200 twice, got %d and %d", firstResponse.StatusCode, againResponse.StatusCode)
	}
	// The mock remembers nothing, so never replays (the spec says so).
	if the.Stateful && (againResponse.Header.Get("Idempotent-Replayed") != "true" || again.ModifiedAt != first.ModifiedAt) {
		t.Fatalf("the first answer replayed, got %q and %+v", againResponse.Header.Get("Idempotent-Replayed"), again)
	}
}

func TestBulkPausesSubscriptionsAndFollowsTheRequestFromIts202ToEachOutcome(t *testing.T) {
	bulk, ctx := client(the.APIKey, "code=202")
	api, _ := client(the.APIKey, "")
	request := subsvc.NewBulkPauseRequest()
	request.SetSubscriptions([]string{take(t, "fulfilled"), take(t, "fulfilled")})
	accepted, response, err := bulk.SubscriptionsAPI.BulkPauseSubscriptions(ctx).BulkCommandRequest(*request).Execute()
	must(t, err)
	if response.StatusCode != 202 || accepted.Operation != subsvc.BULKOPERATION_PAUSE {
		t.Fatalf("202 PAUSE, got %d %s", response.StatusCode, accepted.Operation)
	}
	if location := response.Header.Get("Location"); location != "/v2/bulk-requests/"+accepted.RequestId {
		t.Fatalf("Location names the request, got %q", location)
	}
	status := poll(t, "the bulk request to complete", func() (*subsvc.BulkRequest, error) {
		status, _, err := api.BulkRequestsAPI.GetBulkRequest(ctx, accepted.RequestId).Execute()
		if err == nil && status.State != "completed" {
			err = errNotReadyYet
		}
		return status, err
	})
	c := status.Counts
	if c.Pending+c.Applied+c.Noop+c.Skipped+c.Failed != status.AcceptedCount {
		t.Fatalf("the counts add up to the accepted count, got %+v of %d", c, status.AcceptedCount)
	}
	items, _, err := api.BulkRequestsAPI.ListBulkRequestItems(ctx, accepted.RequestId).Execute()
	must(t, err)
	reader, _ := client(the.APIKey, "example=paused")
	applied := 0
	for _, item := range items.Data {
		if item.Outcome != subsvc.COMMANDOUTCOME_APPLIED {
			continue
		}
		applied++
		read, _, err := reader.SubscriptionsAPI.GetSubscription(ctx, item.SubscriptionId).Execute()
		must(t, err)
		if read.Status != subsvc.SUBSCRIPTIONSTATUS_PAUSED {
			t.Fatalf("an applied item's subscription is paused, got %s", read.Status)
		}
	}
	if applied == 0 {
		t.Fatal("no item applied")
	}
}

func TestPreviewsABulkPauseAndABulkResume200WithWhatEachWouldMatchAndNothingChanged(t *testing.T) {
	api, ctx := client(the.APIKey, "")
	active, cancelled := take(t, "fulfilled"), take(t, "cancelled")
	pauseRequest := bulkPausePreview([]string{active, cancelled, "3f2c1d0e-9b8a-4c7d-8e6f-5a4b3c2d1e0f"})
	pause, _, err := api.SubscriptionsAPI.PreviewBulkPause(ctx).BulkPausePreviewRequest(pauseRequest).Execute()
	must(t, err)
	resumeRequest := subsvc.BulkPreviewRequest{Filter: &subsvc.BulkFilter{Status: []subsvc.SubscriptionStatus{subsvc.SUBSCRIPTIONSTATUS_PAUSED}}}
	resume, _, err := api.SubscriptionsAPI.PreviewBulkResume(ctx).BulkPreviewRequest(resumeRequest).Execute()
	must(t, err)
	for _, preview := range []*subsvc.BulkDryRun{pause, resume} {
		if len(preview.Sample) > min(20, int(preview.MatchedCount)) {
			t.Fatalf("a sample of at most min(20, matchedCount), got %+v", preview)
		}
	}
	if !the.Stateful { // the mock answers the spec's one example
		return
	}
	if pause.MatchedCount != 2 || pause.CancelledCount != 1 || pause.PolicyRejectedCount != 0 || len(pause.Sample) != 1 || pause.Sample[0] != active {
		t.Fatalf("2 matched, 1 cancelled, 0 refused by the policy, the active one in the sample, got %+v", pause)
	}
	read, _, err := api.SubscriptionsAPI.GetSubscription(ctx, active).Execute()
	must(t, err)
	if read.Status != subsvc.SUBSCRIPTIONSTATUS_FULFILLED {
		t.Fatalf("a preview changes nothing, got %s", read.Status)
	}
	if int(resume.MatchedCount) != len(resume.Sample) || resume.CancelledCount != 0 {
		t.Fatalf("every paused one in the sample, none cancelled, got %+v", resume)
	}
}

// bulkPausePreview is a bulk pause's preview of these ids.
func bulkPausePreview(ids []string) subsvc.BulkPausePreviewRequest {
	request := subsvc.NewBulkPausePreviewRequest()
	request.SetSubscriptions(ids)
	return *request
}

func TestFindsTheEventOfAPauseInTheEventsListNewestFirstAndReadsItByItsID(t *testing.T) {
	api, ctx := client(the.APIKey, "")
	paused, _, err := api.SubscriptionsAPI.PauseSubscription(ctx, take(t, "fulfilled")).Execute()
	must(t, err)
	listed := poll(t, "the pause event", func() (*subsvc.SubscriptionEvent, error) {
		page, _, err := api.EventsAPI.ListEvents(ctx).Type_(subsvc.EVENTTYPE_SUBSCRIPTION_PAUSED).Limit(100).Execute()
		if err != nil {
			return nil, err
		}
		for _, event := range page.Data {
			found := event.SubscriptionEvent
			if found != nil && (!the.Stateful || found.Data.Subscription.Id == paused.Id) {
				return found, nil
			}
		}
		return nil, errNotReadyYet
	})
	if listed.Type != "subscription.paused" {
		t.Fatalf("a subscription.paused event, got %q", listed.Type)
	}
	if !the.Stateful {
		return
	}
	read, _, err := api.EventsAPI.GetEvent(ctx, listed.Id).Execute()
	must(t, err)
	if read.SubscriptionEvent == nil || read.SubscriptionEvent.Id != listed.Id || read.SubscriptionEvent.CreatedAt != listed.CreatedAt {
		t.Fatalf("the event read by its id is the one listed, got %+v", read)
	}
}

func TestBulkResumesWithAnIDItDoesNotKnowAcceptedAndEveryRejectedIDHasADocumentedReason(t *testing.T) {
	api, ctx := client(the.APIKey, "code=202")
	request := subsvc.NewBulkCommandRequest()
	request.SetSubscriptions([]string{take(t, "paused"), "3f2c1d0e-9b8a-4c7d-8e6f-5a4b3c2d1e0f"})
	accepted, _, err := api.SubscriptionsAPI.BulkResumeSubscriptions(ctx).BulkCommandRequest(*request).Execute()
	must(t, err)
	for _, rejected := range accepted.Rejected {
		if rejected.Reason != "not_found" && rejected.Reason != "cancelled" {
			t.Fatalf("a documented reason, got %q", rejected.Reason)
		}
	}
	// The mock answers with the spec's one 202 example, a pause's.
	if the.Stateful && (accepted.Operation != subsvc.BULKOPERATION_RESUME || accepted.AcceptedCount != 1 || len(accepted.Rejected) != 1) {
		t.Fatalf("RESUME, 1 accepted, 1 rejected, got %+v", accepted)
	}
}

func TestPausesUntilATimeAheadWithAReasonReadsTheScheduleBackThenDropsIt(t *testing.T) {
	api, ctx := client(the.APIKey, "example=pausedUntil")
	plain, _ := client(the.APIKey, "")
	request := subsvc.NewPauseRequest()
	request.SetResumeAt(time.Now().UTC().Add(10 * time.Minute))
	request.SetReason(reason)
	paused, _, err := api.SubscriptionsAPI.PauseSubscription(ctx, take(t, "fulfilled")).CommandRequest(*request).Execute()
	must(t, err)
	if paused.Status != subsvc.SUBSCRIPTIONSTATUS_PAUSED || paused.GetPauseReason() != reason || !microsecondsUTC.MatchString(paused.Schedule.GetResumeAt()) {
		t.Fatalf("paused with the reason and a microsecond resumeAt, got %+v", paused)
	}
	read, _, err := api.SubscriptionsAPI.GetSubscription(ctx, paused.Id).Execute()
	must(t, err)
	if read.Schedule.GetResumeAt() != paused.Schedule.GetResumeAt() {
		t.Fatalf("the same schedule read back, got %+v", read.Schedule)
	}
	dropped, _, err := plain.SubscriptionsAPI.DeleteSubscriptionSchedule(ctx, paused.Id).Execute()
	must(t, err)
	if dropped.Status != subsvc.SUBSCRIPTIONSTATUS_PAUSED || dropped.Schedule != nil {
		t.Fatalf("still paused, no schedule, got %+v", dropped)
	}
}

func TestReadsItsPausePolicyAndSetsItEveryRuleOff200WithThePolicyAsSet(t *testing.T) {
	api, ctx := client(the.APIKey, "example=off")
	// Every rule off, the merchant's default: the other scenarios' pauses stay as they are.
	off := subsvc.NewPausePolicy(*subsvc.NewNullableInt32(nil), *subsvc.NewNullableInt32(nil), false)
	for _, call := range []func() (*subsvc.PausePolicyWithMode, *http.Response, error){
		api.PausePolicyAPI.GetPausePolicy(ctx).Execute,
		api.PausePolicyAPI.PutPausePolicy(ctx).PausePolicy(*off).Execute,
	} {
		policy, _, err := call()
		must(t, err)
		if policy.MaxPauseDays.IsSet() && policy.MaxPauseDays.Get() != nil || policy.RequireResumeAt || !policy.Livemode {
			t.Fatalf("every rule off, under a live key, got %+v", policy)
		}
	}
}

// newPlanID is a random UUID (version 4): plan ids are the merchant's own.
func newPlanID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func TestNamesAPlanReadsItAndListsIt200WithTheNameThen404_0028ForAPlanNeverNamed(t *testing.T) {
	api, ctx := client(the.APIKey, "")
	planID := newPlanID()
	// The mock answers its example, which carries this name; the service the plan as named.
	named, _, err := api.PlansAPI.PutPlan(ctx, planID).PlanName(*subsvc.NewPlanName("Coffee beans, monthly")).Execute()
	must(t, err)
	if named.Name != "Coffee beans, monthly" || !named.Livemode {
		t.Fatalf("the live plan as named, got %+v", named)
	}
	read, _, err := api.PlansAPI.GetPlan(ctx, planID).Execute()
	must(t, err)
	if read.Name != named.Name {
		t.Fatalf("the name as set, got %+v", read)
	}
	listed, _, err := api.PlansAPI.ListPlans(ctx).Limit(100).Execute()
	must(t, err)
	if the.Stateful {
		found := false
		for _, plan := range listed.Data {
			found = found || plan.PlanId == planID && plan.Name == named.Name
		}
		if !found {
			t.Fatalf("the plan listed, got %+v", listed.Data)
		}
	}
	unnamed, ctx := client(the.APIKey, "code=404")
	_, response, err := unnamed.PlansAPI.GetPlan(ctx, newPlanID()).Execute()
	if status, code := problemOf(t, response, err); status != 404 || code != "0028" {
		t.Fatalf("404 0028, got %d %s", status, code)
	}
}

func TestListsSubscriptionsAPageAtATime(t *testing.T) {
	api, ctx := client(the.APIKey, "")
	page, _, err := api.SubscriptionsAPI.ListSubscriptions(ctx).Limit(1).Execute()
	must(t, err)
	if len(page.Data) > 1 || page.HasMore != (page.NextCursor.Get() != nil) {
		t.Fatalf("at most one, and a cursor exactly when there is more, got %+v", page)
	}
}

func TestTestModeFixturesAPauseUntil30DaysAheadAnAdvanceOf31DaysResumedAnd403_0011ForALiveKey(t *testing.T) {
	api, ctx := client(the.TestAPIKey, "")
	pauser, _ := client(the.TestAPIKey, "example=pausedUntil")
	made, _, err := api.TestHelpersAPI.CreateTestSubscriptions(ctx).TestSubscriptionsCreate(subsvc.TestSubscriptionsCreate{Count: 1}).Execute()
	must(t, err)
	subscription := made.Data[0]
	if subscription.Livemode {
		t.Fatal("a test subscription is not live")
	}
	clock, _, err := api.TestHelpersAPI.GetTestClock(ctx).Execute()
	must(t, err)
	now, err := time.Parse(time.RFC3339Nano, clock.Now)
	must(t, err)
	pause := subsvc.NewPauseRequest()
	pause.SetResumeAt(now.Add(30 * 24 * time.Hour))
	_, _, err = pauser.SubscriptionsAPI.PauseSubscription(ctx, subscription.Id).CommandRequest(*pause).Execute()
	must(t, err)
	advanced, _, err := api.TestHelpersAPI.AdvanceTestClock(ctx).TestClockAdvance(*subsvc.NewTestClockAdvance(now.Add(31 * 24 * time.Hour))).Execute()
	must(t, err)
	if the.Stateful {
		read, _, err := api.SubscriptionsAPI.GetSubscription(ctx, subscription.Id).Execute()
		must(t, err)
		if advanced.AppliedCount != 1 || read.Status != subsvc.SUBSCRIPTIONSTATUS_FULFILLED {
			t.Fatalf("resumed by the advance, got %d applied and %s", advanced.AppliedCount, read.Status)
		}
	}
	live, ctx := client(the.APIKey, "code=403")
	_, response, err := live.TestHelpersAPI.GetTestClock(ctx).Execute()
	if status, code := problemOf(t, response, err); status != 403 || code != "0011" {
		t.Fatalf("403 0011, got %d %s", status, code)
	}
}

func TestAnswersErrorsAsProblemsWithTheirCodes404_0020_401_0010_409_0030(t *testing.T) {
	api, ctx := client(the.APIKey, "code=404")
	_, response, err := api.SubscriptionsAPI.PauseSubscription(ctx, "8d7c6b5a-4f3e-4d2c-9b1a-0f9e8d7c6b5a").Execute()
	if status, code := problemOf(t, response, err); status != 404 || code != "0020" {
		t.Fatalf("404 0020, got %d %s", status, code)
	}
	anonymous, ctx := client("", "")
	_, response, err = anonymous.SubscriptionsAPI.ResumeSubscription(ctx, "8d7c6b5a-4f3e-4d2c-9b1a-0f9e8d7c6b5a").Execute()
	if status, code := problemOf(t, response, err); status != 401 || code != "0010" {
		t.Fatalf("401 0010, got %d %s", status, code)
	}
	api, ctx = client(the.APIKey, "code=409")
	_, response, err = api.SubscriptionsAPI.PauseSubscription(ctx, take(t, "cancelled")).Execute()
	if status, code := problemOf(t, response, err); status != 409 || code != "0030" {
		t.Fatalf("409 0030, got %d %s", status, code)
	}
}

// verify checks a delivery's Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of
// `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the secret's base64 part after `whsec_`.
func verify(secret string, header http.Header, body []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%s.%s", header.Get("webhook-id"), header.Get("webhook-timestamp"), body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, signature := range strings.Fields(header.Get("webhook-signature")) {
		if hmac.Equal([]byte(signature), []byte(want)) {
			return true
		}
	}
	return false
}

type delivery struct {
	header http.Header
	body   []byte
}

func TestReceivesTheWebhookOfAPauseAndVerifiesItsSignature(t *testing.T) {
	if !the.Stateful {
		t.Skip("the mock sends no webhooks")
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	received := make(chan delivery, 16)
	server := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		received <- delivery{r.Header.Clone(), body}
		w.WriteHeader(http.StatusNoContent)
	})}
	go func() { _ = server.Serve(listener) }()
	defer server.Close()

	api, ctx := client(the.APIKey, "")
	create := subsvc.NewWebhookEndpointCreate(fmt.Sprintf("http://%s/hooks", listener.Addr()), []string{"subscription.paused"})
	endpoint, _, err := api.WebhookEndpointsAPI.CreateWebhookEndpoint(ctx).WebhookEndpointCreate(*create).Execute()
	must(t, err)
	defer api.WebhookEndpointsAPI.DeleteWebhookEndpoint(ctx, endpoint.Id).Execute() //nolint:errcheck
	paused, _, err := api.SubscriptionsAPI.PauseSubscription(ctx, take(t, "fulfilled")).Execute()
	must(t, err)
	timeout := time.After(20 * time.Second)
	for {
		select {
		case d := <-received:
			var event struct {
				Data struct {
					Subscription struct {
						ID string `json:"id"`
					} `json:"subscription"`
				} `json:"data"`
			}
			if !verify(endpoint.Secret, d.header, d.body) || json.Unmarshal(d.body, &event) != nil || event.Data.Subscription.ID != paused.Id {
				continue
			}
			if verify(endpoint.Secret, d.header, []byte(strings.Replace(string(d.body), "paused", "resumed", 1))) {
				t.Fatal("a changed body still verifies")
			}
			return
		case <-timeout:
			t.Fatal("waited 20 s for the webhook delivery")
		}
	}
}

var portalURL = regexp.MustCompile(`/portal/[A-Za-z0-9_-]{43}$`)

func TestMakesAPortalLinkForACustomerListsItAndRevokesIt201_204Then404_0027(t *testing.T) {
	api, ctx := client(the.APIKey, "")
	id := take(t, "fulfilled")
	create := subsvc.NewPortalLinkCreate()
	create.SetActions([]subsvc.PortalAction{subsvc.PORTALACTION_PAUSE})
	create.SetExpiresInMinutes(60)
	link, response, err := api.CustomerPortalAPI.CreatePortalLink(ctx, id).PortalLinkCreate(*create).Execute()
	must(t, err)
	if response.StatusCode != 201 || !portalURL.MatchString(link.Url) {
		t.Fatalf("201 with the page's url, got %d %q", response.StatusCode, link.Url)
	}
	listed, _, err := api.CustomerPortalAPI.ListPortalLinks(ctx).SubscriptionId(id).Execute()
	must(t, err)
	// The mock answers the spec's examples, another subscription's link.
	if the.Stateful {
		if link.SubscriptionId != id || len(link.Actions) != 1 || link.Actions[0] != subsvc.PORTALACTION_PAUSE {
			t.Fatalf("a link to pause this subscription, got %+v", link)
		}
		if len(listed.Data) != 1 || listed.Data[0].Id != link.Id {
			t.Fatalf("the subscription's one link listed, got %+v", listed.Data)
		}
	}
	response, err = api.CustomerPortalAPI.RevokePortalLink(ctx, link.Id).Execute()
	must(t, err)
	if response.StatusCode != 204 {
		t.Fatalf("204, got %d", response.StatusCode)
	}
	gone, ctx := client(the.APIKey, "code=404")
	response, err = gone.CustomerPortalAPI.RevokePortalLink(ctx, link.Id).Execute()
	if status, code := problemOf(t, response, err); status != 404 || code != "0027" {
		t.Fatalf("404 0027, got %d %s", status, code)
	}
	if the.Stateful {
		listed, _, err = api.CustomerPortalAPI.ListPortalLinks(ctx).SubscriptionId(id).Execute()
		must(t, err)
		if len(listed.Data) != 0 {
			t.Fatalf("no link left, got %+v", listed.Data)
		}
	}
}

// completed is the bulk request once completed (the service only: the mock's never move).
func completed(t *testing.T, api *subsvc.APIClient, ctx context.Context, requestID string) *subsvc.BulkRequest {
	t.Helper()
	return poll(t, "bulk request "+requestID+" to complete", func() (*subsvc.BulkRequest, error) {
		status, _, err := api.BulkRequestsAPI.GetBulkRequest(ctx, requestID).Execute()
		if err == nil && status.State != "completed" {
			err = errNotReadyYet
		}
		return status, err
	})
}

// Last, and in test mode: a hold covers every subscription of its mode, so the live ones the other
// scenarios use are left alone, and the test ones are resumed before it ends.
func TestHoldsTheTestStoreAndReleasesIt202ListedAndReadItsSubscriptionPausedThenResumedThen409_0035(t *testing.T) {
	api, ctx := client(the.TestAPIKey, "")
	made, _, err := api.TestHelpersAPI.CreateTestSubscriptions(ctx).TestSubscriptionsCreate(subsvc.TestSubscriptionsCreate{Count: 1}).Execute()
	must(t, err)
	subscription := made.Data[0].Id
	request := subsvc.NewHoldRequest()
	request.SetReason("Stock-out")
	key := fmt.Sprintf("go-hold-%d", time.Now().UnixNano())
	hold, response, err := api.HoldsAPI.CreateHold(ctx).IdempotencyKey(key).HoldRequest(*request).Execute()
	must(t, err)
	if response.StatusCode != 202 || response.Header.Get("Location") != "/v2/holds/"+hold.Id || hold.Status != "active" {
		t.Fatalf("202 with the active hold and its Location, got %d %q %+v", response.StatusCode, response.Header.Get("Location"), hold)
	}
	read, _, err := api.HoldsAPI.GetHold(ctx, hold.Id).Execute()
	must(t, err)
	listed, _, err := api.HoldsAPI.ListHolds(ctx).Limit(100).Execute()
	must(t, err)
	if read.Id != hold.Id {
		t.Fatalf("the hold read back, got %+v", read)
	}
	if the.Stateful {
		if hold.Reason.Get() == nil || *hold.Reason.Get() != "Stock-out" || hold.Livemode || len(listed.Data) != 1 || listed.Data[0].Id != hold.Id {
			t.Fatalf("the test mode's one hold, with its reason, listed; got %+v in %+v", hold, listed.Data)
		}
		if paused := completed(t, api, ctx, hold.RequestId); paused.Operation != subsvc.BULKOPERATION_PAUSE {
			t.Fatalf("the hold's request pauses, got %s", paused.Operation)
		}
		held, _, err := api.SubscriptionsAPI.GetSubscription(ctx, subscription).Execute()
		must(t, err)
		if held.Status != subsvc.SUBSCRIPTIONSTATUS_PAUSED || len(held.HoldIds) != 1 || held.HoldIds[0] != hold.Id {
			t.Fatalf("paused by the hold, got %s %v", held.Status, held.HoldIds)
		}
	}
	released, _, err := api.HoldsAPI.ReleaseHold(ctx, hold.Id).Execute()
	must(t, err)
	if released.Status != "released" || released.GetReleaseRequestId() == "" || released.GetReleasedAt() == "" {
		t.Fatalf("released, with its request and time, got %+v", released)
	}
	if the.Stateful {
		if resumed := completed(t, api, ctx, released.GetReleaseRequestId()); resumed.Operation != subsvc.BULKOPERATION_RESUME {
			t.Fatalf("the release's request resumes, got %s", resumed.Operation)
		}
		after, _, err := api.SubscriptionsAPI.GetSubscription(ctx, subscription).Execute()
		must(t, err)
		if after.Status != subsvc.SUBSCRIPTIONSTATUS_FULFILLED {
			t.Fatalf("resumed by the release, got %s", after.Status)
		}
	}
	again, ctx := client(the.TestAPIKey, "code=409, example=released")
	_, response, err = again.HoldsAPI.ReleaseHold(ctx, hold.Id).Execute()
	if status, code := problemOf(t, response, err); status != 409 || code != "0035" {
		t.Fatalf("409 0035, got %d %s", status, code)
	}
}
