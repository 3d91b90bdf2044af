"""Webhooks as the service signs them (Standard Webhooks): `verify` checks the signature over
`webhook-id.webhook-timestamp.body` with the endpoint's `whsec_` secret and the timestamp's age,
then gives the payload as its generated model.
"""

import base64
import binascii
import hashlib
import hmac
import json
import time
from typing import Mapping, Optional, Union

from subsvc_client.models.bulk_request_webhook import BulkRequestWebhook
from subsvc_client.models.subscription_webhook import SubscriptionWebhook

WebhookEvent = Union[SubscriptionWebhook, BulkRequestWebhook]

TOLERANCE_SECONDS = 300
"""How far a delivery's timestamp may be from now (the Standard Webhooks default)."""


class WebhookVerificationError(Exception):
    """A delivery that is not the service's: a missing header, a bad signature, or a timestamp too old or too new."""


def _header(headers: Mapping[str, str], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    raise WebhookVerificationError(f"the {name} header is missing")


def verify(body: Union[str, bytes], headers: Mapping[str, str], secret: str, now: Optional[float] = None) -> WebhookEvent:
    """The delivery's event, once its signature and timestamp check out; WebhookVerificationError otherwise.

    `body` is the request body exactly as received (not parsed and re-serialised).
    """
    message_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    current = time.time() if now is None else now
    if not timestamp.isdigit() or abs(current - int(timestamp)) > TOLERANCE_SECONDS:
        raise WebhookVerificationError("the webhook-timestamp is too old or too new")
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    try:
        key = base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    except binascii.Error as error:
        raise WebhookVerificationError("the secret is not a whsec_ secret") from error
    expected = hmac.new(key, f"{message_id}.{timestamp}.{text}".encode(), hashlib.sha256).digest()
    for entry in signatures.split(" "):
        version, _, signature = entry.partition(",")
        try:
            if version == "v1" and hmac.compare_digest(base64.b64decode(signature, validate=True), expected):
                break
        except binascii.Error:
            continue
    else:
        raise WebhookVerificationError("no webhook-signature matches the body")
    try:
        event_type = str(json.loads(text).get("type", ""))
    except (ValueError, AttributeError) as error:
        raise WebhookVerificationError("the body is not a JSON object") from error
    model = BulkRequestWebhook if event_type.startswith("bulk_request.") else SubscriptionWebhook
    return model.from_json(text)
