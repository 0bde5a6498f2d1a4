"""A failed or refused run says the gateway's own cause and the likely fix; retries of a run the
gateway never started back off within the scenario's timeout.

A local server speaks the hooks API and answers like OpenClaw 2026.9.6 (the completion carries
only its status); the gateway's log lines of each run are real lines (tests/gateway/fixtures),
written with the run's ids into the log ClawSpec reads, as the gateway writes them.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from clawspec.cli import main
from clawspec.gateway import client, run_failure
from clawspec.gateway.client import HTTP_GRACE_S, HooksClient, InvocationError, InvokeRequest
from tests.support.fake_time import FakeTime
from tests.support.hooks_api import HooksServer

TOKEN = "hook-token-4c3b2a1d0e"
FIXTURES = Path(__file__).parents[1] / "gateway" / "fixtures"
# (fixture, the hook run id and session key in it, the first line of the run's trace)
NOKEY = (
    "openclaw-run-failures.log",
    "0881615a-75fd-4e2d-9e5a-25c65872d8c1",
    "hook:clawspec:failrun1",
    '"traceId":"3d5442029b1707ac4e2727dedf59689b"',
)
RAN_OUT = (
    "openclaw-run-timeout.log",
    "9a5c2fd1-9974-4382-a3bf-3fda8e9418d9",
    "hook:clawspec:clientto",
    "",
)


def _gateway_lines(case: tuple[str, str, str, str], run_id: str, key: str, until: str = "") -> str:
    """The real lines of the fixture's run, as the gateway would log them for this request."""
    fixture, fixture_run, fixture_key, trace = case
    lines = [
        line for line in (FIXTURES / fixture).read_text("utf-8").splitlines(True) if trace in line
    ]
    if until:
        lines = lines[: next(i for i, line in enumerate(lines) if until in line)]
    return "".join(lines).replace(fixture_run, run_id).replace(fixture_key, key)


class Gateway:
    """Answers hook runs like OpenClaw and writes each run's log lines first."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.lock = threading.Lock()
        self.server: HooksServer | None = None

    def on_run(self, body: dict[str, Any], run_id: str) -> Any:
        message, key = body["message"], body.get("sessionKey", "")
        if "[no-key]" in message:
            self._write(_gateway_lines(NOKEY, run_id, key))
        elif "[ran-out]" in message:
            self._write(_gateway_lines(RAN_OUT, run_id, key))
        elif "[unfinished]" in message:
            self._write(_gateway_lines(RAN_OUT, run_id, key, until="embedded run timeout"))
            assert self.server is not None
            self.server.released.wait(30)  # the run goes on past ClawSpec's timeout
        else:
            return None
        return {"ok": True, "runId": run_id, "completion": {"status": "error"}}

    def _write(self, text: str) -> None:
        with self.lock, self.log.open("a", encoding="utf-8") as handle:
            handle.write(text)


@pytest.fixture
def gateway(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HooksServer]:
    (workspace / "clawspec.yaml").write_text(
        "report_dir: reports\ngateway_log_pattern: gateway.log\n", encoding="utf-8"
    )
    log = workspace / "gateway.log"
    log.write_text("", encoding="utf-8")
    fake = Gateway(log)
    with HooksServer(TOKEN, workspace, on_run=fake.on_run) as server:
        fake.server = server
        monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", TOKEN)
        monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", server.base_url)
        yield server


def _scenarios(workspace: Path) -> dict[str, dict[str, Any]]:
    report = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    return {s["name"]: s for s in report["scenarios"]}


def test_a_failed_run_says_the_gateways_cause_from_its_own_lines_and_the_fix(
    workspace: Path, write_contract: Callable[..., Path], gateway: HooksServer
) -> None:
    write_contract(
        'version: "1.0"\ntarget: {type: agent, path: agents/nokey, agent_id: nokey}\n'
        "defaults: {timeout: 30}\nscenarios:\n"
        '  - name: no-key\n    when: {invoke: "[no-key]"}\n'
        "    then: [{type: file_absent, path: n}]\n"
        '  - name: ran-out\n    when: {invoke: "[ran-out]"}\n'
        "    then: [{type: file_absent, path: n}]\n"
    )
    assert main(["run", ".", "--concurrency", "2"]) == 1
    scenarios = _scenarios(workspace)
    no_key, ran_out = scenarios["no-key"], scenarios["ran-out"]
    assert no_key["status"] == ran_out["status"] == "error"
    assert no_key["message"] == (
        f"invocation failed: run {no_key['gateway_run_id']} completed with status 'error': "
        "No route-compatible authentication source is configured for openai. — fix: configure "
        "a model provider and its API key for agent 'nokey' (provider 'openai' has none: "
        "`openclaw models auth paste-api-key --provider openai --agent nokey`)"
    )
    # both runs' lines are in each scenario's slice of the log: each message has its own
    assert ran_out["message"] == (
        f"invocation failed: run {ran_out['gateway_run_id']} completed with status 'error': "
        "Request timed out before a response was generated. Please try again, or increase "
        "`agents.defaults.timeoutSeconds` in your config. (gateway log: prepared for 1.5 s, then "
        "the model ran into the run's 10 s timeout) — fix: raise the scenario's `timeout` "
        "(ClawSpec sends it as the run's timeoutSeconds)"
    )


def test_a_run_still_going_at_the_timeout_says_how_far_the_gateway_got(
    workspace: Path,
    write_contract: Callable[..., Path],
    gateway: HooksServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The request outlived OpenClaw's admission timeout (15 s; 0 here to keep the test short).
    monkeypatch.setattr(run_failure, "ADMISSION_TIMEOUT_S", 0.0)
    write_contract(
        'version: "1.0"\ntarget: {type: skill, path: skills/x}\ndefaults: {timeout: 1}\n'
        'scenarios:\n  - name: slow\n    when: {invoke: "[unfinished]"}\n'
        "    then: [{type: file_absent, path: n}]\n"
    )
    assert main(["run", "."]) == 1
    message = _scenarios(workspace)["slow"]["message"]
    assert message.startswith(
        f"invocation failed: no completion within 1 s (POST {gateway.base_url}/hooks/agent)"
    )
    assert " (gateway log: prepared for 1.5 s, the model had been running for " in message
    assert message.endswith(" — fix: raise the scenario's `timeout`")


def test_a_gateway_too_busy_to_start_the_run_is_retried_within_the_timeout_then_explained(
    workspace: Path,
    write_contract: Callable[..., Path],
    gateway: HooksServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(client, "NOT_STARTED_RETRY_PAUSES_S", (0.05, 0.1, 30.0))
    write_contract(
        'version: "1.0"\ntarget: {type: skill, path: skills/x}\ndefaults: {timeout: 10}\n'
        'scenarios:\n  - name: busy\n    when: {invoke: "[admission:99]"}\n'
        "    then: [{type: file_absent, path: n}]\n"
    )
    assert main(["run", "."]) == 1
    message = _scenarios(workspace)["busy"]["message"]
    assert "→ 503: " in message and "did not start before admission timeout" in message
    assert "(3 attempts in " in message  # the pause of 30 s would pass the 10 s timeout
    assert message.endswith(
        " — fix: the gateway was too busy to start the run within its 15 s admission timeout, "
        "retried while `timeout` allowed: lower `concurrency`, or raise `timeout`"
    )


def _request(message: str, timeout_s: float) -> InvokeRequest:
    return InvokeRequest(message, "busy", "main", "hook:clawspec:c1a5", timeout_s)


@pytest.mark.parametrize(
    ("refusal", "cost_s", "timeout_s", "pauses", "sent_timeouts"),
    [
        # 503 comes after OpenClaw's 15 s admission wait
        ("admission", 15.0, 120, [2.0, 5.0, 10.0, 20.0], [120, 103, 83, 58, 23]),
        ("admission", 15.0, 30, [2.0], [30, 13]),
        ("admission", 15.0, 10, [], [10]),
        # 502 at once (the session store is not ready)
        ("notready", 0.0, 60, [2.0, 5.0, 10.0, 20.0], [60, 58, 53, 43, 23]),
    ],
)
def test_the_retry_pauses_grow_and_stop_at_the_scenarios_timeout(
    tmp_path: Path,
    refusal: str,
    cost_s: float,
    timeout_s: float,
    pauses: list[float],
    sent_timeouts: list[int],
) -> None:
    fake = FakeTime()

    def on_run(body: dict[str, Any], run_id: str) -> None:
        fake.now += cost_s  # what the refused request took; then the marker refuses the run

    with HooksServer(TOKEN, tmp_path, on_run=on_run) as server:
        hooks = HooksClient(server.base_url, "/hooks", TOKEN, sleep=fake.sleep, clock=fake.clock)
        with pytest.raises(InvocationError) as caught:
            hooks.invoke(_request(f"[{refusal}:99]", timeout_s))
    assert fake.pauses == pauses
    assert [r["body"]["timeoutSeconds"] for r in server.requests] == sent_timeouts
    assert fake.now <= timeout_s + HTTP_GRACE_S  # the whole invocation, retries included
    status = 503 if refusal == "admission" else 502
    assert caught.value.http_status == status
    if pauses:
        assert f"({len(sent_timeouts)} attempts in {fake.now:.0f} s)" in str(caught.value)


def test_a_409_the_gateway_asks_to_retry_is_retried(tmp_path: Path) -> None:
    fake = FakeTime()
    answers = [(409, {"ok": False, "error": "hook configuration changed; retry request"})]

    def on_run(body: dict[str, Any], run_id: str) -> Any:
        return answers.pop() if answers else None  # then an ordinary run

    with HooksServer(TOKEN, tmp_path, on_run=on_run) as server:
        hooks = HooksClient(server.base_url, "/hooks", TOKEN, sleep=fake.sleep, clock=fake.clock)
        result = hooks.invoke(_request("go", 60))
    assert result.status == "ok" and fake.pauses == [2.0] and len(server.requests) == 2


def _read_request(conn: socket.socket) -> bytes | None:
    """One HTTP request (headers and a Content-Length body), or None at the end of the stream."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
    while len(body) < length:
        body += conn.recv(65536)
    return head


def _answer(conn: socket.socket, status: str, body: dict[str, Any]) -> None:
    raw = json.dumps(body).encode()
    conn.sendall(
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(raw)}\r\n\r\n".encode()
        + raw
    )


def test_a_retry_goes_on_a_new_connection_not_on_the_one_the_refusal_came_on(
    tmp_path: Path,
) -> None:
    """OpenClaw's server closes a kept-alive connection idle for 5 s; on a starved machine it
    closed the one its 503 came on as the retry went out on it, and the reset came too late to
    tell that the request never got there: the scenario said "gateway unreachable". The retry
    opens a new connection. Here the refusal's connection resets a request sent on it again a
    second after reading it; a new connection completes the run."""
    served: list[tuple[int, int]] = []  # (connection, request on it) for each request read

    def handle(conn: socket.socket, number: int) -> None:
        with conn:
            on_it = 0
            while _read_request(conn) is not None:
                on_it += 1
                served.append((number, on_it))
                if number > 1:
                    done = {"ok": True, "runId": "r2", "completion": {"status": "ok"}}
                    _answer(conn, "200 OK", done)
                elif on_it == 1:
                    refusal = {"ok": False, "runId": "r1", "error": client.NOT_STARTED[1]}
                    _answer(conn, "503 Service Unavailable", refusal)
                else:  # reset, without an answer, a second after the request was read
                    time.sleep(1.0)
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    return

    with socket.create_server(("127.0.0.1", 0)) as listener:

        def accept() -> None:
            for number in (1, 2):
                conn, _ = listener.accept()
                threading.Thread(target=handle, args=(conn, number), daemon=True).start()

        threading.Thread(target=accept, daemon=True).start()
        fake = FakeTime()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        hooks = HooksClient(url, "/hooks", TOKEN, sleep=fake.sleep, clock=fake.clock)
        result = hooks.invoke(_request("go", 60))
    assert result.status == "ok" and fake.pauses == [2.0]
    assert served == [(1, 1), (2, 1)]  # the refusal's connection got nothing more
