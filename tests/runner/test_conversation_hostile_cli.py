"""Conversations under hostile conditions, through `clawspec run` / `clawspec validate` against a
local server speaking OpenClaw's chat wire format (127.0.0.1):

- a conversation abandoned while a turn is in flight (a second signal, or the grace period's end)
  keeps its finished turns, its run id, duration and spend; the request in flight holds up
  neither the reports nor the process (its answer is held until the test ends, and the turn's
  timeout is hours: a run that waited for it would never end, and the hang guard would fail it);
- a conversation that sent no turn reports `turns: []` (`null` is for one-message scenarios);
- turns that `stop_on_failure` left out leave the scenario's `then` out too, and say so;
- `validate` counts every assertion (the turns' too); a turn that is not a mapping and unknown
  keys of a turn or a scenario say what is allowed;
- a 400 naming the session key says what the gateway answered and what the user can check.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from clawspec import api
from clawspec.cli import main
from clawspec.gateway.chat import ChatError, ChatRequest, send
from tests.runner.test_conversation_turns_cli import _chats, _checks, _report
from tests.support import chat_api
from tests.support.chat_api import ChatServer
from tests.support.hang_guard import HANG_GUARD_S, wait_until

TOKEN = "gw-token-hostile-conv-7d1e"
HOOKS_TOKEN = "hooks-token-hostile-conv-2b9f"
HEADER = """\
version: "1.0"
target: {type: skill, path: skills/news}
"""
ROOT = Path(__file__).parents[2]
HOLD = "[hold]"  # the server keeps this turn's answer until the test ends
HOURS = 36_000  # the scenarios' timeout: a run that waited for the held turn would never end
JUNIT = ("--junit", "reports/junit.xml")


class _QuietListener(chat_api._Listener):
    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # an answer written to a connection the client gave up on


class HoldingServer(ChatServer):
    """A ChatServer that holds the answer to a message with `[hold]` until it is left (or, for
    a client that wrongly waits for it, until the hang guard: then it answers); `held` is set
    once such a request has arrived."""

    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.release = threading.Event()
        self.held = threading.Event()

    def __enter__(self) -> HoldingServer:
        owner = self

        class Handler(chat_api._Handler):
            server_owner = owner

            def _answer(self, message: str, body: dict[str, Any]) -> None:
                if HOLD in message:
                    owner.held.set()
                    owner.release.wait(HANG_GUARD_S)
                super()._answer(message, body)

        self._server = _QuietListener(("127.0.0.1", self.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        super().__exit__(*exc)


@pytest.fixture
def holding() -> Iterator[HoldingServer]:
    with HoldingServer(TOKEN) as server:
        yield server


def _env(server: ChatServer) -> dict[str, str]:
    return {
        "CLAWSPEC_GATEWAY_BASE_URL": server.base_url,
        "CLAWSPEC_HOOKS_TOKEN": HOOKS_TOKEN,
        "CLAWSPEC_GATEWAY_AUTH_TOKEN": TOKEN,
    }


def _wait_for_chats(server: ChatServer, count: int, alive: Callable[[], bool]) -> None:
    wait_until(lambda: len(_chats(server)) >= count or not alive(), poll_s=0.02)
    assert len(_chats(server)) == count, _chats(server)


def _run(
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *argv: str,
) -> tuple[int, str, ChatServer]:
    with ChatServer(TOKEN) as server:
        for name, value in _env(server).items():
            monkeypatch.setenv(name, value)
        code = main(["run", ".", *argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, captured.out + captured.err, server


# --- a conversation abandoned while a turn is in flight -------------------------------------

SLOW_SECOND_TURN = (
    HEADER
    + f"defaults: {{timeout: {HOURS}}}\n"
    + """scenarios:
  - name: slow-talk
    turns:
      - say: "first"
        then:
          - {type: reply_contains, text: "echo: first"}
      - say: "second [hold]"
        then:
          - {type: reply_contains, text: "second"}
      - say: "third"
        then:
          - {type: reply_contains, text: "third"}
    then:
      - {type: reply_contains, text: "third"}
  - name: never-started
    turns:
      - say: "never"
        then:
          - {type: reply_contains, text: "never"}
"""
)


def _assert_kept_the_finished_turn(result: dict[str, Any], message: str) -> None:
    assert (result["status"], result["message"]) == ("error", message)
    (turn,) = result["turns"]  # turn 1 finished; turn 2 was abandoned, turn 3 never sent
    assert (turn["index"], turn["say"], turn["reply"], turn["status"]) == (
        0,
        "first",
        "echo: first",
        "pass",
    )
    assert turn["tokens"] == 110
    assert _checks(turn["assertions"]) == [(0, "then", 0, "reply_contains", "pass")]
    assert result["assertions"] == []  # the scenario's `then` is not judged on part of it
    assert result["run_id"]
    assert result["gateway_run_id"] == turn["gateway_run_id"]
    assert result["duration_ms"] >= turn["duration_ms"]
    assert result["duration_ms"] > 0
    assert result["evidence"]["tokens"]["total"] == 110  # from the chat response


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_second_signal_during_a_turn_keeps_the_finished_turns_and_exits_at_once(
    workspace: Path,
    write_contract: Callable[..., Path],
    holding: HoldingServer,
    sig: signal.Signals,
) -> None:
    write_contract(SLOW_SECOND_TURN)
    process = subprocess.Popen(
        [sys.executable, "-m", "clawspec", "run", ".", "--concurrency", "1", *JUNIT],
        cwd=workspace,
        env={**os.environ, **_env(holding), "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for_chats(holding, 2, lambda: process.poll() is None)
        process.send_signal(sig)
        time.sleep(0.3)
        process.send_signal(sig)  # second signal: abandon the running turn
        # The turn the server still holds keeps neither the reports nor the process: it is
        # answered only after the test, and times out after hours, so the process ended
        # without it.
        out, err = process.communicate(timeout=HANG_GUARD_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130
    assert "Traceback" not in out + err
    assert _chats(holding) == ["first", "second [hold]"]
    report = _report(workspace)
    assert report["interrupted"] is True
    abandoned, never = report["scenarios"]
    message = "interrupted: turn 2 of 3 abandoned while running, turn 3 not sent"
    _assert_kept_the_finished_turn(abandoned, message)
    assert (never["status"], never["message"], never["turns"]) == (
        "skip",
        "not run: the run was interrupted",
        [],
    )
    # What the finished turn spent is counted.
    assert (report["budget"]["runs"], report["budget"]["tokens"]) == (1, 110)
    assert message in out
    junit = ET.parse(workspace / "reports" / "junit.xml").getroot()
    assert message in ET.tostring(junit, "unicode")


FOUR_TURNS = (
    HEADER
    + f"defaults: {{timeout: {HOURS}}}\n"
    + """scenarios:
  - name: slow-talk
    turns:
      - say: "first"
        then:
          - {type: reply_contains, text: "echo: first"}
      - say: "second [hold]"
      - say: "third"
      - say: "fourth"
    then:
      - {type: reply_not_contains, text: "fourth"}
"""
)


def test_the_grace_period_ending_during_a_turn_keeps_the_finished_turns(
    workspace: Path,
    write_contract: Callable[..., Path],
    holding: HoldingServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One interrupt, and the turn in flight outlives the grace period (shortened here).
    monkeypatch.setattr("clawspec.runner.run.INTERRUPT_GRACE_S", 0.5)
    for name, value in _env(holding).items():
        monkeypatch.setenv(name, value)
    write_contract(FOUR_TURNS)
    stop = threading.Event()
    ran: dict[str, Any] = {}
    runner = threading.Thread(
        target=lambda: ran.setdefault("result", api.run(["."], stop=stop)), daemon=True
    )
    runner.start()
    _wait_for_chats(holding, 2, runner.is_alive)
    stop.set()
    runner.join(HANG_GUARD_S)  # the held turn is answered only after the test
    assert not runner.is_alive(), "the run waited for the turn it abandoned"
    assert ran["result"].report.interrupted is True
    (result,) = _report(workspace)["scenarios"]
    _assert_kept_the_finished_turn(
        result, "interrupted: turn 2 of 4 abandoned while running, turns 3 to 4 not sent"
    )
    assert _report(workspace)["budget"]["tokens"] == 110
    assert _chats(holding) == ["first", "second [hold]"]


def test_an_abandoned_request_in_flight_ends_the_send_at_once(holding: HoldingServer) -> None:
    """The stop comes once the server holds the request; the turn's timeout is hours and the
    answer comes only at the hang guard: a send that waited for it would end with its reply."""
    stop = threading.Event()
    request = ChatRequest(
        base_url=holding.base_url,
        token=TOKEN,
        agent_id="main",
        session_key="agent:main:clawspec:run-1",
        message=f"hello {HOLD}",
        timeout_s=HOURS,
    )
    threading.Thread(
        target=lambda: holding.held.wait(HANG_GUARD_S) and stop.set(), daemon=True
    ).start()
    with requests.Session() as http, pytest.raises(ChatError) as caught:
        send(http, request, stop)
    assert caught.value.kind == "interrupted"
    assert "abandoned" in str(caught.value)
    assert holding.held.is_set() and not holding.release.is_set()  # abandoned while held


# --- a conversation that sent no turn -------------------------------------------------------


def test_a_conversation_whose_given_failed_reports_no_turns_not_null(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(
        HEADER
        + """defaults: {timeout: 5}
scenarios:
  - name: precondition
    given:
      - {type: artifact_exists, path: notes/missing.md}
    turns:
      - say: "one"
        then:
          - {type: reply_contains, text: "one"}
  - name: one-message
    given:
      - {type: artifact_exists, path: notes/missing.md}
    when: {invoke: "hi"}
    then:
      - {type: reply_contains, text: "hi"}
"""
    )
    code, _, server = _run(workspace, monkeypatch, capsys)
    assert code == 1
    assert _chats(server) == []
    conversation, plain = _report(workspace)["scenarios"]
    assert conversation["status"] == "error"
    assert conversation["turns"] == []
    assert plain["turns"] is None


# --- stop_on_failure leaves the scenario's `then` out too -----------------------------------

STOPS = (
    HEADER
    + """defaults: {timeout: 5, stop_on_failure: true}
scenarios:
  - name: stops
    turns:
      - say: "one"
        then:
          - {type: reply_contains, text: "one"}
      - say: "two"
        then:
          - {type: reply_contains, text: "nope"}
      - say: "three"
      - say: "four"
    then:
      - {type: reply_contains, text: "three"}
      - {type: reply_not_contains, text: "four"}
  - name: last-turn-fails
    turns:
      - say: "one"
      - say: "two"
        then:
          - {type: reply_contains, text: "nope"}
    then:
      - {type: reply_contains, text: "one"}
"""
)


def test_turns_left_out_by_stop_on_failure_leave_the_scenarios_then_out_and_say_so(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(STOPS)
    code, out, server = _run(workspace, monkeypatch, capsys, "--concurrency", "1")
    assert code == 1
    assert _chats(server) == ["one", "two", "one", "two"]
    stops, last = _report(workspace)["scenarios"]
    left_out = "turns 3 to 4 of 4 were left out: turn 2 failed and stop_on_failure is set"
    assert (stops["status"], stops["message"], stops["restates"]) == ("fail", left_out, None)
    assert [(t["index"], t["status"]) for t in stops["turns"]] == [(0, "pass"), (1, "fail")]
    # Neither a misleading failure ('three' was never asked) nor a trivial pass.
    assert stops["assertions"] == []
    assert left_out in out
    # The last turn failing leaves nothing out: the scenario's `then` is judged as usual.
    assert last["status"] == "fail"
    assert last["message"].startswith("turn 2, then[0] (reply_contains): ")
    assert _checks(last["assertions"]) == [(None, "then", 0, "reply_contains", "pass")]


# --- validate -------------------------------------------------------------------------------


def test_validate_counts_the_assertions_of_every_turn(
    workspace: Path, write_contract: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    write_contract(STOPS)
    assert main(["validate", "."]) == 0
    # stops: 2 in its turns + 2 in its then; last-turn-fails: 1 + 1.
    assert capsys.readouterr().out == "1 contract(s), 2 scenario(s), 6 assertion(s): valid\n"


@pytest.mark.parametrize(
    ("scenario", "position", "message"),
    [
        (
            '    turns:\n      - "hello there"\n',
            "6:9",
            "scenario 'a', turn 1: a turn is a mapping with 'say' (and optionally params, then, "
            "timeout), found 'hello there': write - say: \"hello there\"",
        ),
        (
            "    turns:\n      - say: hi\n        thne: []\n",
            "7:9",
            "scenario 'a', turn 1: unknown field 'thne' (allowed: say, params, then, timeout)",
        ),
        (
            "    thne: []\n    turns:\n      - say: hi\n",
            "5:5",
            "scenario 'a': unknown field 'thne' (allowed: name, description, tags, given, when, "
            "turns, then, stop_on_failure, timeout, agent_id, repeat, min_pass_rate, examples)",
        ),
    ],
    ids=["turn as a string", "unknown turn key", "unknown scenario key"],
)
def test_a_malformed_turn_or_scenario_says_what_is_allowed(
    workspace: Path,
    write_contract: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
    scenario: str,
    position: str,
    message: str,
) -> None:
    text = HEADER + "scenarios:\n  - name: a\n" + scenario
    write_contract(text + "    then:\n      - {type: reply_contains, text: x}\n")
    assert main(["validate", "."]) == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert first == f"error: case.clawspec.yaml:{position}: {message}"
    assert "instance of" not in first


# --- a refused session key ------------------------------------------------------------------


def test_a_refused_session_key_says_what_the_gateway_answered_and_what_to_check() -> None:
    said = "Invalid x-openclaw-session-key: reserved namespace"
    with ChatServer(TOKEN) as server, requests.Session() as http:
        request = ChatRequest(
            base_url=server.base_url,
            token=TOKEN,
            agent_id="main",
            session_key="agent:main:clawspec:run-1",
            message=f"[status:400][said:{said}]",
            timeout_s=10.0,
        )
        with pytest.raises(ChatError) as caught:
            send(http, request)
    text = str(caught.value)
    assert (caught.value.kind, caught.value.http_status) == ("invalid", 400)
    assert f'"{said}"' in text and "'agent:main:clawspec:run-1'" in text
    assert "agent 'main'" in text and "OpenClaw version" in text
    # ClawSpec makes the key: the user is not told to change it.
    assert "use a key of the form" not in text
