"""A real OpenClaw gateway logging at info level: the log assertions say at once that its log has
no debug lines and how to turn them on, instead of waiting and blaming a slow gateway.

The gateway is started with `logging.level: "info"` (what a user's own gateway logs by default)
and `clawspec run` targets it as a user's gateway. Runs inside the loopback-only namespace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clawspec.gateway.bringup import BringUpOptions, GatewayProcess
from tests.e2e.conftest import provider_config
from tests.support.scripted_provider import ScriptedProvider

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = {
    "info-write": [
        {"tool": "write", "args": {"path": "out.md", "content": "hello\n"}},
        {"text": "Wrote out.md."},
    ]
}
# A timeout a wait-out would show in the message ("after waiting …"): the verdict must not wait.
CONTRACT = """\
version: "1.0"
target: {type: agent, path: agents/main}
defaults: {timeout: 120}
scenarios:
  - name: info-level
    when: {invoke: "Write the file [script:info-write]"}
    then:
      - {type: tool_was_called, tool: write}
      - {type: tool_not_called, tool: exec}
      - {type: log_entry, path: "{{gateway_log}}", pattern: "tool=write", run_id: "{{run_id}}"}
"""

pytestmark = pytest.mark.e2e


def test_info_level_gateway_gets_the_debug_verdict_at_its_runs_completion(
    openclaw_launcher: str, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    (work / "agents" / "main" / "tests").mkdir(parents=True)
    (work / "agents" / "main" / "tests" / "scenarios.yaml").write_text(CONTRACT, "utf-8")
    with ScriptedProvider(SCRIPTS) as provider:
        config = provider_config(provider.base_url)
        config["logging"] = {"level": "info"}
        options = BringUpOptions(
            command=[openclaw_launcher, "gateway", "run"],
            state_dir=tmp_path / "state",
            extra_config=config,
        )
        with GatewayProcess(options) as gateway:
            (work / "clawspec.yaml").write_text(
                f"gateway_base_url: {gateway.base_url}\n"
                f"hooks_path: {gateway.hooks_path}\n"
                f"gateway_log_pattern: {gateway.log_path}\n",
                "utf-8",
            )
            env = {
                k: v for k, v in os.environ.items() if not k.startswith(("CLAWSPEC_", "GITHUB_"))
            }
            env.update({"CLAWSPEC_HOOKS_TOKEN": gateway.hooks_token, "PYTHONPATH": str(REPO)})
            argv = [sys.executable, "-m", "clawspec", "run", str(work), "--no-color"]
            argv += ["--report-dir", str(work / "reports")]
            proc = subprocess.run(
                argv, check=False, capture_output=True, text=True, timeout=600, env=env, cwd=work
            )
            log_text = gateway.log_path.read_text("utf-8")
    report_path = work / "reports" / "clawspec-report.json"
    assert report_path.is_file(), proc.stdout + proc.stderr
    (scenario,) = json.loads(report_path.read_text("utf-8"))["scenarios"]
    # The gateway ran the agent and logged its completion, and nothing of the run at debug level.
    assert "hook agent run completed" in log_text
    assert "embedded run start" not in log_text
    assert scenario["status"] == "error", proc.stdout + proc.stderr
    verdicts = [(a["type"], a["status"], a["message"]) for a in scenario["assertions"]]
    assert [(kind, status) for kind, status, _ in verdicts] == [
        ("tool_was_called", "error"),
        ("tool_not_called", "error"),
        ("log_entry", "error"),
    ], verdicts
    for _, _, message in verdicts:
        assert "the gateway logged its completion (gateway/hooks run " in message, message
        assert ", status ok) but no debug line of it: run lines need logging.level: debug" in (
            message
        )
        assert '`logging: { level: "debug" }` in the gateway\'s OpenClaw config' in message
        # Given at the completion: no wait, so no "after waiting" and no advice to raise it.
        assert "after waiting" not in message and "timeout" not in message, message
