"""The client a merchant makes once: the generated operations, grouped as the spec's tags, behind
retries with idempotency keys (subsvc_client.layer.retry) and with each error answer raised as its
code's type.
"""

from typing import Any, Callable, Iterator, Optional

import subsvc_client
from subsvc_client.layer.retry import RetryingApiClient
from subsvc_client.layer.signatures import StableApi


class Client:
    """`Client(api_key, base_url=..., max_retries=2, timeout=30.0)`; `client.subscriptions.pause_subscription(id)`.

    `timeout` bounds each attempt, in seconds; `headers` are sent with every request (e.g. `Prefer` for the Prism mock).
    Each operation takes its parameters in a stable order, `subsvc_test_outcome` by keyword (layer.signatures).
    """

    def __init__(
        self,
        api_key: str,
        base_url: str = "http://localhost:8080",
        max_retries: int = 2,
        timeout: float = 30.0,
        initial_delay: float = 0.5,
        max_delay: float = 20.0,
        headers: Optional[dict[str, str]] = None,
    ) -> None:
        configuration = subsvc_client.Configuration(host=base_url)
        configuration.api_key["ApiKey"] = api_key
        self.api_client = RetryingApiClient(configuration, max_retries, timeout, initial_delay, max_delay)
        for name, value in (headers or {}).items():
            self.api_client.set_default_header(name, value)
        self.subscriptions = StableApi(subsvc_client.SubscriptionsApi(self.api_client))
        self.bulk_requests = StableApi(subsvc_client.BulkRequestsApi(self.api_client))
        self.holds = StableApi(subsvc_client.HoldsApi(self.api_client))
        self.events = StableApi(subsvc_client.EventsApi(self.api_client))
        self.webhook_endpoints = StableApi(subsvc_client.WebhookEndpointsApi(self.api_client))
        self.pause_policy = StableApi(subsvc_client.PausePolicyApi(self.api_client))
        self.api_keys = StableApi(subsvc_client.APIKeysApi(self.api_client))
        self.plans = StableApi(subsvc_client.PlansApi(self.api_client))
        self.customer_portal = StableApi(subsvc_client.CustomerPortalApi(self.api_client))
        self.test_helpers = StableApi(subsvc_client.TestHelpersApi(self.api_client))

    def close(self) -> None:
        """Closes the connections it keeps open."""
        self.api_client.rest_client.pool_manager.clear()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def list_all(list_operation: Callable[..., Any], **params: Any) -> Iterator[Any]:
    """Every item of every page of a list operation, fetching each page as the loop reaches it:
    `for s in list_all(client.subscriptions.list_subscriptions, limit=100)`.
    """
    cursor: Optional[Any] = params.pop("starting_after", None)
    while True:
        page = list_operation(**params, starting_after=cursor) if cursor is not None else list_operation(**params)
        yield from page.data
        if not page.has_more or not page.next_cursor:
            return
        cursor = page.next_cursor
