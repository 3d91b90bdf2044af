package scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.subsvc.client.ApiClient;
import com.subsvc.client.ApiException;
import com.subsvc.client.ApiResponse;
import com.subsvc.client.Problems;
import com.subsvc.client.api.BulkRequestsApi;
import com.subsvc.client.api.CustomerPortalApi;
import com.subsvc.client.api.EventsApi;
import com.subsvc.client.api.HoldsApi;
import com.subsvc.client.api.PausePolicyApi;
import com.subsvc.client.api.PlansApi;
import com.subsvc.client.api.SubscriptionsApi;
import com.subsvc.client.api.TestHelpersApi;
import com.subsvc.client.api.WebhookEndpointsApi;
import com.subsvc.client.layer.Webhooks;
import com.subsvc.client.layer.ProblemException;
import com.subsvc.client.model.BulkAcceptance;
import com.subsvc.client.model.BulkCommandRequest;
import com.subsvc.client.model.BulkDryRun;
import com.subsvc.client.model.BulkFilter;
import com.subsvc.client.model.BulkOperation;
import com.subsvc.client.model.BulkPausePreviewRequest;
import com.subsvc.client.model.BulkPauseRequest;
import com.subsvc.client.model.BulkPreviewRequest;
import com.subsvc.client.model.BulkRequest;
import com.subsvc.client.model.CommandOutcome;
import com.subsvc.client.model.Event;
import com.subsvc.client.model.EventList;
import com.subsvc.client.model.EventType;
import com.subsvc.client.model.Hold;
import com.subsvc.client.model.HoldRequest;
import com.subsvc.client.model.PausePolicy;
import com.subsvc.client.model.PausePolicyWithMode;
import com.subsvc.client.model.PauseRequest;
import com.subsvc.client.model.Plan;
import com.subsvc.client.model.PlanName;
import com.subsvc.client.model.PortalAction;
import com.subsvc.client.model.PortalLinkCreate;
import com.subsvc.client.model.PortalLinkWithUrl;
import com.subsvc.client.model.PausedSubscription;
import com.subsvc.client.model.RejectedSubscription;
import com.subsvc.client.model.ResumedSubscription;
import com.subsvc.client.model.SubscriptionList;
import com.subsvc.client.model.Subscription;
import com.subsvc.client.model.SubscriptionStatus;
import com.subsvc.client.model.TestClockAdvance;
import com.subsvc.client.model.TestClockAdvanced;
import com.subsvc.client.model.TestSubscriptionsCreate;
import com.subsvc.client.model.WebhookEndpointCreate;
import com.subsvc.client.model.WebhookEndpointWithSecret;
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * A merchant's scenarios with the Java client (clients/java, installed from its jar), run by Maven
 * in a scratch project (scripts/clients/java.ts) against the target SUBSVC_TARGET names. The same
 * scenarios in TypeScript, Python and Go: clients/scenarios/*.
 */
class ScenariosTest {
  private static final Target THE = Target.THE;

  private static ApiClient client(String apiKey, String prefer) {
    ApiClient client = new ApiClient();
    client.updateBaseUri(THE.baseUrl);
    client.setRequestInterceptor(request -> {
      if (apiKey != null) request.setHeader("x-api-key", apiKey);
      // The mock answers what it is asked for; an error's body is problem+json, so Accept names it.
      if (!THE.stateful && prefer != null) {
        request.setHeader("Prefer", prefer);
        request.setHeader("Accept", "application/json, application/problem+json");
      }
    });
    return client;
  }

  private static final SubscriptionsApi SUBSCRIPTIONS = new SubscriptionsApi(client(THE.apiKey, null));

  /** The typed exception an error answer is thrown as, with its status and code. */
  private static <E extends ProblemException> E problem(Class<E> type, int status, String code, Executable call) {
    E error = assertThrows(type, call);
    assertEquals(status, error.getStatus());
    assertEquals(code, error.getProblemCode());
    return error;
  }

  @Test
  @DisplayName("pauses a subscription: 200 with it paused, merchantId included")
  void pauses() throws ApiException {
    PausedSubscription paused = SUBSCRIPTIONS.pauseSubscription(THE.take("fulfilled"), null, null, null);
    assertEquals(SubscriptionStatus.PAUSED, paused.getStatus());
    assertTrue(paused.getMerchantId() != null);
    assertTrue(paused.getModifiedAt().matches(".*\\.\\d{6}Z$"), paused.getModifiedAt());
  }

  @Test
  @DisplayName("resumes a subscription: 200 with it fulfilled")
  void resumes() throws ApiException {
    ResumedSubscription resumed = SUBSCRIPTIONS.resumeSubscription(THE.take("paused"), null, null, null);
    assertEquals(SubscriptionStatus.FULFILLED, resumed.getStatus());
    assertTrue(resumed.getCycle() != null);
  }

  @Test
  @DisplayName("retries a pause with the same Idempotency-Key: the same answer, replayed by the service")
  void replays() throws ApiException {
    String id = THE.take("fulfilled");
    String key = UUID.randomUUID().toString();
    ApiResponse<PausedSubscription> first = SUBSCRIPTIONS.pauseSubscriptionWithHttpInfo(id, key, null, null);
    ApiResponse<PausedSubscription> again = SUBSCRIPTIONS.pauseSubscriptionWithHttpInfo(id, key, null, null);
    assertEquals(List.of(200, 200), List.of(first.getStatusCode(), again.getStatusCode()));
    // The mock remembers nothing, so never replays (the spec says so).
    if (!THE.stateful) return;
    assertEquals(List.of("true"), headers(again).get("idempotent-replayed"));
    assertEquals(first.getData(), again.getData());
  }

  private static Map<String, List<String>> headers(ApiResponse<?> response) {
    return new java.util.TreeMap<String, List<String>>(String.CASE_INSENSITIVE_ORDER) {
      {
        putAll(response.getHeaders());
      }
    };
  }

  @Test
  @DisplayName("bulk-pauses subscriptions and follows the request from its 202 to each outcome")
  void bulkPauses() throws Exception {
    List<UUID> ids = List.of(UUID.fromString(THE.take("fulfilled")), UUID.fromString(THE.take("fulfilled")));
    ApiResponse<BulkAcceptance> accepted = SUBSCRIPTIONS.bulkPauseSubscriptionsWithHttpInfo(new BulkPauseRequest().subscriptions(ids), null, null);
    UUID requestId = accepted.getData().getRequestId();
    assertEquals(202, accepted.getStatusCode());
    assertEquals(BulkOperation.PAUSE, accepted.getData().getOperation());
    assertEquals(List.of("/v2/bulk-requests/" + requestId), headers(accepted).get("location"));
    BulkRequestsApi requests = new BulkRequestsApi(client(THE.apiKey, null));
    long deadline = System.currentTimeMillis() + 20_000;
    BulkRequest status = requests.getBulkRequest(requestId.toString(), null);
    while (status.getState() != BulkRequest.StateEnum.COMPLETED && System.currentTimeMillis() < deadline) {
      Thread.sleep(100);
      status = requests.getBulkRequest(requestId.toString(), null);
    }
    assertEquals(BulkRequest.StateEnum.COMPLETED, status.getState());
    long applied = requests.listBulkRequestItems(requestId.toString(), null, null, null, null).getData().stream()
        .filter(item -> item.getOutcome() == CommandOutcome.APPLIED)
        .count();
    assertTrue(applied > 0);
  }

  @Test
  @DisplayName("lists subscriptions a page at a time")
  void listsAPage() throws ApiException {
    SubscriptionList page = SUBSCRIPTIONS.listSubscriptions(null, null, 1, null, null);
    assertTrue(page.getData().size() <= 1);
    assertEquals(page.getHasMore(), page.getNextCursor() != null);
  }

  @Test
  @DisplayName("finds the event of a pause in the events list, newest first, and reads it by its id")
  void findsTheEvent() throws Exception {
    PausedSubscription paused = SUBSCRIPTIONS.pauseSubscription(THE.take("fulfilled"), null, null, null);
    EventsApi events = new EventsApi(client(THE.apiKey, null));
    long deadline = System.currentTimeMillis() + 20_000;
    Event found = null;
    while (found == null && System.currentTimeMillis() < deadline) {
      EventList page = events.listEvents(EventType.SUBSCRIPTION_PAUSED, null, null, 100, null, null);
      found = page.getData().stream()
          .filter(e -> !THE.stateful || e.getSubscriptionEvent().getData().getSubscription().getId().equals(paused.getId()))
          .findFirst()
          .orElse(null);
      if (found == null) Thread.sleep(100);
    }
    assertTrue(found != null, "the pause event");
    assertEquals("subscription.paused", found.getSubscriptionEvent().getType().getValue());
    if (THE.stateful) assertEquals(found, events.getEvent(found.getSubscriptionEvent().getId().toString(), null));
  }

  @Test
  @DisplayName("previews a bulk pause and a bulk resume: 200 with what each would match, and nothing changed")
  void previews() throws ApiException {
    String active = THE.take("fulfilled");
    String cancelled = THE.take("cancelled");
    List<UUID> ids = List.of(UUID.fromString(active), UUID.fromString(cancelled), UUID.randomUUID());
    BulkDryRun pause = SUBSCRIPTIONS.previewBulkPause(new BulkPausePreviewRequest().subscriptions(ids));
    BulkDryRun resume = SUBSCRIPTIONS.previewBulkResume(new BulkPreviewRequest().filter(new BulkFilter().status(List.of(SubscriptionStatus.PAUSED))));
    for (BulkDryRun preview : List.of(pause, resume)) assertTrue(preview.getSample().size() <= Math.min(20, preview.getMatchedCount()));
    if (!THE.stateful) return; // the mock answers the spec's one example
    assertEquals(List.of(2, 1, 0), List.of(pause.getMatchedCount(), pause.getCancelledCount(), pause.getPolicyRejectedCount()));
    assertEquals(List.of(UUID.fromString(active)), pause.getSample());
    assertEquals(SubscriptionStatus.FULFILLED, SUBSCRIPTIONS.getSubscription(active, null).getStatus());
    assertEquals(resume.getMatchedCount(), resume.getSample().size());
    assertEquals(0, resume.getCancelledCount());
  }

  @Test
  @DisplayName("bulk-resumes with an id it does not know: accepted, and every rejected id has a documented reason")
  void bulkResumesWithAnUnknownId() throws ApiException {
    List<UUID> ids = List.of(UUID.fromString(THE.take("paused")), UUID.randomUUID());
    BulkAcceptance accepted = SUBSCRIPTIONS.bulkResumeSubscriptions(new BulkCommandRequest().subscriptions(ids), null, null);
    List<RejectedSubscription> rejected = accepted.getRejected() == null ? List.of() : accepted.getRejected();
    for (RejectedSubscription r : rejected)
      assertTrue(List.of(RejectedSubscription.ReasonEnum.NOT_FOUND, RejectedSubscription.ReasonEnum.CANCELLED).contains(r.getReason()), String.valueOf(r.getReason()));
    if (!THE.stateful) return; // the mock answers the spec's one 202 example, a pause's
    assertEquals(BulkOperation.RESUME, accepted.getOperation());
    assertEquals(1, accepted.getAcceptedCount());
    assertEquals(1, rejected.size());
  }

  @Test
  @DisplayName("pauses until a time ahead with a reason, reads the schedule back, then drops it")
  void schedules() throws ApiException {
    SubscriptionsApi api = new SubscriptionsApi(client(THE.apiKey, "example=pausedUntil"));
    OffsetDateTime resumeAt = OffsetDateTime.now(ZoneOffset.UTC).plusMinutes(10);
    PausedSubscription paused = api.pauseSubscription(THE.take("fulfilled"), null, null, new PauseRequest().resumeAt(resumeAt).reason("Travelling"));
    assertEquals(SubscriptionStatus.PAUSED, paused.getStatus());
    assertTrue(paused.getSchedule().getResumeAt().matches(".*T.*\\.\\d{6}Z"), paused.getSchedule().getResumeAt());
    if (!THE.stateful) return;
    assertEquals("Travelling", paused.getPauseReason());
    assertEquals(paused.getSchedule(), api.getSubscription(paused.getId().toString(), null).getSchedule());
    Subscription dropped = api.deleteSubscriptionSchedule(paused.getId().toString(), null);
    assertEquals(SubscriptionStatus.PAUSED, dropped.getStatus());
    assertEquals(null, dropped.getSchedule());
  }

  @Test
  @DisplayName("test mode: fixtures, a pause until 30 days ahead, an advance of 31 days resumes it, and 403 0011 for a live key")
  void testMode() throws ApiException {
    TestHelpersApi helpers = new TestHelpersApi(client(THE.testApiKey, null));
    SubscriptionsApi testSubscriptions = new SubscriptionsApi(client(THE.testApiKey, "example=pausedUntil"));
    Subscription made = helpers.createTestSubscriptions(new TestSubscriptionsCreate().count(1)).getData().get(0);
    assertEquals(false, made.getLivemode());
    OffsetDateTime now = OffsetDateTime.parse(helpers.getTestClock().getNow());
    testSubscriptions.pauseSubscription(made.getId().toString(), null, null, new PauseRequest().resumeAt(now.plusDays(30)));
    TestClockAdvanced advanced = helpers.advanceTestClock(new TestClockAdvance().to(now.plusDays(31)));
    if (THE.stateful) {
      assertEquals(1L, advanced.getAppliedCount());
      assertEquals(SubscriptionStatus.FULFILLED, testSubscriptions.getSubscription(made.getId().toString(), null).getStatus());
    }
    TestHelpersApi live = new TestHelpersApi(client(THE.apiKey, "code=403"));
    problem(Problems.TestModeOnlyError.class, 403, "0011", live::getTestClock);
  }

  @Test
  @DisplayName("names a plan, reads it and lists it: 200 with the name, and 404 0028 for a plan never named")
  void namesAPlan() throws ApiException {
    UUID planId = UUID.randomUUID();
    PlansApi plans = new PlansApi(client(THE.apiKey, null));
    // The mock answers its example, which carries this name; the service the plan as named.
    Plan named = plans.putPlan(planId, new PlanName().name("Coffee beans, monthly"), null, null);
    assertEquals(List.of("Coffee beans, monthly", true), List.of(named.getName(), named.getLivemode()));
    assertEquals("Coffee beans, monthly", plans.getPlan(planId, null).getName());
    List<Plan> listed = plans.listPlans(100, null, null).getData();
    if (THE.stateful) assertEquals(List.of(named), listed.stream().filter(p -> planId.equals(p.getPlanId())).collect(Collectors.toList()));
    PlansApi notFound = new PlansApi(client(THE.apiKey, "code=404"));
    problem(Problems.PlanNotFoundError.class, 404, "0028", () -> notFound.getPlan(UUID.randomUUID(), null));
  }

  @Test
  @DisplayName("makes a portal link for a customer, lists it and revokes it: 201, 204, then 404 0027")
  void makesAPortalLink() throws ApiException {
    String subscriptionId = THE.take("fulfilled");
    CustomerPortalApi portal = new CustomerPortalApi(client(THE.apiKey, null));
    ApiResponse<PortalLinkWithUrl> made =
        portal.createPortalLinkWithHttpInfo(subscriptionId, null, new PortalLinkCreate().actions(Set.of(PortalAction.PAUSE)).expiresInMinutes(60));
    PortalLinkWithUrl link = made.getData();
    assertEquals(201, made.getStatusCode());
    assertTrue(link.getUrl().toString().matches(".*/portal/[A-Za-z0-9_-]{43}$"), link.getUrl().toString());
    var listed = portal.listPortalLinks(UUID.fromString(subscriptionId), null, null, null).getData();
    if (THE.stateful) { // the mock answers the spec's examples, another subscription's link
      assertEquals(UUID.fromString(subscriptionId), link.getSubscriptionId());
      assertEquals(Set.of(PortalAction.PAUSE), link.getActions());
      assertEquals(List.of(link.getId()), listed.stream().map(l -> l.getId()).collect(Collectors.toList()));
    }
    assertEquals(204, portal.revokePortalLinkWithHttpInfo(link.getId().toString(), null).getStatusCode());
    CustomerPortalApi notFound = new CustomerPortalApi(client(THE.apiKey, "code=404"));
    problem(Problems.PortalLinkNotFoundError.class, 404, "0027", () -> notFound.revokePortalLink(link.getId().toString(), null));
    if (THE.stateful) assertEquals(List.of(), portal.listPortalLinks(UUID.fromString(subscriptionId), null, null, null).getData());
  }

  @Test
  @DisplayName("reads its pause policy and sets it, every rule off: 200 with the policy as set")
  void setsThePausePolicy() throws ApiException {
    // Every rule off, the merchant's default: the other scenarios' pauses stay as they are.
    PausePolicy off = new PausePolicy().requireResumeAt(false);
    // The answer is the policy and whose data it governs (a live key's here); every answer shows every rule.
    PausePolicyWithMode shown = new PausePolicyWithMode().requireResumeAt(false).livemode(true);
    PausePolicyApi policies = new PausePolicyApi(client(THE.apiKey, "example=off"));
    assertEquals(shown, policies.getPausePolicy());
    assertEquals(shown, policies.putPausePolicy(off, null, null));
  }

  /** A delivery as received: its body exactly, and its headers. */
  private static final class Delivery {
    final String body;
    final Map<String, List<String>> headers;

    Delivery(String body, Map<String, List<String>> headers) {
      this.body = body;
      this.headers = headers;
    }
  }

  @Test
  @DisplayName("receives the webhook of a pause and verifies its signature")
  void receivesTheWebhook() throws Exception {
    Assumptions.assumeTrue(THE.stateful, "the mock sends no webhooks");
    List<Delivery> received = new CopyOnWriteArrayList<>();
    HttpServer receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    receiver.createContext("/hooks", exchange -> {
      received.add(new Delivery(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8), Map.copyOf(exchange.getRequestHeaders())));
      exchange.sendResponseHeaders(204, -1);
      exchange.close();
    });
    receiver.start();
    try {
      WebhookEndpointsApi webhooks = new WebhookEndpointsApi(client(THE.apiKey, null));
      String url = "http://127.0.0.1:" + receiver.getAddress().getPort() + "/hooks";
      WebhookEndpointWithSecret endpoint =
          webhooks.createWebhookEndpoint(new WebhookEndpointCreate().url(url).events(List.of(WebhookEndpointCreate.EventsEnum.SUBSCRIPTION_PAUSED)));
      PausedSubscription paused = SUBSCRIPTIONS.pauseSubscription(THE.take("fulfilled"), null, null, null);
      long deadline = System.currentTimeMillis() + 20_000;
      Delivery delivery = null;
      Webhooks.Event event = null;
      while (event == null && System.currentTimeMillis() < deadline) {
        for (Delivery d : received) {
          Webhooks.Event verified = Webhooks.verify(d.body, d.headers, endpoint.getSecret());
          if (paused.getId().equals(verified.getSubscription().getData().getSubscription().getId())) {
            delivery = d;
            event = verified;
          }
        }
        if (event == null) Thread.sleep(100);
      }
      assertTrue(event != null, "the webhook delivery");
      assertEquals("subscription.paused", event.getType());
      Delivery tampered = new Delivery(delivery.body.replace("paused", "resumed"), delivery.headers);
      assertThrows(Webhooks.VerificationException.class, () -> Webhooks.verify(tampered.body, tampered.headers, endpoint.getSecret()));
      webhooks.deleteWebhookEndpoint(endpoint.getId().toString(), null);
    } finally {
      receiver.stop(0);
    }
  }

  /** The bulk request once completed (within 20 s). */
  private static BulkRequest completed(BulkRequestsApi requests, UUID requestId) throws Exception {
    long deadline = System.currentTimeMillis() + 20_000;
    BulkRequest status = requests.getBulkRequest(requestId.toString(), null);
    while (status.getState() != BulkRequest.StateEnum.COMPLETED && System.currentTimeMillis() < deadline) {
      Thread.sleep(100);
      status = requests.getBulkRequest(requestId.toString(), null);
    }
    assertEquals(BulkRequest.StateEnum.COMPLETED, status.getState());
    return status;
  }

  // In test mode: a hold covers every subscription of its mode, so the live ones the other scenarios
  // use are left alone, and the test ones are resumed before it ends.
  @Test
  @DisplayName("holds the test store and releases it: 202 with the hold listed and read, its subscription paused then resumed, then 409 0035")
  void holdsTheTestStore() throws Exception {
    ApiClient test = client(THE.testApiKey, null);
    HoldsApi holds = new HoldsApi(test);
    SubscriptionsApi testApi = new SubscriptionsApi(test);
    BulkRequestsApi testRequests = new BulkRequestsApi(test);
    Subscription made = new TestHelpersApi(test).createTestSubscriptions(new TestSubscriptionsCreate().count(1)).getData().get(0);
    ApiResponse<Hold> placed = holds.createHoldWithHttpInfo(UUID.randomUUID().toString(), null, new HoldRequest().reason("Stock-out"));
    Hold hold = placed.getData();
    assertEquals(202, placed.getStatusCode());
    assertEquals(List.of("/v2/holds/" + hold.getId()), headers(placed).get("location"));
    assertEquals(Hold.StatusEnum.ACTIVE, hold.getStatus());
    assertEquals(hold.getId(), holds.getHold(hold.getId().toString(), null).getId());
    List<Hold> listed = holds.listHolds(100, null, null).getData();
    if (THE.stateful) {
      assertEquals(List.of("Stock-out", false), List.of(hold.getReason(), hold.getLivemode()));
      assertEquals(List.of(hold.getId()), listed.stream().map(Hold::getId).collect(Collectors.toList()));
      assertEquals(BulkOperation.PAUSE, completed(testRequests, hold.getRequestId()).getOperation());
      Subscription held = testApi.getSubscription(made.getId().toString(), null);
      assertEquals(SubscriptionStatus.PAUSED, held.getStatus());
      assertEquals(List.of(hold.getId()), held.getHoldIds());
    }
    Hold released = holds.releaseHold(hold.getId().toString(), null);
    assertEquals(Hold.StatusEnum.RELEASED, released.getStatus());
    assertTrue(released.getReleaseRequestId() != null && released.getReleasedAt() != null);
    if (THE.stateful) {
      assertEquals(BulkOperation.RESUME, completed(testRequests, released.getReleaseRequestId()).getOperation());
      assertEquals(SubscriptionStatus.FULFILLED, testApi.getSubscription(made.getId().toString(), null).getStatus());
    }
    HoldsApi again = new HoldsApi(client(THE.testApiKey, "code=409, example=released"));
    problem(Problems.HoldReleasedError.class, 409, "0035", () -> again.releaseHold(hold.getId().toString(), null));
  }

  @Test
  @DisplayName("answers errors as problems with their codes, each as its type: 404 0020, 401 0010, 400 0040, 409 0030")
  void answersProblems() {
    SubscriptionsApi notFound = new SubscriptionsApi(client(THE.apiKey, "code=404"));
    problem(Problems.SubscriptionNotFoundError.class, 404, "0020", () -> notFound.pauseSubscription(UUID.randomUUID().toString(), null, null, null));
    SubscriptionsApi anonymous = new SubscriptionsApi(client(null, null));
    problem(Problems.UnauthorizedError.class, 401, "0010", () -> anonymous.resumeSubscription(UUID.randomUUID().toString(), null, null, null));
    problem(Problems.InvalidRequestError.class, 400, "0040", () -> SUBSCRIPTIONS.listSubscriptions(null, null, 1000, null, null));
    SubscriptionsApi conflict = new SubscriptionsApi(client(THE.apiKey, "code=409"));
    problem(Problems.InvalidStatusTransitionError.class, 409, "0030", () -> conflict.pauseSubscription(THE.take("cancelled"), null, null, null));
  }
}
