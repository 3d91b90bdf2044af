"""A merchant's scenarios with subsvc-client installed from its wheel, run by pytest in a scratch
virtual environment (scripts/clients/test.ts) against the target SUBSVC_TARGET names: the Prism mock
or the service, each behind a proxy that checks every answer against the spec. The same scenarios,
in TypeScript with the tarball: clients/scenarios/typescript/scenarios.test.ts.
"""

import json
from importlib import metadata
import os
import re
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from uuid import UUID
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pydantic
import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

import subsvc_client
from subsvc_client import (
    BulkCommandRequest,
    BulkFilter,
    BulkPausePreviewRequest,
    BulkPauseRequest,
    BulkPreviewRequest,
    HoldRequest,
    PauseRequest,
    PortalLinkCreate,
    SubscriptionCancel,
    SubscriptionCreate,
    TestClockAdvance,
    TestSubscriptionsCreate,
    WebhookEndpointCreate,
)
from subsvc_client.exceptions import ApiException

with open(os.environ["SUBSVC_TARGET"], encoding="utf-8") as target_file:
    TARGET = json.load(target_file)
STATEFUL = TARGET["stateful"]
REASON = "Travelling until the 1st"
MICROSECONDS_UTC = re.compile(r"\.\d{6}Z$")
# The models type ids as uuid.UUID; the methods take them as str.


def take(status):
    if not TARGET["ids"][status]:
        raise AssertionError(f"the target has no {status} subscription left")
    return TARGET["ids"][status].pop(0)


def prefer(value):
    """The mock answers what it is asked for (`Prefer`); the service decides by itself.

    The client's Accept names only application/json, and Prism falls back to a 200 when the preferred
    status has no such body: an error's body is application/problem+json, so Accept says so too.
    """
    return None if STATEFUL else {"Prefer": value, "Accept": "application/json, application/problem+json"}


def client(api_key=TARGET["apiKey"]):
    configuration = subsvc_client.Configuration(host=TARGET["baseUrl"])
    if api_key:
        configuration.api_key["ApiKey"] = api_key
    return subsvc_client.ApiClient(configuration)


@pytest.fixture
def api():
    with client() as c:
        yield subsvc_client.SubscriptionsApi(c)


@pytest.fixture
def bulk_requests():
    with client() as c:
        yield subsvc_client.BulkRequestsApi(c)


def poll(read, done, what):
    deadline = time.monotonic() + 20
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited 20 s for {what}")
        time.sleep(0.1)


def completed(bulk_requests, request_id):
    """The bulk request once completed (the service only: the mock's never move)."""
    return poll(
        lambda: bulk_requests.get_bulk_request(str(request_id)),
        lambda s: s.state == "completed",
        f"bulk request {request_id} to complete",
    )


def problem_of(call):
    with pytest.raises(ApiException) as caught:
        call()
    error = caught.value
    assert error.headers["content-type"].startswith("application/problem+json")
    return error.status, json.loads(error.body)["code"]


def test_is_installed_as_the_contracts_version_with_its_typed_models():
    assert (metadata.version("subsvc-client"), subsvc_client.__version__) == (TARGET["specVersion"], TARGET["specVersion"])
    assert sorted(re.split(r"[<>=(; ]", r)[0] for r in metadata.requires("subsvc-client")) == ["pydantic", "python-dateutil", "typing-extensions", "urllib3"]
    assert metadata.files("subsvc-client") and any(f.name == "py.typed" for f in metadata.files("subsvc-client"))


def test_pauses_a_subscription_200_with_it_paused_merchant_id_included(api):
    paused = api.pause_subscription(take("fulfilled"))
    assert paused.status == "paused"
    assert isinstance(paused.merchant_id, UUID)
    assert MICROSECONDS_UTC.search(paused.modified_at)


def test_creates_a_subscription_from_its_billing_record_finds_it_by_external_id_and_cancels_it(api):
    external_id = f"sub_{uuid.uuid4()}"
    created = api.create_subscription(SubscriptionCreate(external_id=external_id, plan_id=uuid.uuid4(), metadata={"crm": "A-1"}))
    assert created.status == "fulfilled"
    if STATEFUL:
        assert created.external_id == external_id
        assert [s.id for s in api.list_subscriptions(external_id=external_id).data] == [created.id]
    cancelled = api.cancel_subscription(str(created.id), subscription_cancel=SubscriptionCancel(reason="closed"))
    assert cancelled.status == "cancelled"


def test_resumes_a_subscription_200_with_it_fulfilled(api):
    resumed = api.resume_subscription(take("paused"))
    assert resumed.status == "fulfilled"
    assert isinstance(resumed.cycle, int)


def test_retries_a_pause_with_the_same_idempotency_key_the_same_answer_replayed_by_the_service(api):
    subscription_id, key = take("fulfilled"), str(uuid.uuid4())
    first = api.pause_subscription_with_http_info(subscription_id, idempotency_key=key)
    again = api.pause_subscription_with_http_info(subscription_id, idempotency_key=key)
    assert (first.status_code, again.status_code) == (200, 200)
    if STATEFUL:  # the mock remembers nothing, so never replays (the spec says so)
        # A header is found by its name in any case (the service sends `Idempotent-Replayed`, the proxy `idempotent-replayed`).
        assert (again.headers.get("Idempotent-Replayed"), again.headers.get("idempotent-replayed")) == ("true", "true")
        assert again.data == first.data


def test_bulk_pauses_subscriptions_and_follows_the_request_from_its_202_to_each_outcome(api, bulk_requests):
    ids = [take("fulfilled"), take("fulfilled")]
    accepted = api.bulk_pause_subscriptions_with_http_info(BulkPauseRequest(subscriptions=ids))
    request_id = str(accepted.data.request_id)
    assert (accepted.status_code, accepted.data.operation) == (202, "PAUSE")
    location = f"/v2/bulk-requests/{request_id}"
    assert (accepted.headers["Location"], accepted.headers["location"], "LOCATION" in accepted.headers) == (location, location, True)
    status = poll(lambda: bulk_requests.get_bulk_request(request_id), lambda s: s.state == "completed", "the bulk request to complete")
    c = status.counts
    assert c.pending + c.applied + c.noop + c.skipped + c.failed == status.accepted_count
    applied = [item for item in bulk_requests.list_bulk_request_items(request_id).data if item.outcome == "applied"]
    assert applied
    for item in applied:
        assert api.get_subscription(str(item.subscription_id), _headers=prefer("example=paused")).status == "paused"


def test_previews_a_bulk_pause_and_a_bulk_resume_200_with_what_each_would_match_and_nothing_changed(api):
    active, cancelled = take("fulfilled"), take("cancelled")
    pause = api.preview_bulk_pause(BulkPausePreviewRequest(subscriptions=[active, cancelled, str(uuid.uuid4())]))
    resume = api.preview_bulk_resume(BulkPreviewRequest(filter=BulkFilter(status=["paused"])))
    for preview in (pause, resume):
        assert len(preview.sample) <= min(20, preview.matched_count)
    if STATEFUL:  # the mock answers the spec's one example
        assert (pause.matched_count, pause.cancelled_count, pause.policy_rejected_count, [str(i) for i in pause.sample]) == (2, 1, 0, [active])
        assert api.get_subscription(active).status == "fulfilled"
        assert resume.matched_count == len(resume.sample) and resume.cancelled_count == 0


def test_bulk_resumes_with_an_id_it_does_not_know_accepted_and_every_rejected_id_has_a_documented_reason(api):
    accepted = api.bulk_resume_subscriptions(BulkCommandRequest(subscriptions=[take("paused"), str(uuid.uuid4())]))
    for rejected in accepted.rejected or []:
        assert rejected.reason in ("not_found", "cancelled")
    if STATEFUL:  # the mock answers with the spec's one 202 example, a pause's
        assert (accepted.operation, accepted.accepted_count, len(accepted.rejected or [])) == ("RESUME", 1, 1)


def test_pauses_until_a_time_ahead_with_a_reason_reads_the_schedule_back_then_drops_it(api):
    resume_at = datetime.now(timezone.utc) + timedelta(minutes=10)
    paused = api.pause_subscription(
        take("fulfilled"), command_request=PauseRequest(resume_at=resume_at, reason=REASON), _headers=prefer("example=pausedUntil")
    )
    assert (paused.status, paused.pause_reason) == ("paused", REASON)
    assert MICROSECONDS_UTC.search(paused.schedule.resume_at)
    read = api.get_subscription(str(paused.id), _headers=prefer("example=pausedUntil"))
    assert read.schedule == paused.schedule
    dropped = api.delete_subscription_schedule(str(paused.id))
    assert (dropped.status, dropped.schedule) == ("paused", None)


def test_reads_its_pause_policy_and_sets_it_every_rule_off_200_with_the_policy_as_set():
    # Every rule off, the merchant's default: the other scenarios' pauses stay as they are.
    off = subsvc_client.PausePolicy(max_pause_days=None, max_pauses_per_year=None, require_resume_at=False)
    # The answer is the policy and whose data it governs (a live key's here).
    # Rules a request leaves out are off, and every answer shows all of them.
    shown = subsvc_client.PausePolicyWithMode(
        max_pause_days=None,
        max_pauses_per_year=None,
        require_resume_at=False,
        cooldown_days=None,
        allowed_pause_days=None,
        resume_notice_hours=None,
        livemode=True,
    )
    with client() as c:
        policies = subsvc_client.PausePolicyApi(c)
        assert policies.get_pause_policy(_headers=prefer("example=off")) == shown
        assert policies.put_pause_policy(off, _headers=prefer("example=off")) == shown


def test_names_a_plan_reads_it_and_lists_it_200_with_the_name_and_404_0028_for_a_plan_never_named():
    plan_id = uuid.uuid4()
    with client() as c:
        plans = subsvc_client.PlansApi(c)
        # The mock answers its example, which carries this name; the service the plan as named.
        named = plans.put_plan(plan_id, subsvc_client.PlanName(name="Coffee beans, monthly"))
        assert (named.name, named.livemode) == ("Coffee beans, monthly", True)
        assert plans.get_plan(plan_id).name == "Coffee beans, monthly"
        listed = plans.list_plans(limit=100)
        if STATEFUL:
            assert [plan for plan in listed.data if plan.plan_id == plan_id] == [named]
        assert problem_of(lambda: plans.get_plan(uuid.uuid4(), _headers=prefer("code=404"))) == (404, "0028")


def test_lists_subscriptions_a_page_at_a_time(api):
    page = api.list_subscriptions(limit=1)
    assert len(page.data) <= 1
    assert page.has_more == (page.next_cursor is not None)


def test_finds_the_event_of_a_pause_in_the_events_list_newest_first_and_reads_it_by_its_id(api):
    paused = api.pause_subscription(take("fulfilled"))
    with client() as c:
        events = subsvc_client.EventsApi(c)

        def of_it(page):
            found = [e.actual_instance for e in page.data]
            if not STATEFUL:
                return found[0] if found else None
            return next((e for e in found if hasattr(e.data, "subscription") and e.data.subscription.id == paused.id), None)

        page = poll(lambda: events.list_events(type="subscription.paused", limit=100), lambda p: of_it(p) is not None, "the pause event")
        listed = of_it(page)
        assert listed.type == "subscription.paused"
        if STATEFUL:
            assert events.get_event(str(listed.id)).actual_instance == listed


def test_test_mode_fixtures_a_pause_until_30_days_ahead_an_advance_of_31_days_resumed_and_403_0011_for_a_live_key():
    with client(TARGET["testApiKey"]) as c:
        helpers, test_api = subsvc_client.TestHelpersApi(c), subsvc_client.SubscriptionsApi(c)
        [made] = helpers.create_test_subscriptions(TestSubscriptionsCreate(count=1)).data
        assert made.livemode is False
        now = datetime.fromisoformat(helpers.get_test_clock().now.replace("Z", "+00:00"))
        test_api.pause_subscription(str(made.id), command_request=PauseRequest(resume_at=now + timedelta(days=30)), _headers=prefer("example=pausedUntil"))
        advanced = helpers.advance_test_clock(TestClockAdvance(to=now + timedelta(days=31)))
        if STATEFUL:
            assert advanced.applied_count == 1
            assert test_api.get_subscription(str(made.id)).status == "fulfilled"
    with client() as c:
        assert problem_of(lambda: subsvc_client.TestHelpersApi(c).get_test_clock(_headers=prefer("code=403"))) == (403, "0011")


def test_answers_errors_as_problems_with_their_codes_404_0020_401_0010_400_0040_409_0030(api):
    assert problem_of(lambda: api.pause_subscription(str(uuid.uuid4()), _headers=prefer("code=404"))) == (404, "0020")
    with client(api_key=None) as anonymous:
        assert problem_of(lambda: subsvc_client.SubscriptionsApi(anonymous).resume_subscription(str(uuid.uuid4()))) == (401, "0010")
    # The typed model refuses an id that is not a UUID before anything is sent; sent anyway, the target answers 400 0040.
    with pytest.raises(pydantic.ValidationError):
        BulkPauseRequest(subscriptions=["not-a-uuid"])
    assert problem_of(lambda: api.bulk_pause_subscriptions(BulkPauseRequest.model_construct(subscriptions=["not-a-uuid"]))) == (400, "0040")
    assert problem_of(lambda: api.pause_subscription(take("cancelled"), _headers=prefer("code=409"))) == (409, "0030")


class _Receiver(BaseHTTPRequestHandler):
    received = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"])).decode("utf-8")
        _Receiver.received.append((body, {k.lower(): v for k, v in self.headers.items()}))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.mark.skipif(not STATEFUL, reason="the mock sends no webhooks")
def test_receives_the_webhook_of_a_pause_and_verifies_its_signature_with_standardwebhooks(api):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with client() as c:
            webhooks = subsvc_client.WebhookEndpointsApi(c)
            url = f"http://127.0.0.1:{server.server_address[1]}/hooks"
            endpoint = webhooks.create_webhook_endpoint(WebhookEndpointCreate(url=url, events=["subscription.paused"]))
            paused = api.pause_subscription(take("fulfilled"))
            wh = Webhook(endpoint.secret)

            def of_it():
                return next((r for r in _Receiver.received if wh.verify(r[0], r[1])["data"]["subscription"]["id"] == str(paused.id)), None)

            body, headers = poll(of_it, lambda d: d is not None, "the webhook delivery")
            assert UUID(headers["webhook-id"])
            with pytest.raises(WebhookVerificationError):
                wh.verify(body.replace("paused", "resumed"), headers)
            webhooks.delete_webhook_endpoint(str(endpoint.id))
    finally:
        server.shutdown()


def test_makes_a_portal_link_for_a_customer_lists_it_and_revokes_it_201_204_then_404_0027():
    subscription_id = take("fulfilled")
    with client() as c:
        portal = subsvc_client.CustomerPortalApi(c)
        made = portal.create_portal_link_with_http_info(subscription_id, portal_link_create=PortalLinkCreate(actions=["pause"], expires_in_minutes=60))
        link = made.data
        assert made.status_code == 201
        assert re.search(r"/portal/[A-Za-z0-9_-]{43}$", link.url)
        listed = portal.list_portal_links(subscription_id=UUID(subscription_id))
        if STATEFUL:  # the mock answers the spec's examples, another subscription's link
            assert (str(link.subscription_id), link.actions) == (subscription_id, ["pause"])
            assert [item.id for item in listed.data] == [link.id]
        assert portal.revoke_portal_link_with_http_info(str(link.id)).status_code == 204
        assert problem_of(lambda: portal.revoke_portal_link(str(link.id), _headers=prefer("code=404"))) == (404, "0027")
        if STATEFUL:
            assert portal.list_portal_links(subscription_id=UUID(subscription_id)).data == []


# Last, and in test mode: a hold covers every subscription of its mode, so the live ones the other
# scenarios use are left alone, and the test ones are resumed before it ends.
def test_holds_the_test_store_and_releases_it_202_with_the_hold_listed_and_read_its_subscription_paused_then_resumed_then_409_0035():
    with client(TARGET["testApiKey"]) as c:
        holds, test_api, test_requests = subsvc_client.HoldsApi(c), subsvc_client.SubscriptionsApi(c), subsvc_client.BulkRequestsApi(c)
        [made] = subsvc_client.TestHelpersApi(c).create_test_subscriptions(TestSubscriptionsCreate(count=1)).data
        placed = holds.create_hold_with_http_info(idempotency_key=str(uuid.uuid4()), hold_request=HoldRequest(reason="Stock-out"))
        hold = placed.data
        assert (placed.status_code, placed.headers["Location"], hold.status) == (202, f"/v2/holds/{hold.id}", "active")
        assert holds.get_hold(str(hold.id)).id == hold.id
        listed = holds.list_holds(limit=100)
        if STATEFUL:
            assert (hold.reason, hold.livemode, [h.id for h in listed.data]) == ("Stock-out", False, [hold.id])
            assert completed(test_requests, hold.request_id).operation == "PAUSE"
            held = test_api.get_subscription(str(made.id))
            assert (held.status, held.hold_ids) == ("paused", [hold.id])
        released = holds.release_hold(str(hold.id))
        assert released.status == "released" and released.release_request_id and released.released_at
        if STATEFUL:
            assert completed(test_requests, released.release_request_id).operation == "RESUME"
            assert test_api.get_subscription(str(made.id)).status == "fulfilled"
        assert problem_of(lambda: holds.release_hold(str(hold.id), _headers=prefer("code=409, example=released"))) == (409, "0035")
