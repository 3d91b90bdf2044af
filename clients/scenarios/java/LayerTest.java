package scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import com.subsvc.client.ApiException;
import com.subsvc.client.Problems;
import com.subsvc.client.layer.Lists;
import com.subsvc.client.layer.ProblemException;
import com.subsvc.client.layer.SubsvcClient;
import com.subsvc.client.layer.Webhooks;
import com.subsvc.client.model.Event;
import com.subsvc.client.model.PausedSubscription;
import com.subsvc.client.model.Subscription;
import com.subsvc.client.model.SubscriptionList;
import com.subsvc.client.model.SubscriptionStatus;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import com.subsvc.client.model.TestSubscriptionsCreate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The client layer of the Java client (SubsvcClient, Lists, Webhooks) as a merchant uses it, against
 * the target SUBSVC_TARGET names: retries through lost answers, every page of a list, typed errors
 * and webhook verification. The same scenarios in TypeScript, Python and Go: clients/scenarios/*.
 * Lost answers are made for real by a loopback proxy in front of the target: it forwards a request,
 * then answers 503 in place of the target's answer (the target did the work; the client never heard).
 */
class LayerTest {
  private static final Target THE = Target.THE;
  private static final AtomicInteger LOSE = new AtomicInteger();
  private static final List<String> KEYS = new ArrayList<>();
  private static final Set<String> HOP_BY_HOP = Set.of("connection", "content-length", "host", "transfer-encoding", "upgrade", "expect");
  private static HttpServer proxy;

  @BeforeAll
  static void startProxy() throws IOException {
    HttpClient upstream = HttpClient.newHttpClient();
    proxy = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    proxy.createContext("/", exchange -> {
      byte[] body;
      try (InputStream in = exchange.getRequestBody()) {
        body = in.readAllBytes();
      }
      String method = exchange.getRequestMethod();
      synchronized (KEYS) {
        KEYS.add(exchange.getRequestHeaders().getFirst("Idempotency-Key"));
      }
      boolean lost = method.equals("POST") && LOSE.getAndUpdate(n -> Math.max(0, n - 1)) > 0;
      HttpRequest.Builder forward = HttpRequest.newBuilder(URI.create(THE.baseUrl + exchange.getRequestURI()))
          .method(method, body.length == 0 ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
      exchange.getRequestHeaders().forEach((name, values) -> {
        if (!HOP_BY_HOP.contains(name.toLowerCase())) values.forEach(v -> forward.header(name, v));
      });
      HttpResponse<byte[]> answer;
      try {
        answer = upstream.send(forward.build(), HttpResponse.BodyHandlers.ofByteArray());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException(e);
      }
      int status = answer.statusCode();
      byte[] out = answer.body();
      if (lost) {
        status = 503;
        out = "{\"type\":\"about:blank\",\"title\":\"Service unavailable\",\"status\":503,\"detail\":\"lost on purpose\",\"code\":\"0910\"}"
            .getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/problem+json");
      } else {
        answer.headers().map().forEach((name, values) -> {
          if (!HOP_BY_HOP.contains(name.toLowerCase()) && !name.equals(":status")) exchange.getResponseHeaders().put(name, values);
        });
      }
      exchange.sendResponseHeaders(status, out.length == 0 ? -1 : out.length);
      try (OutputStream os = exchange.getResponseBody()) {
        os.write(out);
      }
    });
    proxy.start();
  }

  @AfterAll
  static void stopProxy() {
    proxy.stop(0);
  }

  private static SubsvcClient.Builder builder(String apiKey, String baseUrl) {
    return SubsvcClient.builder().apiKey(apiKey).baseUrl(baseUrl);
  }

  @Test
  @DisplayName("layer: retries a pause whose first two answers are lost, with one Idempotency-Key: 200, applied once (one event)")
  void retriesThroughLostAnswers() throws Exception {
    SubsvcClient client = builder(THE.apiKey, "http://127.0.0.1:" + proxy.getAddress().getPort()).initialDelay(Duration.ofMillis(20)).build();
    String id = THE.takeForLayer("fulfilled");
    int before;
    synchronized (KEYS) {
      before = KEYS.size();
    }
    LOSE.set(2);
    PausedSubscription paused = client.subscriptions().pauseSubscription(id, null, null, null);
    assertEquals(SubscriptionStatus.PAUSED, paused.getStatus());
    List<String> keys;
    synchronized (KEYS) {
      keys = new ArrayList<>(KEYS.subList(before, KEYS.size()));
    }
    assertEquals(3, keys.size(), keys.toString());
    assertEquals(1, new HashSet<>(keys).size(), keys.toString());
    UUID.fromString(keys.get(0));
    if (THE.stateful) assertEquals(1, pausedEvents(client, id));
  }

  /** The subscription's subscription.paused events, once there is one (events are recorded just after the change). */
  private static long pausedEvents(SubsvcClient client, String id) throws Exception {
    long deadline = System.currentTimeMillis() + 20_000;
    for (;;) {
      List<Event> events = client.events().listEvents(null, UUID.fromString(id), null, null, null, null).getData();
      long count = events.stream()
          .filter(e -> e.getActualInstance() instanceof com.subsvc.client.model.SubscriptionEvent)
          .filter(e -> e.getSubscriptionEvent().getType().getValue().equals("subscription.paused"))
          .count();
      if (count > 0 || System.currentTimeMillis() > deadline) return count;
      Thread.sleep(100);
    }
  }

  @Test
  @DisplayName("layer: sends a pause through Subsvc-Test-Outcome unavailable:2: retried with one Idempotency-Key, 200, applied once (one event)")
  void retriesThroughUnavailable() throws Exception {
    Assumptions.assumeTrue(THE.stateful, "the mock has no failures on demand: the service only");
    SubsvcClient client = builder(THE.testApiKey, THE.baseUrl).initialDelay(Duration.ofMillis(20)).build();
    String id = client.testHelpers().createTestSubscriptions(new TestSubscriptionsCreate().count(1)).getData().get(0).getId().toString();
    PausedSubscription paused = client.subscriptions().pauseSubscription(id, null, "unavailable:2", null);
    assertEquals(SubscriptionStatus.PAUSED, paused.getStatus());
    assertEquals(1, pausedEvents(client, id));
  }

  @Test
  @DisplayName("layer: iterates over every page of a list, each subscription once")
  void iteratesOverEveryPage() {
    SubsvcClient client = builder(THE.listApiKey, THE.baseUrl).build();
    List<UUID> seen = new ArrayList<>();
    for (Subscription s : Lists.all(cursor -> client.subscriptions().listSubscriptions(null, null, 100, cursor, null), SubscriptionList::getData)) {
      seen.add(s.getId());
    }
    assertEquals(seen.size(), new HashSet<>(seen).size());
    if (THE.listCount != null) assertEquals((int) THE.listCount, seen.size());
    else assertFalse(seen.isEmpty());
  }

  @Test
  @DisplayName("layer: throws a conflict as InvalidStatusTransitionError with its status, code, detail and request id")
  void throwsTheTypedConflict() {
    SubsvcClient.Builder b = builder(THE.apiKey, THE.baseUrl);
    if (!THE.stateful) b.header("Prefer", "code=409").header("Accept", "application/json, application/problem+json");
    SubsvcClient client = b.build();
    Problems.InvalidStatusTransitionError error =
        assertThrows(Problems.InvalidStatusTransitionError.class, () -> client.subscriptions().pauseSubscription(THE.takeForLayer("cancelled"), null, null, null));
    assertEquals(409, error.getStatus());
    assertEquals("0030", error.getProblemCode());
    assertFalse(error.getDetail().isEmpty());
    if (THE.stateful) assertTrue(error.getRequestId() != null && !error.getRequestId().isEmpty());
    assertTrue(error instanceof ProblemException && error instanceof ApiException);
  }

  private static final byte[] KEY = "a webhook secret, 32 bytes long!".getBytes(StandardCharsets.UTF_8);
  private static final String SECRET = "whsec_" + Base64.getEncoder().encodeToString(KEY);
  private static final String BODY = "{\"type\":\"subscription.paused\",\"timestamp\":\"2026-12-06T10:00:00.000000Z\",\"livemode\":true,"
      + "\"data\":{\"subscription\":{\"id\":\"6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60\",\"merchantId\":\"0b7e4c1a-2d3f-4e5a-8b9c-0d1e2f3a4b5c\","
      + "\"planId\":\"1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f\",\"status\":\"paused\",\"cycle\":3,\"createdAt\":\"2026-11-01T08:00:00.000000Z\","
      + "\"modifiedAt\":\"2026-12-06T10:00:00.000000Z\",\"livemode\":true},\"previousStatus\":\"fulfilled\",\"cause\":{\"kind\":\"api\"}}}";

  /** Signs body as the service does (Standard Webhooks), with key, at `at`. */
  private static Map<String, List<String>> signed(byte[] key, String body, Instant at) throws Exception {
    String id = "msg_" + UUID.randomUUID();
    String timestamp = Long.toString(at.getEpochSecond());
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));
    String signature = Base64.getEncoder().encodeToString(mac.doFinal((id + "." + timestamp + "." + body).getBytes(StandardCharsets.UTF_8)));
    return Map.of("webhook-id", List.of(id), "webhook-timestamp", List.of(timestamp), "webhook-signature", List.of("v1," + signature));
  }

  @Test
  @DisplayName("layer: verify accepts a good signature and gives the typed event")
  void verifiesAGoodSignature() throws Exception {
    Webhooks.Event event = Webhooks.verify(BODY, signed(KEY, BODY, Instant.now()), SECRET);
    assertEquals("subscription.paused", event.getType());
    assertEquals(SubscriptionStatus.FULFILLED, event.getSubscription().getData().getPreviousStatus());
  }

  @Test
  @DisplayName("layer: verify refuses a bad signature and an old timestamp")
  void refusesBadDeliveries() {
    String tampered = BODY.replace("\"cycle\":3", "\"cycle\":4");
    assertThrows(Webhooks.VerificationException.class, () -> Webhooks.verify(tampered, signed(KEY, BODY, Instant.now()), SECRET));
    assertThrows(Webhooks.VerificationException.class, () -> Webhooks.verify(BODY, signed(KEY, BODY, Instant.now().minusSeconds(600)), SECRET));
    byte[] other = "not the secret".getBytes(StandardCharsets.UTF_8);
    assertThrows(Webhooks.VerificationException.class, () -> Webhooks.verify(BODY, signed(other, BODY, Instant.now()), SECRET));
  }
}
