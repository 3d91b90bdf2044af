"""Schemathesis hooks for `npm run test:fuzz` (scripts/fuzz.ts loads this file through SCHEMATHESIS_HOOKS).

deleteWebhookEndpoint is given a placeholder endpointId (scripts/schemathesis.toml); before each
call that still carries it, a fresh endpoint is registered through the API and its id is sent
instead, so that every phase reaches the 204 rather than one deletion and then only 404s. When
the call did not delete it (refused for another reason: a bad key, a header out of the schema),
the endpoint is deleted afterwards, so that the merchant's 16 endpoints are never used up.
"""

import os

import requests
import schemathesis

PLACEHOLDER = os.environ["SUBSVC_FUZZ_DELETABLE_ID"]
BASE_URL = os.environ["SUBSVC_FUZZ_BASE_URL"]
API_KEY = os.environ["SUBSVC_FUZZ_API_KEY"]
RECEIVER_URL = os.environ["SUBSVC_FUZZ_RECEIVER_URL"]
ENDPOINTS = f"{BASE_URL}/v2/webhook-endpoints"
HEADERS = {"x-api-key": API_KEY}
# Test case id -> the endpoint made for it.
made: dict[str, str] = {}


@schemathesis.hook
def before_call(context, case, **kwargs):
    if case.method.upper() != "DELETE" or not case.path_parameters:
        return
    if case.path_parameters.get("endpointId") != PLACEHOLDER:
        return
    created = requests.post(
        ENDPOINTS,
        json={"url": RECEIVER_URL, "events": ["*"], "description": "fuzz: to delete"},
        headers=HEADERS,
        timeout=10,
    )
    if created.status_code == 201:
        made[case.id] = created.json()["id"]
        case.path_parameters["endpointId"] = made[case.id]


@schemathesis.hook
def after_call(context, case, response):
    endpoint_id = made.pop(case.id, None)
    if endpoint_id is not None and response.status_code != 204:
        requests.delete(f"{ENDPOINTS}/{endpoint_id}", headers=HEADERS, timeout=10)
