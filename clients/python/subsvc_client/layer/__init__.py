"""The hand-written client layer over the generated client (docs/clients.md)."""

from subsvc_client.layer.problem import ProblemError
from subsvc_client.layer.retry import RetryingApiClient
from subsvc_client.layer.client import Client, list_all
from subsvc_client.layer.webhooks import TOLERANCE_SECONDS, WebhookEvent, WebhookVerificationError, verify
from subsvc_client.problems import *  # noqa: F401,F403 (one error type per code of the spec)
from subsvc_client.problems import __all__ as _problems

__all__ = [
    "Client",
    "ProblemError",
    "RetryingApiClient",
    "TOLERANCE_SECONDS",
    "WebhookEvent",
    "WebhookVerificationError",
    "list_all",
    "verify",
    *_problems,
]
