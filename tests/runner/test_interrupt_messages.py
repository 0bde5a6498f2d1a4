"""What the first interrupt says: it names what it met (nothing started yet, scenarios
running, every scenario finished), and a second one abandons. Real signals throughout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from clawspec.commands import signals
from tests.support.hang_guard import wait_until
from tests.support.slow_server import Answer, SlowServer

CONTRACT = """version: "1.0"
target: {type: skill, path: skills/news}
scenarios:
  - name: one
    when: {invoke: "x"}
    then: [{type: file_absent, path: n}]
  - name: two
    when: {invoke: "y"}
    then: [{type: file_absent, path: n}]
"""


@pytest.mark.parametrize(
    ("running", "said"),
    [
        (None, "SIGINT: stopping before any scenario starts; reports will still be written"),
        (False, "SIGINT: every scenario has finished; the reports are being written"),
        (True, "SIGINT: starting no more scenarios; waiting for the running ones (send again"),
    ],
)
def test_the_first_signal_says_what_it_met_and_the_second_abandons(
    capsys: pytest.CaptureFixture[str], running: bool | None, said: str
) -> None:
    stop, abandon = threading.Event(), threading.Event()
    restore = signals.install(stop, abandon, lambda: running)
    try:
        os.kill(os.getpid(), signal.SIGINT)
        assert stop.is_set() and not abandon.is_set()
        os.kill(os.getpid(), signal.SIGINT)
        assert abandon.is_set()
    finally:
        restore()
    err = capsys.readouterr().err
    assert said in err
    assert err.count("SIGINT") == 1  # the second signal prints nothing more


def test_an_interrupt_before_any_scenario_started_says_so(workspace: Path) -> None:
    # The run waits for the gateway to answer its reachability check (held until the test
    # lets it): no scenario has started when the signal comes.
    (workspace / "case.clawspec.yaml").write_text(CONTRACT, encoding="utf-8")
    release = threading.Event()
    with SlowServer(Answer(held_until=release)) as server:
        env = {
            **os.environ,
            "CLAWSPEC_HOOKS_TOKEN": "t0ken-for-tests",
            "CLAWSPEC_GATEWAY_BASE_URL": server.url,
            "PYTHONPATH": str(Path(__file__).parents[2]),
        }
        process = subprocess.Popen(
            [sys.executable, "-m", "clawspec", "run", "."],
            cwd=workspace,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until(lambda: server.seen)
        assert [(seen.method, seen.path) for seen in server.seen] == [("GET", "/")]
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)  # the handler prints before the gateway answers (not a bound)
        release.set()
        out, err = process.communicate(timeout=60)
        methods = [seen.method for seen in server.seen]
    assert process.returncode == 130, (out, err)
    assert "SIGINT: stopping before any scenario starts; reports will still be written" in err
    assert "waiting for the running ones" not in err
    assert methods == ["GET"]  # no hook request was sent
    report = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    assert report["interrupted"] is True
    assert [(s["name"], s["status"], s["message"]) for s in report["scenarios"]] == [
        ("one", "skip", "not run: the run was interrupted"),
        ("two", "skip", "not run: the run was interrupted"),
    ]
