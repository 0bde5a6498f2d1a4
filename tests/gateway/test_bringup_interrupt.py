"""Ctrl-C while a brought-up gateway starts: the wait ends at once, the gateway is stopped, the
reports say the run was interrupted (exit 130). It used to go on waiting for readiness until
`gateway.ready_timeout`, then end as a failed bring-up (exit 3); here that timeout is ten hours,
so a run that waited for it would never end by itself (the hang guard would fail the test).

The "gateway" is a shell that notes its pid and sleeps: it never answers /readyz, as a gateway
that is still starting does not. Nothing here opens a connection beyond 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.hang_guard import HANG_GUARD_S, wait_until

CONTRACT = """version: "1.0"
target: {type: skill, path: skills/a}
scenarios:
  - name: first
    when: {invoke: "go"}
    then: [{type: artifact_exists, path: out/a.md}]
  - name: second
    when: {invoke: "go"}
    then: [{type: artifact_exists, path: out/b.md}]
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) is gone for this purpose.
    status = Path(f"/proc/{pid}/status")
    return not (status.is_file() and "\nState:\tZ" in status.read_text())


COMMANDS = {
    "run": (["run", "--junit", "reports/junit.xml"], ["first", "second"]),
    # bless runs its one scenario K times as `run --repeat K` would
    "bless": (["bless", "skills/a/tests/scenarios.yaml", "--scenario", "first", "--runs", "2"],
              ["first"]),
}  # fmt: skip


@pytest.mark.parametrize(
    ("command", "sig"),
    [("run", signal.SIGINT), ("run", signal.SIGTERM), ("bless", signal.SIGTERM)],
)
def test_a_signal_while_the_gateway_starts_stops_it_and_reports_an_interrupted_run(
    tmp_path: Path, command: str, sig: signal.Signals
) -> None:
    args, names = COMMANDS[command]
    work = tmp_path / "ws"
    (work / "skills" / "a" / "tests").mkdir(parents=True)
    (work / "skills" / "a" / "tests" / "scenarios.yaml").write_text(CONTRACT, "utf-8")
    pid_file = tmp_path / "gateway.pid"
    (work / "clawspec.yaml").write_text(
        "report_dir: reports\n"
        "gateway:\n"
        "  mode: bring_up\n"
        "  ready_timeout: 36000\n"
        f"  command: [sh, -c, 'echo $$ > {pid_file}; exec sleep 100000']\n",
        "utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWSPEC_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "clawspec", *args],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    gateway_pid = None
    try:
        wait_until(lambda: pid_file.is_file() or process.poll() is not None)
        assert pid_file.is_file(), process.communicate(timeout=HANG_GUARD_S)
        time.sleep(0.5)  # the pid is written as the shell starts: let it become `sleep`
        gateway_pid = int(pid_file.read_text().strip())
        process.send_signal(sig)
        # Ended at all: waiting for readiness would have lasted ten hours.
        out, err = process.communicate(timeout=HANG_GUARD_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
            if gateway_pid is not None and _alive(gateway_pid):
                os.kill(gateway_pid, signal.SIGKILL)
    assert process.returncode == 130, (out, err)  # interrupted, not a failed bring-up (3)
    assert "Traceback" not in err and "bring-up failed" not in err + out, err
    # The gateway is stopped before the process exits; reaped just after.
    wait_until(lambda: not _alive(gateway_pid), poll_s=0.1)
    assert not _alive(gateway_pid), "the gateway was left running"
    report = json.loads((work / "reports" / "clawspec-report.json").read_text("utf-8"))
    assert report["interrupted"] is True
    assert [(s["name"], s["status"], s["message"]) for s in report["scenarios"]] == [
        (name, "skip", "not run: the run was interrupted while the gateway was starting")
        for name in names
    ]
    if command == "run":
        assert (work / "reports" / "junit.xml").is_file()
    else:  # nothing is proposed from runs that did not finish
        assert out == "" and "interrupted: nothing is proposed" in err, (out, err)
