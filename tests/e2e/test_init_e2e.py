"""`clawspec init` on a workspace with two skills and two agents, then `clawspec run --bring-up`
on a real OpenClaw gateway with the scripted provider: every generated scenario runs and passes,
and a generated check fails for the agent's behaviour when the agent misbehaves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import provider_config
from tests.support.openclaw_workspace import make_workspace
from tests.support.scripted_provider import ScriptedProvider

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e


def _cli(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clawspec", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=cwd,
    )


def _misbehaving_copy(root: Path) -> None:
    """The newsletter skill's generated smoke scenario, with a script that makes the model
    spawn a sub-agent: a tool the skill does not declare."""
    contract = yaml.safe_load(
        (root / "skills/send-newsletter/tests/scenarios.yaml").read_text("utf-8")
    )
    smoke = contract["scenarios"][0]
    smoke["name"] = "misbehaving-smoke"
    smoke["when"]["invoke"] += " [script:spawn]"
    contract["scenarios"] = [smoke]
    (root / "skills/send-newsletter/tests/misbehaving.clawspec.yaml").write_text(
        yaml.safe_dump(contract, sort_keys=False), "utf-8"
    )


@pytest.fixture(scope="module")
def init_run(
    openclaw_launcher: str, provider: ScriptedProvider, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    root = make_workspace(
        tmp_path_factory.mktemp("init") / "ws", provider_config(provider.base_url)
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAWSPEC_", "GITHUB_"))}
    env.update({"CLAWSPEC_OPENCLAW_BIN": openclaw_launcher, "PYTHONPATH": str(REPO)})
    first = _cli(["init"], root, env)
    files = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    second = _cli(["init"], root, env)
    after_second = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    _misbehaving_copy(root)
    run = _cli(["run", "--bring-up", "--no-color", "--concurrency", "3"], root, env)
    report = json.loads((root / "clawspec-reports/clawspec-report.json").read_text("utf-8"))
    return {
        "root": root,
        "first": first,
        "second": second,
        "unchanged": files == after_second,
        "run": run,
        "scenarios": {s["name"]: s for s in report["scenarios"]},
    }


def test_init_writes_the_files_and_a_second_init_changes_nothing(init_run: dict) -> None:
    assert init_run["first"].returncode == 0, init_run["first"].stderr
    assert init_run["first"].stdout.count("created  ") == 9  # 8 files and .gitignore
    assert init_run["second"].returncode == 0, init_run["second"].stderr
    assert init_run["second"].stdout.count("unchanged  ") == 9
    assert init_run["unchanged"]


def test_every_generated_scenario_runs_and_passes(init_run: dict) -> None:
    run = init_run["run"]
    generated = {
        name: s for name, s in init_run["scenarios"].items() if not name.startswith("misbehaving")
    }
    assert sorted(generated) == sorted(
        f"{name}-{kind}"
        for name in ("send-newsletter", "weekly_report", "brand", "support")
        for kind in ("smoke", "negative")
    ), run.stdout + run.stderr
    problems = {
        name: [(a["type"], a["status"], a["message"]) for a in s["assertions"]]
        for name, s in generated.items()
        if s["status"] != "pass"
    }
    assert problems == {}, run.stdout + run.stderr
    negative = generated["brand-negative"]["assertions"][0]
    assert (negative["type"], negative["status"]) == ("tool_not_called", "pass")
    permitted = [
        a for a in generated["brand-smoke"]["assertions"] if a["type"] == "tool_not_permitted"
    ]
    assert [a["status"] for a in permitted] == ["pass"]


def test_a_generated_check_fails_for_the_agents_behaviour(init_run: dict) -> None:
    scenario = init_run["scenarios"]["misbehaving-smoke"]
    assert scenario["status"] == "fail", scenario
    check = next(a for a in scenario["assertions"] if a["type"] == "tool_not_permitted")
    assert check["status"] == "fail"
    assert "'sessions_spawn'" in check["message"]
    assert init_run["run"].returncode == 1
