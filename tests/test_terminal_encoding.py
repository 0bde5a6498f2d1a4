"""A terminal whose encoding lacks a character ClawSpec prints (a latin-1 or ASCII locale, as on
an old Jenkins node): the real CLI and the container's entrypoint in a subprocess, against a
local server speaking the hooks API (127.0.0.1). The run is judged and reported as usual, the
terminal shows `?` for what it cannot show, and the reports keep every character."""

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
CONTRACT = f"""\
version: "1.0"
target: {{type: skill, path: skills/news}}
defaults: {{timeout: 5, poll_interval: 0.02}}
scenarios:
  - name: "{NAME}"
    when: {{invoke: "/send-newsletter nothing written"}}
    then: [{{type: artifact_exists, path: out/never-written.md}}]
  - name: plain
    when: {{invoke: "/send-newsletter [write:out/{{{{run_id}}}}.md]"}}
    then: [{{type: artifact_exists, path: "out/{{{{run_id}}}}.md"}}]
"""


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
        env = {
            **os.environ,
            "PYTHONIOENCODING": encoding,
            "CLAWSPEC_HOOKS_TOKEN": TOKEN,
            "CLAWSPEC_GATEWAY_BASE_URL": server.base_url,
            "PYTHONPATH": str(REPO),
        }
        for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "CI"):
            env.pop(name, None)
        done = subprocess.run(
            [sys.executable, *command, "run", "."],
            check=False,  # the exit code is asserted
            cwd=workspace,
            env=env,
            capture_output=True,
            timeout=120,
        )
    out = done.stdout.decode(encoding)
    assert done.returncode == 1, (out, done.stderr.decode(encoding, "replace"))
    assert f"FAIL  a.clawspec.yaml:7 {shown} > then[0] artifact_exists" in out
    assert "1 passed, 1 failed" in out
    report = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    assert [s["name"] for s in report["scenarios"]] == [NAME, "plain"]
