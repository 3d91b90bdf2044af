package scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;

/** The target SUBSVC_TARGET names (scripts/clients/test.ts): the Prism mock or the service, behind a proxy that checks every answer against the spec. */
final class Target {
  static final Target THE = read();

  final String name;
  final String baseUrl;
  final String apiKey;
  /** The same merchant's test-mode key (sk_test_…). */
  final String testApiKey;
  final boolean stateful;
  final String specVersion;
  final String listApiKey;
  /** Subscriptions the list merchant has; null on the mock (its lists are examples). */
  final Integer listCount;
  private final Map<String, Deque<String>> ids = new HashMap<>();
  private final Map<String, Deque<String>> layerIds = new HashMap<>();

  private Target(JsonNode json) {
    name = json.path("name").asText();
    baseUrl = json.path("baseUrl").asText();
    apiKey = json.path("apiKey").asText();
    testApiKey = json.path("testApiKey").asText();
    stateful = json.path("stateful").asBoolean();
    specVersion = json.path("specVersion").asText();
    listApiKey = json.path("listApiKey").asText();
    listCount = json.path("listCount").isNumber() ? json.path("listCount").asInt() : null;
    json.path("ids").fields().forEachRemaining(e -> ids.put(e.getKey(), queue(e.getValue())));
    json.path("layerIds").fields().forEachRemaining(e -> layerIds.put(e.getKey(), queue(e.getValue())));
  }

  private static Deque<String> queue(JsonNode array) {
    Deque<String> queue = new ArrayDeque<>();
    array.forEach(id -> queue.add(id.asText()));
    return queue;
  }

  private static Target read() {
    try {
      return new Target(new ObjectMapper().readTree(new File(System.getenv("SUBSVC_TARGET"))));
    } catch (IOException e) {
      throw new UncheckedIOException("SUBSVC_TARGET names no readable target file", e);
    }
  }

  /** A subscription of the merchant in this status, for the merchant's scenarios. */
  synchronized String take(String status) {
    String id = ids.get(status).poll();
    if (id == null) throw new IllegalStateException("the target has no " + status + " subscription left");
    return id;
  }

  /** A subscription for the layer's scenarios alone. */
  synchronized String takeForLayer(String status) {
    String id = layerIds.get(status).poll();
    if (id == null) throw new IllegalStateException("the target has no " + status + " subscription left for the layer");
    return id;
  }
}
