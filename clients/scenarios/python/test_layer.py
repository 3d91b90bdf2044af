"""The client layer of subsvc-client as a merchant uses it, against the target SUBSVC_TARGET names
(scripts/clients/test.ts): retries through lost answers, every page of a list, typed errors and
webhook verification. The same scenarios in TypeScript, Go and Java: clients/scenarios/*.

Lost answers are made for real by a loopback proxy in front of the target: it forwards a request,
then answers 503 in place of the target's answer (the target did the work; the client never heard).
"""

import base64
import hashlib
import hmac
import inspect
import json
import os
import re
import threading
import time
import urllib.error
import urllib.request
import uuid
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from standardwebhooks.webhooks import Webhook

from subsvc_client import PauseRequest, TestSubscriptionsCreate
from subsvc_client.layer import Client, InvalidStatusTransitionError, WebhookVerificationError, list_all, verify

with open(os.environ["SUBSVC_TARGET"], encoding="utf-8") as target_file:
    TARGET = json.load(target_file)
STATEFUL = TARGET["stateful"]


def take(status):
    """Subscriptions for these scenarios alone (test_scenarios.py takes from `ids`)."""
    return TARGET["layerIds"][status].pop(0)


def mock_headers(prefer):
    """The mock answers what it is asked for; an error's body is problem+json, so Accept names it."""
    return None if STATEFUL else {"Prefer": prefer, "Accept": "application/json, application/problem+json"}


class LossyProxy(BaseHTTPRequestHandler):
    lose = 0
    keys = []
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def _forward(self):
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        with LossyProxy.lock:
            LossyProxy.keys.append(self.headers.get("idempotency-key"))
            lost = self.command == "POST" and LossyProxy.lose > 0
            if lost:
                LossyProxy.lose -= 1
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
        request = urllib.request.Request(TARGET["baseUrl"] + self.path, data=body if body else None, method=self.command, headers=headers)
        try:
            with urllib.request.urlopen(request) as answer:
                status, answer_headers, answer_body = answer.status, answer.headers, answer.read()
        except urllib.error.HTTPError as error:
            status, answer_headers, answer_body = error.code, error.headers, error.read()
        if lost:
            status, answer_body = 503, json.dumps({"type": "about:blank", "title": "Service unavailable", "status": 503, "detail": "lost on purpose", "code": "0910"}).encode()
            answer_headers = {"content-type": "application/problem+json"}
        self.send_response(status)
        for name, value in answer_headers.items():
            if name.lower() not in ("content-length", "transfer-encoding", "connection", "date", "server"):
                self.send_header(name, value)
        self.send_header("content-length", str(len(answer_body)))
        self.end_headers()
        self.wfile.write(answer_body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward


@pytest.fixture(scope="module")
def proxy_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), LossyProxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_layer_retries_a_pause_whose_first_two_answers_are_lost_with_one_idempotency_key_200_applied_once(proxy_url):
    subscription_id = take("fulfilled")
    with Client(TARGET["apiKey"], base_url=proxy_url, initial_delay=0.02) as client:
        LossyProxy.lose = 2
        before = len(LossyProxy.keys)
        paused = client.subscriptions.pause_subscription(subscription_id)
        assert paused.status == "paused"
        keys = LossyProxy.keys[before:]
        assert len(keys) == 3 and len(set(keys)) == 1
        assert re.fullmatch(r"[0-9a-f-]{36}", keys[0])
        if STATEFUL:
            assert paused_events(client, subscription_id) == 1


def paused_events(client, subscription_id):
    """The subscription's subscription.paused events, once there is one (events are recorded just after the change)."""
    deadline = time.monotonic() + 20
    while True:
        events = client.events.list_events(subscription_id=uuid.UUID(subscription_id)).data
        count = [e.actual_instance.type for e in events].count("subscription.paused")
        if count > 0 or time.monotonic() > deadline:
            return count
        time.sleep(0.1)


@pytest.mark.skipif(not STATEFUL, reason="the mock has no failures on demand: the service only")
def test_layer_sends_a_pause_through_subsvc_test_outcome_unavailable_2_retried_with_one_key_200_applied_once():
    with Client(TARGET["testApiKey"], base_url=TARGET["baseUrl"], initial_delay=0.02) as client:
        [made] = client.test_helpers.create_test_subscriptions(TestSubscriptionsCreate(count=1)).data
        paused = client.subscriptions.pause_subscription(str(made.id), subsvc_test_outcome="unavailable:2")
        assert paused.status == "paused"
        assert paused_events(client, str(made.id)) == 1


def test_layer_keeps_calls_written_before_subsvc_test_outcome_working_and_refuses_extra_positionals_clearly():
    with Client(TARGET["testApiKey"], base_url=TARGET["baseUrl"]) as client:
        [made] = client.test_helpers.create_test_subscriptions(TestSubscriptionsCreate(count=1)).data
        # As written before the header was declared: (subscription_id, idempotency_key, command_request).
        paused = client.subscriptions.pause_subscription(str(made.id), f"old-style-{uuid.uuid4()}", PauseRequest(reason="Travelling"))
        assert paused.status == "paused"
        if STATEFUL:
            assert paused.pause_reason == "Travelling"
        parameters = inspect.signature(client.subscriptions.pause_subscription).parameters
        assert list(parameters)[:3] == ["subscription_id", "idempotency_key", "command_request"]
        assert parameters["subsvc_test_outcome"].kind is inspect.Parameter.KEYWORD_ONLY
        with pytest.raises(TypeError, match="pass subsvc_test_outcome and the options by keyword"):
            client.subscriptions.pause_subscription(str(made.id), None, None, "conflict")


def test_layer_iterates_over_every_page_of_a_list_each_subscription_once():
    with Client(TARGET["listApiKey"], base_url=TARGET["baseUrl"]) as client:
        seen = [str(s.id) for s in list_all(client.subscriptions.list_subscriptions, limit=100)]
    assert len(set(seen)) == len(seen)
    if TARGET["listCount"] is not None:
        assert len(seen) == TARGET["listCount"]
    else:
        assert seen


def test_layer_raises_a_conflict_as_invalid_status_transition_error_with_status_code_detail_and_request_id():
    with Client(TARGET["apiKey"], base_url=TARGET["baseUrl"], headers=mock_headers("code=409")) as client:
        with pytest.raises(InvalidStatusTransitionError) as raised:
            client.subscriptions.pause_subscription(take("cancelled"))
    error = raised.value
    assert (error.status, error.code) == (409, "0030")
    assert error.detail
    if STATEFUL:
        assert error.request_id


SECRET = "whsec_" + base64.b64encode(uuid.uuid4().bytes + uuid.uuid4().bytes).decode()
BODY = json.dumps(
    {
        "type": "subscription.paused",
        "timestamp": "2026-12-06T10:00:00.000000Z",
        "livemode": True,
        "data": {
            "subscription": {
                "id": "6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60",
                "merchantId": "0b7e4c1a-2d3f-4e5a-8b9c-0d1e2f3a4b5c",
                "planId": "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
                "status": "paused",
                "cycle": 3,
                "createdAt": "2026-11-01T08:00:00.000000Z",
                "modifiedAt": "2026-12-06T10:00:00.000000Z",
                "livemode": True,
            },
            "previousStatus": "fulfilled",
            "cause": {"kind": "api"},
        },
    }
)


def signed(at, body=BODY):
    message_id = f"msg_{uuid.uuid4()}"
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Webhook(SECRET).sign(message_id, at, body),
    }


def test_layer_verify_accepts_a_good_signature_and_gives_the_typed_event():
    event = verify(BODY, signed(datetime.now(timezone.utc)), SECRET)
    assert event.type == "subscription.paused"
    assert event.data.previous_status == "fulfilled"


def test_layer_verify_refuses_a_bad_signature_and_an_old_timestamp():
    with pytest.raises(WebhookVerificationError):
        verify(BODY.replace('"cycle": 3', '"cycle": 4'), signed(datetime.now(timezone.utc)), SECRET)
    with pytest.raises(WebhookVerificationError):
        verify(BODY, signed(datetime.now(timezone.utc) - timedelta(minutes=10)), SECRET)
    now = str(int(time.time()))
    forged = base64.b64encode(hmac.new(b"not the secret", f"msg_1.{now}.{BODY}".encode(), hashlib.sha256).digest()).decode()
    with pytest.raises(WebhookVerificationError):
        verify(BODY, {"webhook-id": "msg_1", "webhook-timestamp": now, "webhook-signature": f"v1,{forged}"}, SECRET)
