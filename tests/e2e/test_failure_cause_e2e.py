"""A run that fails on the real OpenClaw gateway says the gateway's own cause and the fix.

`clawspec run` brings up a real gateway whose agent `nokey` has a model (acme/gpt-4o-mini) of a
provider ClawSpec does not know, so it cannot check its key before the run (for a provider it
knows, such as openai, bring-up stops first: tests/gateway/test_model_keys.py): OpenClaw
answers the hook with `completion.status: error` and nothing else; the cause is only in its log.
Runs inside the loopback-only namespace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import provider_config

REPO = Path(__file__).resolve().parents[2]
CONTRACT = """\
version: "1.0"
target: {type: agent, path: agents/nokey, agent_id: nokey}
defaults: {timeout: 60}
scenarios:
  - name: no-key
    when: {invoke: "Say hello."}
    then: [{type: file_absent, path: never.md}]
"""

pytestmark = pytest.mark.e2e


def test_a_run_without_a_usable_model_says_the_gateways_cause(
    openclaw_launcher: str, tmp_path: Path
) -> None:
    (tmp_path / "agents" / "nokey").mkdir(parents=True)
    (tmp_path / "agents" / "nokey" / "hello.clawspec.yaml").write_text(CONTRACT, "utf-8")
    (tmp_path / "clawspec.yaml").write_text(
        "gateway: {mode: bring_up, config: openclaw.json, ready_timeout: 180}\n", "utf-8"
    )
    openclaw = provider_config("http://127.0.0.1:9/v1")  # `main` keeps a provider; unused here
    openclaw["agents"]["entries"] = {
        "nokey": {"name": "nokey", "model": {"primary": "acme/gpt-4o-mini"}}
    }
    (tmp_path / "openclaw.json").write_text(json.dumps(openclaw), "utf-8")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("CLAWSPEC_", "GITHUB_", "OPENAI_")) and not key.endswith("_API_KEY")
    }
    reports_at = ("--report-dir", str(tmp_path / "reports"))
    env.update({"CLAWSPEC_OPENCLAW_BIN": openclaw_launcher, "PYTHONPATH": str(REPO)})
    proc = subprocess.run(
        [sys.executable, "-m", "clawspec", "run", str(tmp_path), "--no-color", *reports_at],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
    )
    report_path = tmp_path / "reports" / "clawspec-report.json"
    assert report_path.is_file(), proc.stdout + proc.stderr
    (scenario,) = json.loads(report_path.read_text("utf-8"))["scenarios"]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert scenario["status"] == "error"
    message = scenario["message"]
    # OpenClaw's own words for this setup: which one depends on its provider plugins
    causes = (
        "No route-compatible authentication source is configured for acme.",
        "Unknown model: acme/gpt-4o-mini.",
    )
    prefix = f"invocation failed: run {scenario['gateway_run_id']} completed with status 'error': "
    assert any(message.startswith(prefix + cause) for cause in causes), message
    assert " — fix: configure a model provider and its API key for agent 'nokey'" in message
    assert message in proc.stdout  # what the terminal shows
