"""Retries as the client layer makes them, in an ApiClient of the generated client.

On a network error, 429, 502, 503 and 504, at most `max_retries` times, after the wait the answer
asks for (Retry-After, else the RateLimit field's reset when no request is left) or a jittered
exponential backoff. A mutating request carries one Idempotency-Key, the caller's or one made here,
reused by each of its retries, so that the service applies it once however many attempts reach it.
"""

import random
import re
import time
import uuid
from email.utils import parsedate_to_datetime
from typing import Optional

import urllib3

from subsvc_client.api_client import ApiClient
from subsvc_client.exceptions import ApiException
from subsvc_client.layer.problem import ProblemError, problem_of

RETRIED_STATUSES = frozenset({429, 502, 503, 504})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def requested_wait(headers) -> Optional[float]:
    """The wait an answer asks for, in seconds, or None when it names none."""
    retry_after = headers.get("retry-after") if headers is not None else None
    if retry_after:
        if retry_after.strip().isdigit():
            return float(retry_after)
        try:
            return max(0.0, parsedate_to_datetime(retry_after).timestamp() - time.time())
        except (TypeError, ValueError):
            pass
    # IETF RateLimit field: `"merchant";r=0;t=5` (no request left, reset in 5 s).
    rate_limit = headers.get("ratelimit") if headers is not None else None
    if rate_limit:
        remaining = re.search(r"(?:^|;)\s*r=(\d+)", rate_limit)
        reset = re.search(r"(?:^|;)\s*t=(\d+)", rate_limit)
        if remaining and reset and int(remaining.group(1)) == 0:
            return float(reset.group(1))
    return None


def backoff(retry: int, initial_delay: float, max_delay: float) -> float:
    """The backoff before retry number `retry` (0 for the first): exponential, jittered over its upper half."""
    ceiling = min(max_delay, initial_delay * 2**retry)
    return ceiling / 2 + random.random() * ceiling / 2


class RetryingApiClient(ApiClient):
    """The generated ApiClient, sending each request as above with `timeout` seconds per attempt."""

    def __init__(self, configuration, max_retries: int = 2, timeout: float = 30.0, initial_delay: float = 0.5, max_delay: float = 20.0):
        # The layer retries by itself: urllib3's own retries would resend without its waits.
        configuration.retries = False
        super().__init__(configuration)
        self.max_retries = max_retries
        self.timeout = timeout
        self.initial_delay = initial_delay
        self.max_delay = max_delay

    def call_api(self, method, url, header_params=None, body=None, post_params=None, _request_timeout=None):
        headers = dict(header_params or {})
        if method.upper() not in SAFE_METHODS and not any(k.lower() == "idempotency-key" for k in headers):
            headers["Idempotency-Key"] = str(uuid.uuid4())
        retry = 0
        while True:
            try:
                response = super().call_api(method, url, headers, body, post_params, _request_timeout or self.timeout)
            except (urllib3.exceptions.HTTPError, ApiException) as error:
                # The generated client reports a failure to connect as an ApiException with no status.
                if isinstance(error, ApiException) and error.status not in (None, 0):
                    raise
                if retry >= self.max_retries:
                    raise
                wait = backoff(retry, self.initial_delay, self.max_delay)
            else:
                if response.status not in RETRIED_STATUSES or retry >= self.max_retries:
                    return response
                asked = requested_wait(response.headers)
                wait = asked if asked is not None else backoff(retry, self.initial_delay, self.max_delay)
                response.read()
            time.sleep(min(wait, self.max_delay))
            retry += 1

    def response_deserialize(self, response_data, response_types_map=None):
        if 200 <= response_data.status <= 299:
            return super().response_deserialize(response_data, response_types_map)
        # Imported here: subsvc_client.problems imports this package.
        from subsvc_client.problems import PROBLEM_TYPES

        text = response_data.data.decode("utf-8", "replace") if response_data.data is not None else None
        problem = problem_of(text, response_data.status)
        error_type = PROBLEM_TYPES.get(str(problem.get("code")), ProblemError)
        raise error_type(response_data.status, problem, response_data.headers.get("x-request-id"), http_resp=response_data, body=text)

