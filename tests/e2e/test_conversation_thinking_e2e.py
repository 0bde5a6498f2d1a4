"""A variant's thinking level in its conversations, on real OpenClaw gateways through the real
`clawspec run` CLI (bring-up): the chat endpoint takes no thinking level, so the variant that sets
one gets a gateway of its own whose config sets the agents' `thinkingDefault`, and its turns run
at that level (the gateway log's `embedded run start: … thinking=<level>`); the variant without
one runs on the run's gateway at the agent's default. Runs inside the loopback-only namespace.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import kept_gateway_log
from tests.support.scripted_provider import ScriptedProvider, load_scripts

REPO = Path(__file__).resolve().parents[2]
CONTRACTS = Path(__file__).resolve().parent / "contracts" / "conversations"
# Its own port (the conversations module may run at the same time on 18097): the copied
# openclaw.json is pointed at it.
PROVIDER_PORT = 18098
CONFIG = """\
report_dir: reports
gateway:
  mode: bring_up
  config: openclaw.json
  ready_timeout: 180
variants:
  - name: plain
  - name: deep
    thinking: high
"""
LEVEL = re.compile(r"embedded run start:.*?\bthinking=(\w+)")

pytestmark = pytest.mark.e2e


def test_a_thinking_variant_holds_its_conversations_on_a_gateway_at_that_level(
    openclaw_launcher: str, tmp_path: Path
) -> None:
    work = tmp_path / "suite"
    shutil.copytree(CONTRACTS, work)
    (work / "clawspec.yaml").write_text(CONFIG, encoding="utf-8")
    # OpenClaw runs a model without reasoning at thinking=off whatever the level asked (its
    # start-up line still says `thinking=high`): the model must reason for the level to show.
    openclaw = work / "openclaw.json"
    text = openclaw.read_text("utf-8")
    assert text.count("reasoning: false") == 1
    text = text.replace("reasoning: false", "reasoning: true")
    openclaw.write_text(text.replace("127.0.0.1:18097", f"127.0.0.1:{PROVIDER_PORT}"), "utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAWSPEC_", "GITHUB_"))}
    env.update({"CLAWSPEC_OPENCLAW_BIN": openclaw_launcher, "PYTHONPATH": str(REPO)})
    argv = [sys.executable, "-m", "clawspec", "run", str(work), "--no-color"]
    argv += ["--scenario", "middle-fails"]
    with ScriptedProvider(load_scripts(work / "provider-scripts.json"), port=PROVIDER_PORT):
        proc = subprocess.run(
            argv, check=False, capture_output=True, text=True, timeout=600, env=env, cwd=work
        )
    report = json.loads((work / "reports" / "clawspec-report.json").read_text("utf-8"))
    turns = {s["variant"]: s["turns"] for s in report["scenarios"]}
    assert set(turns) == {"plain", "deep"}, proc.stdout + proc.stderr
    for variant in ("plain", "deep"):  # every turn replied (the second one fails its check)
        assert all(t["reply"] for t in turns[variant]), (variant, turns[variant])
    reports = work / "reports"
    deep = LEVEL.findall(kept_gateway_log(reports, "openclaw-gateway-deep.log").read_text("utf-8"))
    plain = LEVEL.findall(kept_gateway_log(reports).read_text("utf-8"))
    assert len(deep) >= 3 and set(deep) == {"high"}, deep
    assert len(plain) >= 3 and "high" not in plain, plain
