"""Schemathesis hooks for `npm run test:fuzz` (scripts/fuzz.ts loads this file through SCHEMATHESIS_HOOKS).

deleteWebhookEndpoint is given a placeholder endpointId (scripts/schemathesis.toml); before each
call that still carries it, a fresh endpoint is registered through the API and its id is sent
instead, so that every phase reaches the 204 rather than one deletion and then only 404s. When
the call did not delete it (refused for another reason: a bad key, a header out of the schema),
the endpoint is deleted afterwards, so that the merchant's 16 endpoints are never used up.

rollApiKey and revokeApiKey are given a placeholder keyId the same way: each call gets a key made
for it, so that the key the run authenticates with is never rolled or revoked; afterwards the
made key (if still there) and the key a roll made are revoked, so that the merchant's 100 active
keys are never used up.

revokePortalLink is given a placeholder portalLinkId the same way: each call gets a link made for
it (to the run's paused subscription), revoked afterwards when the call did not revoke it.

Subsvc-Test-Outcome, which the spec declares on most operations, is removed before each call: with
the run's live key it answers 400 (0142), and with a test key the scenario's failure (a 504 after
35 s), whatever the rest of the request, so that no other check could pass; test/test-mode/
test-outcomes.test.ts proves what it answers.

putPausePolicy sets the run's merchant's pause policy to whatever was generated (maxPausesPerYear 0
refuses every pause, 422 0032, a documented answer of the pause); after each call the policy is set
back to every rule off, so that the pauses of the rest of the run reach their success path too.
"""

import os

import requests
import schemathesis

PLACEHOLDER = os.environ["SUBSVC_FUZZ_DELETABLE_ID"]
BASE_URL = os.environ["SUBSVC_FUZZ_BASE_URL"]
API_KEY = os.environ["SUBSVC_FUZZ_API_KEY"]
RECEIVER_URL = os.environ["SUBSVC_FUZZ_RECEIVER_URL"]
ENDPOINTS = f"{BASE_URL}/v2/webhook-endpoints"
KEY_PLACEHOLDER = os.environ["SUBSVC_FUZZ_KEY_ID"]
API_KEYS = f"{BASE_URL}/v2/api-keys"
PAUSE_POLICY = f"{BASE_URL}/v2/pause-policy"
POLICY_OFF = {"maxPauseDays": None, "maxPausesPerYear": None, "requireResumeAt": False}
HEADERS = {"x-api-key": API_KEY}
# Test case id -> the endpoint made for it.
made: dict[str, str] = {}
# Test case id -> the API key made for it.
made_keys: dict[str, str] = {}
LINK_PLACEHOLDER = os.environ["SUBSVC_FUZZ_LINK_ID"]
LINK_SUBSCRIPTION = os.environ["SUBSVC_FUZZ_SUBSCRIPTION_ID"]
PORTAL_LINKS = f"{BASE_URL}/v2/portal-links"
# Test case id -> the portal link made for it.
made_links: dict[str, str] = {}


def substitute_link(case):
    if not case.path_parameters or case.path_parameters.get("portalLinkId") != LINK_PLACEHOLDER:
        return
    created = requests.post(f"{BASE_URL}/v2/subscriptions/{LINK_SUBSCRIPTION}/portal-links", headers=HEADERS, timeout=10)
    if created.status_code == 201:
        made_links[case.id] = created.json()["id"]
        case.path_parameters["portalLinkId"] = made_links[case.id]


def revoke_links(case, response):
    link_id = made_links.pop(case.id, None)
    if link_id is not None and response.status_code != 204:
        requests.delete(f"{PORTAL_LINKS}/{link_id}", headers=HEADERS, timeout=10)


def substitute_key(case):
    if not case.path_parameters or case.path_parameters.get("keyId") != KEY_PLACEHOLDER:
        return
    created = requests.post(API_KEYS, headers=HEADERS, timeout=10)
    if created.status_code == 201:
        made_keys[case.id] = created.json()["id"]
        case.path_parameters["keyId"] = made_keys[case.id]


def revoke_keys(case, response):
    key_id = made_keys.pop(case.id, None)
    if key_id is None:
        return
    leftovers = [] if response.status_code == 204 else [key_id]
    if response.status_code == 201:
        leftovers.append(response.json()["id"])
    for leftover in leftovers:
        requests.delete(f"{API_KEYS}/{leftover}", headers=HEADERS, timeout=10)


@schemathesis.hook
def before_call(context, case, **kwargs):
    if case.headers:
        case.headers.pop("Subsvc-Test-Outcome", None)
    substitute_key(case)
    substitute_link(case)
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
    revoke_keys(case, response)
    revoke_links(case, response)
    if case.method.upper() == "PUT" and case.path == "/v2/pause-policy" and response.status_code == 200:
        requests.put(PAUSE_POLICY, json=POLICY_OFF, headers=HEADERS, timeout=10)
    endpoint_id = made.pop(case.id, None)
    if endpoint_id is not None and response.status_code != 204:
        requests.delete(f"{ENDPOINTS}/{endpoint_id}", headers=HEADERS, timeout=10)
