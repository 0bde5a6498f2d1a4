"""A replay miss in a sub-agent's run ends its scenario at once, as one in the agent's own run does.

Through the real `clawspec run` CLI in target mode: the local hooks server (OpenClaw's hooks wire
format) plays the gateway. Its agent run makes one model call through ClawSpec's proxy, which
its recording answers, and answers the hook request; a moment later its "sub-agent" makes a
model call in the same trace that the recording does not hold. The `then` check would wait
for a file the sub-agent never writes until the scenario's timeout: here the hang guard's, and
the test tells that the miss ended the check's wait (the scenario's stop was set when it
returned), not how long the run took.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clawspec.assertions.base import EvalContext
from clawspec.cli import main
from clawspec.traffic.cassette import Cassette, RecordedRequest, RecordedResponse
from tests.support.hang_guard import HANG_GUARD_S
from tests.support.hooks_api import HooksServer
from tests.traffic.conftest import post

TOKEN = "hook-token-replay-miss-5d2c"
MESSAGE = "Get the draft reviewed"
TIMEOUT_S = int(HANG_GUARD_S)  # only the miss can end the check before it
CONTRACT = f"""\
version: "1.0"
target: {{type: agent, path: agents/main}}
defaults: {{timeout: {TIMEOUT_S}, poll_interval: 0.05}}
scenarios:
  - name: delegates
    when: {{invoke: "{MESSAGE}"}}
    then:
      - {{type: artifact_exists, path: review.md, timeout: {TIMEOUT_S}}}
"""
SUB_AGENT = "You are the reviewer, a sub-agent."
TRACEPARENT = "00-" + "5" * 32 + "-" + "b" * 16 + "-01"


def _body(content: str, system: str = "You are the agent.") -> dict[str, Any]:
    messages = [{"role": "system", "content": system}, {"role": "user", "content": content}]
    return {"model": "fake-model", "messages": messages}


def _answer(text: str) -> RecordedResponse:
    message = {"role": "assistant", "content": text}
    return RecordedResponse(
        status=200, body={"id": "c1", "choices": [{"index": 0, "message": message}]}
    )


def _record(folder: Path, index: int, body: dict[str, Any], answer: str) -> None:
    request = RecordedRequest(
        path="/chat/completions", endpoint="chat/completions", provider="fake", body=body
    )
    cassette = Cassette(
        scenario="case.clawspec.yaml::delegates",
        index=index,
        recorded_at="2026-11-23T09:39:12+00:00",
        request=request,
        response=_answer(answer),
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{index}.json").write_text(cassette.model_dump_json(indent=2), "utf-8")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_sub_agents_replay_miss_ends_the_scenario_at_once_naming_the_miss(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, write_contract: Callable[..., Path]
) -> None:
    port = _free_port()
    proxy = f"http://127.0.0.1:{port}/fake/chat/completions"
    (workspace / "clawspec.yaml").write_text(
        f"report_dir: reports\nmodel_traffic: replay\nmodel_proxy_port: {port}\n", "utf-8"
    )
    write_contract(CONTRACT)
    folder = workspace / ".clawspec" / "cassettes" / "case.clawspec" / "delegates"
    _record(folder, 1, _body(MESSAGE), "Delegated.")
    _record(folder, 2, _body("Review the draft", SUB_AGENT), "Reviewed.")
    answers: list[int] = []

    def sub_agent() -> None:
        time.sleep(0.3)  # after the hook request was answered, as OpenClaw's sub-agents run
        changed = _body("Review the draft again", SUB_AGENT)
        status, _, _ = post(proxy, changed, {"traceparent": TRACEPARENT})
        answers.append(status)

    def on_run(body: dict[str, Any], run_id: str) -> dict[str, Any]:
        status, _, _ = post(proxy, _body(body["message"]), {"traceparent": TRACEPARENT})
        answers.append(status)
        threading.Thread(target=sub_agent, daemon=True).start()
        return {"ok": True, "runId": run_id, "completion": {"status": "ok"}}

    # Each wait of a check: its timeout, and whether the scenario's stop had ended it.
    waits: list[tuple[float, bool]] = []
    wait_until = EvalContext.wait_until

    def recorded(ctx: EvalContext, predicate: Callable[[], bool], timeout_s: float) -> bool:
        found = wait_until(ctx, predicate, timeout_s)
        waits.append((timeout_s, ctx.stop.is_set()))
        return found

    monkeypatch.setattr(EvalContext, "wait_until", recorded)
    with HooksServer(TOKEN, workspace, on_run=on_run) as server:
        monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", TOKEN)
        monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", server.base_url)
        assert main(["run", ".", "--no-color"]) == 1

    assert (TIMEOUT_S, True) in waits, waits  # the check's wait was ended by the miss
    assert answers == [200, 400]  # the agent's call replayed, the sub-agent's refused
    report = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    (scenario,) = report["scenarios"]
    assert scenario["status"] == "error"
    assert scenario["message"] == (
        "model traffic replay: model call 2 differs from the closest recording 2.json: "
        "messages[1] (user) changed: -Review the draft; the whole diff: model_traffic.diff "
        "in the JSON report"
    )
    assert scenario["model_traffic"]["used"] == [1]
    assert scenario["model_traffic"]["unmatched"] == 1
    # The check waiting for the sub-agent's file was cut short: it has no verdict.
    assert scenario["assertions"] == []
