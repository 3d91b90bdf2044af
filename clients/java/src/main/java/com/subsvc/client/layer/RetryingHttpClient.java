package com.subsvc.client.layer;

import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * An HttpClient that sends as the client layer does: on a network error (a timeout included), 429,
 * 502, 503 and 504 it retries at most maxRetries times, after the wait the answer asks for
 * (Retry-After, else the RateLimit field's reset when no request is left) or a jittered exponential
 * backoff. A mutating request carries one Idempotency-Key, the caller's or one made here, reused by
 * each retry, so that the service applies it once however many attempts reach it.
 */
public final class RetryingHttpClient extends HttpClient {
  private static final Set<Integer> RETRIED_STATUSES = Set.of(429, 502, 503, 504);
  private static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS");
  private static final Pattern REMAINING = Pattern.compile("(?:^|;)\\s*r=(\\d+)");
  private static final Pattern RESET = Pattern.compile("(?:^|;)\\s*t=(\\d+)");

  private final HttpClient delegate;
  private final int maxRetries;
  private final Duration initialDelay;
  private final Duration maxDelay;

  public RetryingHttpClient(HttpClient delegate, int maxRetries, Duration initialDelay, Duration maxDelay) {
    this.delegate = delegate;
    this.maxRetries = maxRetries;
    this.initialDelay = initialDelay;
    this.maxDelay = maxDelay;
  }

  /** The wait an answer asks for, if it names one. */
  static Optional<Duration> requestedWait(HttpHeaders headers) {
    Optional<String> retryAfter = headers.firstValue("Retry-After");
    if (retryAfter.isPresent()) {
      String value = retryAfter.get().trim();
      if (value.matches("\\d+")) return Optional.of(Duration.ofSeconds(Long.parseLong(value)));
      try {
        Duration until = Duration.between(ZonedDateTime.now(), ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME));
        return Optional.of(until.isNegative() ? Duration.ZERO : until);
      } catch (RuntimeException notADate) {
        // Neither seconds nor a date: the RateLimit field or the backoff decides.
      }
    }
    // IETF RateLimit field: `"merchant";r=0;t=5` (no request left, reset in 5 s).
    String rateLimit = headers.firstValue("RateLimit").orElse("");
    Matcher remaining = REMAINING.matcher(rateLimit);
    Matcher reset = RESET.matcher(rateLimit);
    if (remaining.find() && reset.find() && Long.parseLong(remaining.group(1)) == 0) {
      return Optional.of(Duration.ofSeconds(Long.parseLong(reset.group(1))));
    }
    return Optional.empty();
  }

  /** The backoff before retry number n (0 for the first): exponential, jittered over its upper half. */
  Duration backoff(int n) {
    double ceiling = Math.min(maxDelay.toMillis(), initialDelay.toMillis() * Math.pow(2, n));
    return Duration.ofMillis((long) (ceiling / 2 + ThreadLocalRandom.current().nextDouble() * ceiling / 2));
  }

  /** The request with an Idempotency-Key when it changes something and has none (built afresh: Java 11 has no copying builder). */
  static HttpRequest withIdempotencyKey(HttpRequest request) {
    if (SAFE_METHODS.contains(request.method()) || request.headers().firstValue("Idempotency-Key").isPresent()) return request;
    HttpRequest.Builder copy = HttpRequest.newBuilder(request.uri())
        .method(request.method(), request.bodyPublisher().orElse(HttpRequest.BodyPublishers.noBody()))
        .expectContinue(request.expectContinue());
    request.timeout().ifPresent(copy::timeout);
    request.version().ifPresent(copy::version);
    request.headers().map().forEach((name, values) -> values.forEach(value -> copy.header(name, value)));
    return copy.header("Idempotency-Key", UUID.randomUUID().toString()).build();
  }

  @Override
  public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler) throws IOException, InterruptedException {
    HttpRequest keyed = withIdempotencyKey(request);
    for (int retry = 0; ; retry++) {
      Duration wait;
      try {
        HttpResponse<T> response = delegate.send(keyed, handler);
        if (!RETRIED_STATUSES.contains(response.statusCode()) || retry >= maxRetries) return response;
        wait = requestedWait(response.headers()).orElseGet(backoffFor(retry));
        discard(response.body());
      } catch (IOException networkError) {
        if (retry >= maxRetries) throw networkError;
        wait = backoff(retry);
      }
      Thread.sleep(Math.min(wait.toMillis(), maxDelay.toMillis()));
    }
  }

  private java.util.function.Supplier<Duration> backoffFor(int retry) {
    return () -> backoff(retry);
  }

  /** Releases an unread answer's connection. */
  private static void discard(Object body) throws IOException {
    if (body instanceof java.io.InputStream) ((java.io.InputStream) body).close();
  }

  @Override
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return send(request, handler);
      } catch (IOException | InterruptedException e) {
        throw new java.util.concurrent.CompletionException(e);
      }
    }, delegate.executor().orElse(java.util.concurrent.ForkJoinPool.commonPool()));
  }

  @Override
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(
      HttpRequest request, HttpResponse.BodyHandler<T> handler, HttpResponse.PushPromiseHandler<T> pushPromiseHandler) {
    return sendAsync(request, handler);
  }

  @Override
  public Optional<CookieHandler> cookieHandler() {
    return delegate.cookieHandler();
  }

  @Override
  public Optional<Duration> connectTimeout() {
    return delegate.connectTimeout();
  }

  @Override
  public Redirect followRedirects() {
    return delegate.followRedirects();
  }

  @Override
  public Optional<ProxySelector> proxy() {
    return delegate.proxy();
  }

  @Override
  public SSLContext sslContext() {
    return delegate.sslContext();
  }

  @Override
  public SSLParameters sslParameters() {
    return delegate.sslParameters();
  }

  @Override
  public Optional<Authenticator> authenticator() {
    return delegate.authenticator();
  }

  @Override
  public Version version() {
    return delegate.version();
  }

  @Override
  public Optional<Executor> executor() {
    return delegate.executor();
  }
}
