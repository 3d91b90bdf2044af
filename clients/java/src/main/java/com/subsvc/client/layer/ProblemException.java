package com.subsvc.client.layer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.subsvc.client.ApiException;
import java.io.IOException;
import java.net.http.HttpHeaders;

/**
 * An error answer of the API (RFC 9457): its status, code, detail and request id. Each code of the
 * spec has its own subclass ({@link com.subsvc.client.Problems}), so that a caller catches by kind.
 */
public class ProblemException extends ApiException {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final String problemCode;
  private final String detail;
  private final String requestId;

  public ProblemException(int status, String message, HttpHeaders headers, String body) {
    super(status, message, headers, body);
    JsonNode problem = parse(body);
    this.problemCode = problem.path("code").asText("");
    String text = problem.path("detail").asText("");
    this.detail = text.isEmpty() && !problem.isObject() && body != null ? body.substring(0, Math.min(500, body.length())) : text;
    this.requestId = headers == null ? null : headers.firstValue("X-Request-Id").orElse(null);
  }

  private static JsonNode parse(String body) {
    try {
      JsonNode node = body == null ? null : MAPPER.readTree(body);
      return node == null ? MAPPER.createObjectNode() : node;
    } catch (IOException notJson) {
      // Not JSON (a proxy's page): the status alone says what happened.
      return MAPPER.createObjectNode();
    }
  }

  /** The problem's `code` in an answer's body, or an empty string. */
  public static String codeOf(String body) {
    return parse(body).path("code").asText("");
  }

  /** The HTTP status. */
  public int getStatus() {
    return getCode();
  }

  /** The problem's four-digit `code` (getCode() is the HTTP status, as ApiException has it). */
  public String getProblemCode() {
    return problemCode;
  }

  public String getDetail() {
    return detail;
  }

  /** The answer's X-Request-Id, to quote when reporting a problem. */
  public String getRequestId() {
    return requestId;
  }

  @Override
  public String getMessage() {
    return getStatus() + " " + problemCode + ": " + detail;
  }
}
