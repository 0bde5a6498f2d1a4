"""The hooks client does not retry a 502 the run's log shows final, and retries the others.

OpenClaw 2026.9.6 answers a run it skipped because its local model provider failed the
preflight with the same 502 as a run it could not start yet (checked on the real gateway: the
body is only the generic error and the run id, `REFUSAL` below). The server here answers that
recorded body and writes the recorded log lines of such a run
(fixtures/openclaw-preflight-failed.log) with the refused run's ids into the gateway log, as the
gateway does, and `RefusalWatch` reads them the way the runner asks it to.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clawspec.gateway.client import HooksClient, InvocationError, InvokeRequest
from clawspec.gateway.run_failure import RefusalWatch, RunFailure, refused_for_good
from tests.support.fake_time import FakeTime
from tests.support.hooks_api import HooksServer

TOKEN = "hook-token"
FIXTURE = Path(__file__).parent / "fixtures" / "openclaw-preflight-failed.log"
RECORDED_RUN = "47b3057f-d73c-4b2f-9034-52b1b7201734"
RECORDED_KEY = "hook:clawspec:68ff589ea0d240bc"
PREFLIGHT = (
    "This automation uses down/m1 but the local provider preflight failed at "
    "http://127.0.0.1:9/v1. The candidate is unavailable for this run; OpenClaw will retry its "
    "provider preflight on a later scheduled run. Last error: fetch failed | bad port"
)
REFUSAL = "hook agent run failed before entering the agent runner"
SESSION_KEY = "hook:clawspec:c1a5e2d4"


def _preflight_lines(run_id: str, session_key: str) -> str:
    """The recorded lines of a run skipped at its provider's preflight, as the run `run_id`."""
    text = FIXTURE.read_text("utf-8")
    assert PREFLIGHT in text and RECORDED_RUN in text  # the recording is what this test says
    return text.replace(RECORDED_RUN, run_id).replace(RECORDED_KEY, session_key)


def _not_ready_lines(run_id: str, session_key: str) -> str:
    """The completion line of a run that failed before the runner for another cause."""
    completion = _preflight_lines(run_id, session_key).splitlines(True)[1]
    return completion.replace(PREFLIGHT, "Error: gateway still starting").replace(
        '"status":"skipped"', '"status":"error"'
    )


def _gateway(
    log: Path, refusals: list[Callable[[str, str], str]], status: int = 502
) -> Callable[[dict[str, Any], str], Any]:
    """on_run for HooksServer: the n-th request is refused with `status` after writing the
    log lines `refusals[n]` makes (none when it returns ""); once they are used up the runs
    complete normally."""
    lock = threading.Lock()

    def on_run(body: dict[str, Any], run_id: str) -> Any:
        with lock:
            if not refusals:
                return None
            lines = refusals.pop(0)(run_id, str(body.get("sessionKey")))
        with log.open("a", encoding="utf-8") as handle:
            handle.write(lines)
        error = (
            REFUSAL if status == 502 else "hook agent run did not start before admission timeout"
        )
        return status, {"ok": False, "error": error, "runId": run_id}

    return on_run


def _request(log: Path) -> InvokeRequest:
    watch = RefusalWatch(log, 0, "c1a5e2d4", SESSION_KEY)
    return InvokeRequest("go", "down", "main", SESSION_KEY, 60, refused_for_good=watch)


def _client(server: HooksServer, fake: FakeTime) -> HooksClient:
    return HooksClient(server.base_url, "/hooks", TOKEN, sleep=fake.sleep, clock=fake.clock)


def test_a_provider_that_failed_its_preflight_is_not_retried(tmp_path: Path) -> None:
    log = tmp_path / "openclaw.log"
    log.write_text("", "utf-8")
    fake = FakeTime()
    server = HooksServer(TOKEN, tmp_path, on_run=_gateway(log, [_preflight_lines] * 5))
    with server, pytest.raises(InvocationError) as caught:
        _client(server, fake).invoke(_request(log))
    assert len(server.requests) == 1 and fake.pauses == []
    error = caught.value
    assert error.http_status == 502
    assert error.gateway_run_id is not None and error.gateway_run_id in log.read_text("utf-8")
    # OpenClaw's words without the body's JSON: the runner adds the cause and the fix.
    assert str(error) == f"POST {server.base_url}/hooks/agent → 502: {REFUSAL}"


def test_a_502_for_another_cause_is_retried(tmp_path: Path) -> None:
    log = tmp_path / "openclaw.log"
    log.write_text("", "utf-8")
    fake = FakeTime()
    with HooksServer(TOKEN, tmp_path, on_run=_gateway(log, [_not_ready_lines] * 2)) as server:
        result = _client(server, fake).invoke(_request(log))
    assert result.status == "ok"
    assert len(server.requests) == 3 and fake.pauses == [2.0, 5.0]


def test_a_preflight_failure_after_a_retry_stops_the_retries(tmp_path: Path) -> None:
    # Not ready first, then the provider's preflight fails: the second refusal is the last.
    log = tmp_path / "openclaw.log"
    log.write_text("", "utf-8")
    fake = FakeTime()
    refusals = [_not_ready_lines, _preflight_lines, _preflight_lines]
    server = HooksServer(TOKEN, tmp_path, on_run=_gateway(log, refusals))
    with server, pytest.raises(InvocationError) as caught:
        _client(server, fake).invoke(_request(log))
    assert len(server.requests) == 2 and fake.pauses == [2.0]
    assert "(2 attempts in 2 s)" in str(caught.value)


def test_without_the_log_every_502_is_retried(tmp_path: Path) -> None:
    log = tmp_path / "openclaw.log"  # never written: the watch has nothing to read
    fake = FakeTime()
    refusals: list[Callable[[str, str], str]] = [lambda run_id, key: ""] * 2
    server = HooksServer(TOKEN, tmp_path, on_run=_gateway(tmp_path / "elsewhere.log", refusals))
    with server:
        result = _client(server, fake).invoke(_request(log))
    assert result.status == "ok" and len(server.requests) == 3 and fake.pauses == [2.0, 5.0]


def test_a_503_is_retried_whatever_the_log_says(tmp_path: Path) -> None:
    # A run past the admission timeout never reached the preflight: the log of an earlier run
    # with the same session key does not make it final.
    log = tmp_path / "openclaw.log"
    log.write_text("", "utf-8")
    fake = FakeTime()
    with HooksServer(
        TOKEN, tmp_path, on_run=_gateway(log, [_preflight_lines], status=503)
    ) as server:
        result = _client(server, fake).invoke(_request(log))
    assert result.status == "ok" and len(server.requests) == 2 and fake.pauses == [2.0]


def test_only_a_preflight_failure_is_final() -> None:
    assert refused_for_good(RunFailure(cause=PREFLIGHT, status="skipped"))
    assert refused_for_good(RunFailure(errors=["x", PREFLIGHT]))
    assert not refused_for_good(RunFailure(cause="Error: gateway still starting"))
    assert not refused_for_good(None)
    # the model policy refusing a variant's model: every retry is refused the same way
    policy = (
        "automation model override 'fake/fake-model-b' rejected by "
        "agents.defaults.modelPolicy.allow: fake/fake-model-b is not in [fake/fake-model]"
    )
    assert refused_for_good(RunFailure(cause=policy, status="error"))
