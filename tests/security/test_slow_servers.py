"""Servers that answer slowly on purpose cannot hold a run: every network call has a deadline.

A server that sends its headers and then one byte a second never trips a read timeout (the wait
between bytes); without deadlines these calls took 20-45 s and more. Real HTTP on 127.0.0.1
(tests/support/slow_server.py), the real `requests`, `anthropic` and `boto3` clients.

No upper bound on wall time (a busy machine would make it flake): that a call gave up at its
deadline shows in what the deadline wrote (its error names it) and in the server, whose answer
was still being sent when the call returned (`completed`: trickled answers take a minute and
more). Lower bounds stay (a call cut too early): a slow machine only makes a call take longer.
"""

from __future__ import annotations

import http.client
import http.server
import json
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests

from clawspec.config.settings import JudgeSettings, Settings
from clawspec.evidence.trace import make_backend
from clawspec.evidence.trace_poll import poll_trace
from clawspec.gateway.client import HTTP_GRACE_S, HooksClient, InvocationError, InvokeRequest
from clawspec.judge.client import JudgeCallError, JudgeClient, RetryPolicy
from clawspec.judge.prompt import SYSTEM_PROMPT
from clawspec.net import sessions, watch
from clawspec.net.deadline import (
    GRACE_S,
    Deadline,
    DeadlineExceeded,
    Stopped,
    request,
    safe_url,
    scope,
)
from clawspec.traces.model import TraceUnavailable
from tests.support.anthropic_api import API_KEY
from tests.support.bedrock_api import MODEL_ID, REGION, isolate_aws
from tests.support.slow_server import Answer, SlowServer
from tests.traces.test_lookup import QUERY

TRICKLE_S = 1.0  # one byte a second: no read timeout ever fires
MODEL = "claude-sonnet-4-6"
MESSAGE = {
    "id": "msg_slow01",
    "type": "message",
    "role": "assistant",
    "model": MODEL,
    "content": [
        {
            "type": "tool_use",
            "id": "toolu_slow01",
            "name": "record_verdict",
            "input": {"score": 5, "reasoning": "Fine."},
        }
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 5},
}


def trickling(body: bytes, **answer: Any) -> SlowServer:
    return SlowServer(Answer(body=body, trickle_s=TRICKLE_S, **answer))


def timed(call: Callable[[], Any]) -> tuple[Any, float]:
    """Return (the result or the exception raised, seconds taken: for lower bounds only)."""
    started = time.monotonic()
    try:
        outcome: Any = call()
    except Exception as exc:
        outcome = exc
    return outcome, time.monotonic() - started


# -- the helper ---------------------------------------------------------------------------------

# ClawSpec's own sessions are watched from the watchdog thread (net/watch.py); any other session
# falls back to a worker thread per request. Both must end a request the same way.
SESSIONS = [
    pytest.param(sessions.session, id="clawspec-session"),
    pytest.param(requests.Session, id="other-session"),
]


def test_the_grace_is_five_seconds_and_the_hook_client_uses_it() -> None:
    assert GRACE_S == HTTP_GRACE_S == 5.0


@pytest.mark.parametrize("make_session", SESSIONS)
def test_a_trickled_body_is_cut_at_the_deadline_naming_the_url_without_secrets(
    make_session: Callable[[], requests.Session],
) -> None:
    with trickling(b'{"data": "' + b"x" * 100 + b'"}') as server:
        url = f"http://user:pa55word@127.0.0.1:{server.server.server_address[1]}/v1/x?key=s3cret"
        outcome, took = timed(
            lambda: request(make_session(), "GET", url, deadline=Deadline.after(2, "2 s"))
        )
        completed = server.completed
    assert isinstance(outcome, DeadlineExceeded)
    assert str(outcome) == f"GET {server.url}/v1/x did not finish within 2 s"
    assert "s3cret" not in str(outcome) and "pa55word" not in str(outcome)
    assert took >= 1.9
    assert completed == 0  # cut while the body trickled (it takes 114 s)


@pytest.mark.parametrize("make_session", SESSIONS)
def test_trickled_headers_are_cut_at_the_deadline_too(
    make_session: Callable[[], requests.Session],
) -> None:
    """A read timeout never fires between the bytes of a status line sent one a second."""
    with SlowServer(Answer(trickle_head_s=TRICKLE_S)) as server:
        outcome, took = timed(
            lambda: request(
                make_session(), "GET", server.url + "/h", deadline=Deadline.after(2, "2 s")
            )
        )
        completed = server.completed
    assert isinstance(outcome, DeadlineExceeded)
    assert str(outcome) == f"GET {server.url}/h did not finish within 2 s"
    assert took >= 1.9
    assert completed == 0  # cut while the status line and headers trickled (over a minute)


@pytest.mark.parametrize("make_session", SESSIONS)
def test_a_stop_ends_the_wait_for_an_answer_long_before_the_deadline(
    make_session: Callable[[], requests.Session],
) -> None:
    """A caller that gives up (a scenario abandoned) stops waiting at once, deadline or not."""
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    with SlowServer(Answer(delay_s=30)) as server:
        outcome, _ = timed(
            lambda: request(
                make_session(),
                "GET",
                server.url + "/h",
                deadline=Deadline.after(60, "60 s"),
                stop=stop,
            )
        )
        completed = server.completed
    # Stopped, not DeadlineExceeded: the stop ended the wait, before the server answered.
    assert isinstance(outcome, Stopped)
    assert str(outcome) == f"GET {server.url}/h: no longer waited for (stopped)"
    assert completed == 0


def test_a_gateway_that_trickles_its_readiness_answer_is_probed_again_not_waited_for() -> None:
    """Bring-up polls /readyz: one probe never holds the wait for the gateway longer than 2 s."""
    from clawspec.gateway.bringup import PROBE_S, GatewayProcess

    with SlowServer(Answer(trickle_head_s=TRICKLE_S, body=b'{"ready": true}')) as server:
        ready_by = time.monotonic() + 60
        (ready, last), took = timed(
            lambda: GatewayProcess._probe(requests.Session(), server.url, ready_by)
        )
        completed = server.completed
    assert (ready, last) == (False, "DeadlineExceeded")
    assert took >= PROBE_S - 0.1
    assert completed == 0  # the probe gave up on the trickled answer, not the 60 s wait
    with SlowServer(Answer(body=b'{"ready": true}')) as server:
        assert GatewayProcess._probe(requests.Session(), server.url, ready_by) == (True, "HTTP 200")


@pytest.mark.parametrize("make_session", SESSIONS)
def test_a_request_started_near_the_end_of_its_scope_gets_only_what_is_left(
    make_session: Callable[[], requests.Session],
) -> None:
    # The server would answer after a minute; leaving the block ends its wait.
    with (
        SlowServer(Answer(delay_s=60)) as server,
        scope(Deadline.after(0.3, "the trace timeout (4 s)")),
    ):
        outcome, _ = timed(
            lambda: request(make_session(), "GET", server.url + "/q", deadline=Deadline.after(30))
        )
        completed = server.completed
    assert isinstance(outcome, DeadlineExceeded)
    # the scope's deadline fired, not the request's own 30 s (the message would name 30 s)
    assert "within the trace timeout (4 s)" in str(outcome)
    assert completed == 0


@pytest.mark.parametrize("make_session", SESSIONS)
def test_a_slow_but_timely_answer_is_read_whole(
    make_session: Callable[[], requests.Session],
) -> None:
    body = json.dumps({"ok": True, "items": list(range(20))}).encode()
    with SlowServer(Answer(body=body, trickle_s=0.005)) as server:
        session = make_session()
        first = request(session, "POST", server.url + "/a", json={}, deadline=Deadline.after(10))
        second = request(session, "GET", server.url + "/b", deadline=Deadline.after(10))
    assert first.json() == second.json() == {"ok": True, "items": list(range(20))}
    assert first.text == body.decode()
    assert watch.watchable(session, server.url) == isinstance(session, sessions.Session)


def test_safe_url_drops_credentials_query_and_fragment() -> None:
    assert safe_url("https://u:p@api.example.com:8443/a/b?token=x#f") == (
        "https://api.example.com:8443/a/b"
    )


# -- the hook request: the scenario's timeout + the grace ---------------------------------------


def test_a_trickling_gateway_holds_the_hook_call_no_longer_than_timeout_plus_grace() -> None:
    answer = json.dumps({"ok": True, "runId": "r1", "completion": {"status": "ok"}}).encode()
    with trickling(answer + b" " * 60) as server:
        hooks = HooksClient(server.url, "/hooks", "hook-token")
        invoke = InvokeRequest("go", "slow", "main", "hook:clawspec:r1", timeout_s=3)
        outcome, took = timed(lambda: hooks.invoke(invoke))
        completed = server.completed
    assert isinstance(outcome, InvocationError)
    assert outcome.timed_out
    assert str(outcome) == f"no completion within 3 s (POST {server.url}/hooks/agent)"
    assert took >= 3 + GRACE_S - 0.5
    assert completed == 0  # cut while the answer trickled (it takes two minutes)


def test_a_scenario_against_a_trickling_gateway_is_an_error_within_timeout_plus_grace(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from clawspec.cli import main

    write_contract(
        'version: "1.0"\ntarget: {type: skill, path: skills/x}\ndefaults: {timeout: 3}\n'
        'scenarios:\n  - name: trickled\n    when: {invoke: "go"}\n'
        "    then: [{type: file_absent, path: n}]\n"
    )
    with trickling(b'{"ok": true, "completion": {"status": "ok"}}' + b" " * 60) as server:
        monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", "hook-token")
        monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", server.url)
        code, _ = timed(lambda: main(["run", "."]))
        completed = server.completed
    assert code == 1
    assert completed == 0  # the run did not wait for the trickled answer (over a minute)
    report = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    (scenario,) = report["scenarios"]
    assert scenario["status"] == "error"
    assert scenario["message"].startswith("invocation failed: no completion within 3 s")


# -- trace backends: the trace timeout bounds the whole poll loop -------------------------------


BACKENDS: dict[str, tuple[dict[str, Any], dict[str, str]]] = {
    "phoenix": ({"backend": "phoenix"}, {}),
    "langfuse": (
        {"backend": "langfuse"},
        {"LANGFUSE_PUBLIC_KEY": "pk", "LANGFUSE_SECRET_KEY": "s"},
    ),
    "opik": ({"backend": "opik", "workspace": "ws"}, {}),
    "local": ({"backend": "local"}, {}),
}


def _backend(name: str, url: str) -> Any:
    observability, environ = BACKENDS[name]
    return make_backend(Settings(observability={**observability, "url": url}), environ)


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_a_trickling_trace_backend_gives_up_within_the_trace_timeout(name: str) -> None:
    with trickling(b'{"data": []' + b" " * 60 + b"}") as server:
        backend = _backend(name, server.url)
        outcome, _ = timed(lambda: poll_trace(backend, QUERY, delay_ms=500, timeout_ms=4000))
        completed = server.completed
    assert isinstance(outcome, TraceUnavailable), outcome
    assert f"no trace found in '{name}' for run run0000000000001" in outcome.reason
    assert outcome.reason.endswith("did not finish within the trace timeout (4 s)")
    assert completed == 0  # cut while the answer trickled (over a minute)


def test_a_phoenix_answering_each_request_in_3_s_cannot_stretch_the_trace_timeout() -> None:
    empty = json.dumps({"data": [], "next_cursor": None}).encode()
    with SlowServer(Answer(body=empty, delay_s=3)) as server:
        backend = _backend("phoenix", server.url)
        outcome, _ = timed(lambda: poll_trace(backend, QUERY, delay_ms=500, timeout_ms=4000))
        requests_sent = len(server.seen)
    assert isinstance(outcome, TraceUnavailable), outcome
    assert outcome.reason.startswith("no trace found in 'phoenix' for run run0000000000001")
    # It took 21 s when each request had its own timeout: the count of requests shows the loop
    # stopped at the trace timeout, and the second request is cut to the 1 s left.
    assert requests_sent <= 2


def test_a_quick_backend_without_the_trace_is_not_reported_as_slow() -> None:
    empty = json.dumps({"data": [], "next_cursor": None}).encode()
    with SlowServer(Answer(body=empty)) as server:
        backend = _backend("phoenix", server.url)
        outcome, took = timed(lambda: poll_trace(backend, QUERY, delay_ms=500, timeout_ms=2000))
        requests_sent, completed = len(server.seen), server.completed
    assert isinstance(outcome, TraceUnavailable), outcome
    assert re.fullmatch(
        r"no trace found in 'phoenix' for run run0000000000001 "
        r"\(session key hook:clawspec:run0000000000001\) after \d+ attempts in 2 s",
        outcome.reason,
    ), outcome.reason  # no word of a deadline: every request was answered in time
    assert requests_sent >= 2 and completed == requests_sent  # each answered whole, none cut
    assert took >= 2  # it polled for the whole trace timeout


# -- the judge: judge.timeout is a deadline; an answer that is not the promised JSON is named ---


def _judge(base_url: str, timeout: float, **extra: Any) -> JudgeClient:
    settings = JudgeSettings.model_validate(
        {"base_url": base_url, "timeout": timeout, "model": MODEL, **extra}
    )
    client = JudgeClient.from_settings(settings, {"ANTHROPIC_API_KEY": API_KEY})
    client.policy = RetryPolicy(base_delay_s=0.05, max_delay_s=0.2)
    return client


def _ask(client: JudgeClient, budget_s: float) -> Any:
    try:
        return client.ask(SYSTEM_PROMPT, "judge this", time.monotonic() + budget_s)
    finally:
        client.close()


def test_a_trickling_judge_is_cut_off_at_judge_timeout() -> None:
    with trickling(json.dumps(MESSAGE).encode()) as server:
        outcome, _ = timed(lambda: _ask(_judge(server.url, 3), 3))
        completed = server.completed
    assert isinstance(outcome, JudgeCallError)
    assert str(outcome).endswith("(judge.timeout 3 s): last timed out")
    assert completed == 0  # cut while the answer trickled (over five minutes)


def test_a_trickling_bedrock_judge_is_cut_off_at_judge_timeout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    isolate_aws(monkeypatch, tmp_path, with_credentials=True)
    with trickling(json.dumps(MESSAGE).encode()) as server:
        settings = JudgeSettings.model_validate(
            {
                "provider": "bedrock",
                "model": MODEL_ID,
                "region": REGION,
                "base_url": server.url,
                "timeout": 3,
            }
        )
        client = JudgeClient.from_settings(settings)
        outcome, _ = timed(lambda: _ask(client, 3))
        path = server.seen[0].path if server.seen else ""
        completed = server.completed
    assert path.startswith("/model/") and path.endswith("/invoke")
    assert REGION in server.seen[0].headers.get("authorization", "")
    assert isinstance(outcome, JudgeCallError)
    assert str(outcome).endswith("(judge.timeout 3 s): last timed out")
    assert completed == 0


HTML = (
    "<html><head><title>Sign in to the corporate proxy</title></head><body>"
    + "<p>Your session has expired. Please sign in again to continue.</p>" * 10
    + "</body></html>"
)


@pytest.mark.parametrize(
    ("body", "content_type", "shown"),
    [
        (HTML.encode(), "text/html; charset=utf-8", "'<html><head><title>Sign in to the"),
        (b'"just a string"', "application/json", "'\"just a string\"'"),
        (b'{"type": "message", "role": "assistant"}', "application/json", '\'{"type": "message"'),
        (b"", "application/json", "an empty body"),
    ],
)
def test_a_200_that_is_not_a_messages_response_is_named(
    body: bytes, content_type: str, shown: str
) -> None:
    with SlowServer(Answer(body=body, content_type=content_type)) as server:
        outcome, _ = timed(lambda: _ask(_judge(server.url, 5), 5))
        calls = len(server.seen)
    assert isinstance(outcome, JudgeCallError)
    assert str(outcome).startswith(
        f"judge answered HTTP 200 ({content_type}) but not with a Messages API response: {shown}"
    )
    assert calls == 1  # not retried: the same proxy would answer the same


def test_the_excerpt_of_a_strange_answer_is_200_characters_cut_between_characters() -> None:
    body = ("é" * 500).encode()
    with SlowServer(Answer(body=body, content_type="text/plain")) as server:
        outcome, _ = timed(lambda: _ask(_judge(server.url, 5), 5))
    shown = str(outcome).split(": ", 1)[1]
    assert shown == repr("é" * 199 + "…")


def test_an_html_200_judge_answer_makes_the_llm_judge_verdict_an_error(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clawspec.assertions.base import Status
    from tests.support.harness import evaluate_one, make_context

    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    (workspace / "out.md").write_text("# Launch\n\nOur planner ships today.\n", "utf-8")
    with SlowServer(Answer(body=HTML.encode(), content_type="text/html")) as server:
        settings = Settings.model_validate(
            {"judge": {"base_url": server.url, "model": MODEL, "timeout": 5}}
        )
        assertion = {"type": "llm_judge", "path": "out.md", "rubric": "Is it clear?"}
        verdict = evaluate_one(assertion, make_context(workspace, settings))
    assert verdict.status == Status.ERROR
    assert "judge answered HTTP 200 (text/html)" in verdict.message
    assert "<html><head><title>Sign in to the corporate proxy</title>" in verdict.message
    assert API_KEY not in repr(verdict)


# -- GitHub REST, S3 history, the model-traffic proxy -------------------------------------------


def test_a_trickling_github_api_is_cut_off_per_request(monkeypatch: pytest.MonkeyPatch) -> None:
    from clawspec.reports.github import api

    monkeypatch.setattr(api, "TIMEOUT_S", (1, 1.5))
    token = "ghs_slowtoken0123456789"
    with trickling(b'{"message": "' + b"x" * 60 + b'"}') as server:
        github = api.GitHubApi(server.url, token, sleep=lambda s: None, backoff_s=0)
        outcome, _ = timed(lambda: github.request("GET", f"{server.url}/repos/o/r?page=2"))
        attempts, completed = len(server.seen), server.completed
    assert isinstance(outcome, api.GitHubApiError)
    assert str(outcome) == (
        f"GET {server.url}/repos/o/r failed: DeadlineExceeded "
        f"(GET {server.url}/repos/o/r did not finish within 1.5 s)"
    )
    assert token not in str(outcome)
    # each attempt cut at its own 1.5 s (the answer trickles for over a minute), no more attempts
    assert 1 <= attempts <= api.MAX_ATTEMPTS and completed == 0


def test_a_github_call_ends_within_its_own_time_whatever_its_retries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server that accepts and never finishes: one call, retries and backoff included, ends
    within CALL_S (it was four full timeouts and their waits, minutes per call). Told by the
    attempts made (each cut at 1.5 s, so the call's 2.5 s leaves room for two at most; a busy
    machine only makes fewer), not by timing the call."""
    from clawspec.reports.github import api

    monkeypatch.setattr(api, "TIMEOUT_S", (1, 1.5))
    monkeypatch.setattr(api, "CALL_S", 2.5)
    with trickling(b'{"message": "' + b"x" * 60 + b'"}') as server:
        github = api.GitHubApi(server.url, "ghs_slowtoken0123456789", backoff_s=0.2)
        outcome, _ = timed(lambda: github.request("GET", f"{server.url}/repos/o/r"))
        attempts, completed = len(server.seen), server.completed
    assert isinstance(outcome, api.GitHubApiError)
    assert 1 <= attempts <= 2 and completed == 0  # the call's time, not 4 attempts


def test_a_create_whose_answer_did_not_come_is_not_sent_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The comment (or check run) may have been made: sent again it would be made twice, and
    later runs would update only one of them."""
    from clawspec.reports.github import api

    monkeypatch.setattr(api, "TIMEOUT_S", (1, 1.5))
    with trickling(b'{"id": 1' + b" " * 60 + b"}") as server:
        github = api.GitHubApi(server.url, "ghs_slowtoken0123456789", backoff_s=0)
        outcome, _ = timed(
            lambda: github.request("POST", f"{server.url}/repos/o/r/issues/7/comments", {})
        )
        attempts = len(server.seen)
    assert isinstance(outcome, api.GitHubApiError) and "DeadlineExceeded" in str(outcome)
    assert attempts == 1


def test_a_trickling_s3_store_is_cut_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from clawspec.history import s3store
    from clawspec.history.store import HistoryError

    isolate_aws(monkeypatch, tmp_path, with_credentials=True)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setattr(s3store, "OPERATION_LIMIT_S", 2.0)
    with trickling(b"{" + b" " * 60 + b"}") as server:
        blobs = s3store.S3Blobs("history", "team", endpoint=server.url)
        outcome, _ = timed(lambda: blobs.read("main/index.json"))
        seen = server.seen[0].path if server.seen else ""
        completed = server.completed
    assert seen == "/history/team/main/index.json"  # the real boto3 client, path style
    assert isinstance(outcome, HistoryError)
    assert str(outcome) == (
        f"s3://history/team/main/index.json at {server.url}: cannot read: no answer within 2 s"
    )
    assert completed == 0  # cut while the answer trickled (over a minute)


@pytest.mark.parametrize("content_type", ["application/json", "text/event-stream"])
def test_a_trickling_model_provider_is_cut_off_by_the_proxy(
    monkeypatch: pytest.MonkeyPatch, content_type: str
) -> None:
    from clawspec.traffic import proxy
    from tests.traffic.conftest import post, session

    monkeypatch.setattr(proxy, "UPSTREAM_TIMEOUT_S", 2)
    body = b'data: {"choices": []}\n\n' * 5 if "stream" in content_type else b'{"id": "x"}' * 5
    with (
        trickling(body, content_type=content_type) as server,
        session("record", {"fake": server.url}) as traffic,
    ):
        url = f"{traffic.base_url}/fake/chat/completions"
        outcome, _ = timed(lambda: post(url, {"model": "m", "messages": []}))
        completed = server.completed
    assert completed == 0  # the proxy cut the upstream while it trickled (about a minute)
    if "stream" in content_type:  # the answer had begun: the caller sees it end incomplete
        assert isinstance(outcome, http.client.IncompleteRead)
    else:
        status, raw, _ = outcome
        assert status == 504
        assert (
            f"upstream POST {server.url}/chat/completions did not finish within 2 s" in raw.decode()
        )


def test_an_answer_too_long_to_hold_is_not_read_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """A trace backend (a bug, or hostile) answering hundreds of MB: the call ends once the
    cap is passed, instead of holding it all in memory."""
    from clawspec.net import deadline as net

    monkeypatch.setattr(net, "MAX_BODY_BYTES", 1024 * 1024)
    sent = [0]

    class Endless(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"x" * 65536
            try:
                while sent[0] < 64 * 1024 * 1024:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    sent[0] += len(chunk)
            except OSError:
                pass  # the client stopped reading

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Endless)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1/spans"
        with pytest.raises(net.BodyTooLarge, match="longer than 1 MiB; not read on"):
            request(requests.Session(), "GET", url, deadline=Deadline.after(30))
    finally:
        server.shutdown()
        server.server_close()
    assert sent[0] < 64 * 1024 * 1024  # it stopped sending: nobody read on
