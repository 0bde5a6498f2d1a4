"""Bring-up failures raise GatewayError with a useful message and leave no process behind.

These use small fake commands instead of a real gateway, so they run anywhere in seconds.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from clawspec import secrets as registry
from clawspec.errors import ExitCode, GatewayError
from clawspec.gateway.bringup import (
    INTERRUPTED_STOP_GRACE_S,
    BringUpOptions,
    GatewayProcess,
    _proc_stats,
)
from tests.support.fake_time import FakeTime
from tests.support.hang_guard import HANG_GUARD_S

# Serves every path with 200 and a body given on the command line, on the port from the config.
FAKE_SERVER = r"""
import json, os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
cfg = json.load(open(os.environ["OPENCLAW_CONFIG_PATH"]))
body = sys.argv[1].encode()
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
print("fake gateway listening", flush=True)
HTTPServer(("127.0.0.1", cfg["gateway"]["port"]), H).serve_forever()
"""


def _assert_gone(pid: int | None, timeout: float = HANG_GUARD_S) -> None:
    """Neither the process nor anything in its process group is alive (zombies count as gone):
    at once when stopped, or after a moment when the group just got its SIGKILL."""
    assert pid is not None
    deadline = time.monotonic() + timeout
    while True:
        left = [p for p, (_, pgrp) in _proc_stats().items() if pid in (p, pgrp)]
        if not left:
            return
        assert time.monotonic() < deadline, f"processes left behind: {left}"
        time.sleep(0.05)


def _options(tmp_path: Path, command: list[str], **kw: object) -> BringUpOptions:
    return BringUpOptions(
        command=command, state_dir=tmp_path / "state", ready_timeout_s=2, stop_grace_s=2, **kw
    )  # type: ignore[arg-type]


def test_missing_command(tmp_path: Path) -> None:
    gw = GatewayProcess(_options(tmp_path, ["/nonexistent/openclaw-xyz", "gateway", "run"]))
    with pytest.raises(GatewayError) as err:
        gw.__enter__()
    message = str(err.value)
    assert message.startswith("gateway bring-up failed: cannot start /nonexistent/openclaw-xyz")
    assert "No such file" in message
    assert err.value.exit_code == ExitCode.GATEWAY
    assert gw.pid is None


def test_command_exits_early_reports_code_and_output(tmp_path: Path) -> None:
    # Coloured, as OpenClaw's console is: the escapes are no part of the message.
    cmd = [
        "sh",
        "-c",
        "printf '\\033[90m12:00\\033[39m config invalid: boom-marker\\n' >&2; exit 3",
    ]
    gw = GatewayProcess(_options(tmp_path, cmd))
    with pytest.raises(GatewayError) as err, gw:
        pytest.fail("must not become ready")
    first, *rest = str(err.value).splitlines()
    assert "exited with code 3 before it was ready" in first
    assert "command: sh -c" in first
    assert any(line.endswith("12:00 config invalid: boom-marker") for line in rest), rest
    assert "\x1b" not in str(err.value)
    _assert_gone(gw.pid)


def test_false_exits_with_code_1(tmp_path: Path) -> None:
    gw = GatewayProcess(_options(tmp_path, ["false"]))
    with pytest.raises(GatewayError, match="exited with code 1"):
        gw.__enter__()
    _assert_gone(gw.pid)


def test_never_ready_times_out_and_kills_the_whole_family(tmp_path: Path) -> None:
    # The child escapes into its own session (like one OpenClaw helper does): it must die too.
    pidfile = tmp_path / "child.pid"
    cmd = ["sh", "-c", f"setsid sleep 1000 & echo $! > {pidfile}; exec sleep 1000"]
    gw = GatewayProcess(_options(tmp_path, cmd))
    started = time.monotonic()
    # The message names the ready timeout: the wait gave up there (the gateway's `sleep 1000`
    # would have held it for good); no upper bound on the time, which a busy machine stretches.
    with pytest.raises(GatewayError, match=r"not ready after 2s \(last /readyz: "):
        gw.__enter__()
    assert time.monotonic() - started >= 2  # the whole ready timeout, not less
    _assert_gone(gw.pid)
    child = int(pidfile.read_text())
    assert child not in _proc_stats(), "the setsid child survived"


def test_catch_all_200_is_not_ready(tmp_path: Path) -> None:
    # The control UI answers unknown paths with 200 HTML: only JSON ready:true counts.
    cmd = [sys.executable, "-c", FAKE_SERVER, "<html>control ui</html>"]
    gw = GatewayProcess(_options(tmp_path, cmd))
    with pytest.raises(GatewayError) as err:
        gw.__enter__()
    assert "HTTP 200, not JSON" in str(err.value)
    assert "fake gateway listening" in str(err.value)
    _assert_gone(gw.pid)


def test_port_already_taken(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        port = sock.getsockname()[1]
        gw = GatewayProcess(_options(tmp_path, ["sleep", "1000"], port=port))
        with pytest.raises(GatewayError, match=f"port {port} on 127.0.0.1 is already in use"):
            gw.__enter__()
    assert gw.pid is None  # refused before starting anything


def test_secrets_are_redacted_from_log_lines(tmp_path: Path) -> None:
    # A gateway that echoes its config must not leak the tokens into our error message.
    cmd = ["sh", "-c", 'grep token "$OPENCLAW_CONFIG_PATH"; exit 2']
    gw = GatewayProcess(_options(tmp_path, cmd))
    with registry.scope(), pytest.raises(GatewayError) as err:  # a command's registry
        gw.__enter__()
    config = json.loads((tmp_path / "state" / "openclaw.json").read_text())
    tokens = [config["gateway"]["auth"]["token"], config["hooks"]["token"]]
    assert all(token not in str(err.value) for token in tokens)
    assert str(err.value).count('"token": "***"') == 2


def test_interrupt_while_waiting_stops_the_process(tmp_path: Path) -> None:
    gw = GatewayProcess(_options(tmp_path, ["sleep", "1000"]))

    def interrupted(base_url: str, command: list[str]) -> None:
        raise KeyboardInterrupt

    gw._wait_ready = interrupted  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        gw.__enter__()
    _assert_gone(gw.pid)
    gw.stop()  # idempotent


def test_default_command_not_found_and_no_npm_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CLAWSPEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")  # OpenClaw's default model's provider
    gw = GatewayProcess(BringUpOptions(command=None, state_dir=tmp_path / "s"))
    with pytest.raises(GatewayError) as raised:
        gw.__enter__()
    assert str(raised.value) == (
        "cannot install OpenClaw: npm not found on PATH (ClawSpec gets OpenClaw and Node 24 "
        "from the npm registry with npm; any version will do). Install Node.js with npm, or "
        "set CLAWSPEC_OPENCLAW_BIN to an openclaw you installed"
    )
    assert os.environ["PATH"] == str(tmp_path)


def test_a_gateway_that_never_gets_ready_leaves_its_output_and_no_state_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The progress line names where its log is kept: what it wrote is there after a failed
    start too (here only its output: it stopped before writing a log), and its private folder,
    the generated config with the run's tokens, is gone."""
    from clawspec.config.loading import load_settings
    from clawspec.gateway.managed import brought_up

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    bad = [
        sys.executable,
        "-c",
        "print('Invalid config at openclaw.json: tools.profile'); exit(78)",
    ]
    settings = load_settings(None, {}, {"gateway": {"mode": "bring_up", "command": bad}})
    log_dir = tmp_path / "reports" / "gateway-logs" / "run"
    with (
        pytest.raises(GatewayError, match="code 78"),
        registry.scope({}),
        brought_up(settings, tmp_path, ["main"], log_dir),
    ):
        raise AssertionError("it never got ready")
    kept = log_dir / "openclaw-gateway.log"
    assert "Invalid config at openclaw.json" in kept.read_text()
    assert list(temp.iterdir()) == []


def test_after_an_interrupt_a_gateway_that_ignores_sigterm_is_not_waited_for_long(
    tmp_path: Path,
) -> None:
    """OpenClaw ignores SIGTERM while it drains work in flight. The reports of an interrupted
    run wait for the stop, and a CI runner that cancels a job kills ClawSpec soon after: the
    gateway gets two seconds, not its whole grace period (here 60 s), before SIGKILL. Told by
    the waits the stop slept on a fake clock, not by timing it."""
    fake = [sys.executable, "-c", FAKE_SERVER, '{"ready": true}']
    command = ["sh", "-c", 'trap "" TERM; exec "$@"', "sh", *fake]
    stop = threading.Event()
    waits = FakeTime()
    options = replace(_options(tmp_path, command), stop_grace_s=60, ready_timeout_s=HANG_GUARD_S)
    gw = GatewayProcess(options, stop, clock=waits.clock, sleep=waits.sleep)
    with gw:
        stop.set()  # the run's first interrupt
    assert waits.pauses and sum(waits.pauses) <= INTERRUPTED_STOP_GRACE_S + 0.1 + 1e-9
    _assert_gone(gw.pid)  # it ignored SIGTERM: killed
