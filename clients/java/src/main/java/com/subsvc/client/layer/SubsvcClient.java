package com.subsvc.client.layer;

import com.subsvc.client.ApiClient;
import com.subsvc.client.api.ApiKeysApi;
import com.subsvc.client.api.BulkRequestsApi;
import com.subsvc.client.api.CustomerPortalApi;
import com.subsvc.client.api.EventsApi;
import com.subsvc.client.api.HoldsApi;
import com.subsvc.client.api.PausePolicyApi;
import com.subsvc.client.api.PlansApi;
import com.subsvc.client.api.SubscriptionsApi;
import com.subsvc.client.api.TestHelpersApi;
import com.subsvc.client.api.WebhookEndpointsApi;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The client a merchant makes once: the generated operations, grouped as the spec's tags, sent by
 * a {@link RetryingHttpClient} (retries with one Idempotency-Key per call, a timeout per attempt),
 * each error answer thrown as its code's {@link ProblemException}.
 *
 * <pre>{@code SubsvcClient client = SubsvcClient.builder().apiKey(key).build();}</pre>
 */
public final class SubsvcClient {
  private final ApiClient apiClient;

  private SubsvcClient(Builder b) {
    HttpClient retrying = new RetryingHttpClient(HttpClient.newBuilder().build(), b.maxRetries, b.initialDelay, b.maxDelay);
    Map<String, String> headers = new LinkedHashMap<>(b.headers);
    headers.put("x-api-key", b.apiKey);
    apiClient = new ApiClient() {
      @Override
      public HttpClient getHttpClient() {
        return retrying;
      }
    };
    apiClient.updateBaseUri(b.baseUrl);
    apiClient.setReadTimeout(b.timeout);
    apiClient.setRequestInterceptor(request -> headers.forEach(request::setHeader));
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The generated client's ApiClient, for an API class of its own: {@code new XApi(client.apiClient())}. */
  public ApiClient apiClient() {
    return apiClient;
  }

  public SubscriptionsApi subscriptions() {
    return new SubscriptionsApi(apiClient);
  }

  public BulkRequestsApi bulkRequests() {
    return new BulkRequestsApi(apiClient);
  }

  public HoldsApi holds() {
    return new HoldsApi(apiClient);
  }

  public EventsApi events() {
    return new EventsApi(apiClient);
  }

  public WebhookEndpointsApi webhookEndpoints() {
    return new WebhookEndpointsApi(apiClient);
  }

  public PausePolicyApi pausePolicy() {
    return new PausePolicyApi(apiClient);
  }

  public ApiKeysApi apiKeys() {
    return new ApiKeysApi(apiClient);
  }

  public PlansApi plans() {
    return new PlansApi(apiClient);
  }

  public CustomerPortalApi customerPortal() {
    return new CustomerPortalApi(apiClient);
  }

  public TestHelpersApi testHelpers() {
    return new TestHelpersApi(apiClient);
  }

  /** Only apiKey is required. */
  public static final class Builder {
    private String apiKey;
    private String baseUrl = "http://localhost:8080";
    private int maxRetries = 2;
    private Duration timeout = Duration.ofSeconds(30);
    private Duration initialDelay = Duration.ofMillis(500);
    private Duration maxDelay = Duration.ofSeconds(20);
    private final Map<String, String> headers = new LinkedHashMap<>();

    /** A live (sk_…) or test (sk_test_…) key. */
    public Builder apiKey(String apiKey) {
      this.apiKey = apiKey;
      return this;
    }

    /** The service's base URL, without /v2. */
    public Builder baseUrl(String baseUrl) {
      this.baseUrl = baseUrl;
      return this;
    }

    /** Retries after a call's first attempt; 2 unless set. */
    public Builder maxRetries(int maxRetries) {
      this.maxRetries = maxRetries;
      return this;
    }

    /** How long each attempt may take before it is abandoned (and retried); 30 s unless set. */
    public Builder timeout(Duration timeout) {
      this.timeout = timeout;
      return this;
    }

    /** The first backoff, doubled on each retry; 500 ms unless set. */
    public Builder initialDelay(Duration initialDelay) {
      this.initialDelay = initialDelay;
      return this;
    }

    /** The longest wait between two attempts; 20 s unless set. */
    public Builder maxDelay(Duration maxDelay) {
      this.maxDelay = maxDelay;
      return this;
    }

    /** A header sent with every request (e.g. Prefer for the Prism mock). */
    public Builder header(String name, String value) {
      headers.put(name, value);
      return this;
    }

    public SubsvcClient build() {
      if (apiKey == null || apiKey.isEmpty()) throw new IllegalStateException("an apiKey is required");
      return new SubsvcClient(this);
    }
  }
}
