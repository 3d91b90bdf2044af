package com.subsvc.client.layer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.subsvc.client.ApiClient;
import com.subsvc.client.model.BulkRequestWebhook;
import com.subsvc.client.model.SubscriptionWebhook;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Webhooks as the service signs them (Standard Webhooks): {@link #verify} checks the signature over
 * `webhook-id.webhook-timestamp.body` with the endpoint's whsec_ secret and the timestamp's age,
 * then gives the payload as its generated model.
 */
public final class Webhooks {
  private Webhooks() {}

  /** How far a delivery's timestamp may be from now (the Standard Webhooks default). */
  public static final Duration TOLERANCE = Duration.ofMinutes(5);

  private static final ObjectMapper MAPPER = ApiClient.createDefaultObjectMapper();

  /** A delivery that is not the service's: a missing header, a bad signature, or a timestamp too old or too new. */
  public static final class VerificationException extends Exception {
    public VerificationException(String message) {
      super(message);
    }
  }

  /** A verified delivery: getSubscription() for subscription.* events, getBulkRequest() for bulk_request.* ones. */
  public static final class Event {
    private final String type;
    private final SubscriptionWebhook subscription;
    private final BulkRequestWebhook bulkRequest;

    Event(String type, SubscriptionWebhook subscription, BulkRequestWebhook bulkRequest) {
      this.type = type;
      this.subscription = subscription;
      this.bulkRequest = bulkRequest;
    }

    public String getType() {
      return type;
    }

    public SubscriptionWebhook getSubscription() {
      return subscription;
    }

    public BulkRequestWebhook getBulkRequest() {
      return bulkRequest;
    }
  }

  private static String header(Map<String, List<String>> headers, String name) throws VerificationException {
    for (Map.Entry<String, List<String>> entry : headers.entrySet()) {
      if (entry.getKey().equalsIgnoreCase(name) && !entry.getValue().isEmpty()) return entry.getValue().get(0);
    }
    throw new VerificationException("the " + name + " header is missing");
  }

  /** The delivery's event, once its signature and timestamp check out; body is the request body exactly as received. */
  public static Event verify(String body, Map<String, List<String>> headers, String secret) throws VerificationException {
    return verify(body, headers, secret, Instant.now());
  }

  static Event verify(String body, Map<String, List<String>> headers, String secret, Instant now) throws VerificationException {
    String id = header(headers, "webhook-id");
    String timestamp = header(headers, "webhook-timestamp");
    String signatures = header(headers, "webhook-signature");
    if (!timestamp.matches("\\d+") || Duration.between(Instant.ofEpochSecond(Long.parseLong(timestamp)), now).abs().compareTo(TOLERANCE) > 0) {
      throw new VerificationException("the webhook-timestamp is too old or too new");
    }
    byte[] expected;
    try {
      byte[] key = Base64.getDecoder().decode(secret.startsWith("whsec_") ? secret.substring("whsec_".length()) : secret);
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      expected = mac.doFinal((id + "." + timestamp + "." + body).getBytes(StandardCharsets.UTF_8));
    } catch (IllegalArgumentException | GeneralSecurityException e) {
      throw new VerificationException("the secret is not a whsec_ secret");
    }
    boolean matched = false;
    for (String entry : signatures.split(" ")) {
      String[] parts = entry.split(",", 2);
      try {
        if (parts.length == 2 && parts[0].equals("v1") && MessageDigest.isEqual(Base64.getDecoder().decode(parts[1]), expected)) {
          matched = true;
          break;
        }
      } catch (IllegalArgumentException notBase64) {
        // Another entry may match.
      }
    }
    if (!matched) throw new VerificationException("no webhook-signature matches the body");
    try {
      JsonNode json = MAPPER.readTree(body);
      String type = json.path("type").asText("");
      if (type.startsWith("bulk_request.")) return new Event(type, null, MAPPER.treeToValue(json, BulkRequestWebhook.class));
      return new Event(type, MAPPER.treeToValue(json, SubscriptionWebhook.class), null);
    } catch (java.io.IOException e) {
      throw new VerificationException("the body is not the event's schema: " + e.getMessage());
    }
  }
}
