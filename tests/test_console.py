"""The console a run writes to (clawspec/console.py): the real CLI and the container's entrypoint
in a subprocess, against a local server speaking the hooks API (127.0.0.1).

A console whose encoding lacks a character ClawSpec prints (a latin-1 or ASCII locale, as on an
old Jenkins node) shows `?` for it, and the reports keep every character; a reader that goes
away mid-run (`clawspec run | head -1`) leaves the run to finish and write its reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.hooks_api import HooksServer

TOKEN = "hook-token-encoding-2b7d1e"
REPO = Path(__file__).parents[1]
NAME = "café ☕ drafts"
HEADER = """\
version: "1.0"
target: {type: skill, path: skills/news}
defaults: {timeout: 5, poll_interval: 0.02}
scenarios:
"""
CONTRACT = f"""{HEADER}\
  - name: "{NAME}"
    when: {{invoke: "/send-newsletter nothing written"}}
    then: [{{type: artifact_exists, path: out/never-written.md}}]
  - name: plain
    when: {{invoke: "/send-newsletter [write:out/{{{{run_id}}}}.md]"}}
    then: [{{type: artifact_exists, path: "out/{{{{run_id}}}}.md"}}]
"""


def _environment(server: HooksServer, **extra: str) -> dict[str, str]:
    env = {
        **os.environ,
        **extra,
        "CLAWSPEC_HOOKS_TOKEN": TOKEN,
        "CLAWSPEC_GATEWAY_BASE_URL": server.base_url,
        "PYTHONPATH": str(REPO),
    }
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "CI"):
        env.pop(name, None)
    return env


@pytest.mark.parametrize(
    ("command", "encoding", "shown"),
    [
        (["-m", "clawspec"], "ascii", "caf? ? drafts"),
        (["-m", "clawspec"], "latin-1", "café ? drafts"),
        ([str(REPO / "entrypoint.py")], "ascii", "caf? ? drafts"),
    ],
)
def test_a_terminal_that_cannot_show_a_character_gets_a_question_mark_not_a_crash(
    workspace: Path, command: list[str], encoding: str, shown: str
) -> None:
    (workspace / "a.clawspec.yaml").write_text(CONTRACT, encoding="utf-8")
    with HooksServer(TOKEN, workspace) as server:
        done = subprocess.run(
            [sys.executable, *command, "run", "."],
            check=False,  # the exit code is asserted
            cwd=workspace,
            env=_environment(server, PYTHONIOENCODING=encoding),
            capture_output=True,
            timeout=120,
        )
    out = done.stdout.decode(encoding)
    assert done.returncode == 1, (out, done.stderr.decode(encoding, "replace"))
    assert f"FAIL  a.clawspec.yaml:7 {shown} > then[0] artifact_exists" in out
    assert "1 passed, 1 failed" in out
    report = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    assert [s["name"] for s in report["scenarios"]] == [NAME, "plain"]


@pytest.mark.parametrize("command", [["-m", "clawspec"], [str(REPO / "entrypoint.py")]])
def test_a_reader_gone_mid_run_leaves_the_run_to_finish_and_write_its_reports(
    workspace: Path, command: list[str]
) -> None:
    body = "".join(
        f"  - name: s{i}\n"
        f'    when: {{invoke: "/send-newsletter [write:out/s{i}.md]"}}\n'
        f"    then: [{{type: artifact_exists, path: out/s{i}.md}}]\n"
        for i in range(6)
    )
    (workspace / "a.clawspec.yaml").write_text(HEADER + body, encoding="utf-8")
    with HooksServer(TOKEN, workspace) as server:
        child = subprocess.Popen(
            [sys.executable, *command, "run", ".", "--concurrency", "1"],
            cwd=workspace,
            env=_environment(server),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert child.stdout is not None and child.stderr is not None
        first = child.stdout.readline()  # `| head -1`: one line, then the reader goes
        child.stdout.close()
        errors = child.stderr.read().decode()
        code = child.wait(120)
    assert first.startswith(b"[1/6] PASS"), first
    assert code == 0, errors
    assert "internal error" not in errors and "Broken pipe" not in errors
    report = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    assert report["totals"]["passed"] == 6
    assert not (workspace / "reports" / "clawspec-crash.log").exists()
