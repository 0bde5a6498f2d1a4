"""Run record assertions on the real OpenClaw gateway, through the real `clawspec run` CLI.

tests/e2e/contracts/run_record: two hook scenarios driven by the scripted provider, judged on
OpenClaw's run record in the brought-up gateway's state folder (the gateway's default Tool
Search, ClawSpec's plugin installed by bring-up). `acts` writes a file and calls a tool the
gateway does not know (refused: not a call); `loops` reads a missing file four times in a row
(failed calls that ran: calls). Runs inside the loopback-only namespace.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import run_clawspec
from tests.support.scripted_provider import ScriptedProvider, load_scripts

CONTRACTS = Path(__file__).resolve().parent / "contracts" / "run_record"
PROVIDER_PORT = 18097  # the port contracts/run_record/openclaw.json names

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def record_run(openclaw_launcher: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("run-record") / "suite"
    shutil.copytree(CONTRACTS, work)
    with ScriptedProvider(load_scripts(work / "provider-scripts.json"), port=PROVIDER_PORT):
        proc = run_clawspec(work, openclaw_launcher)
    report_path = work / "reports" / "clawspec-report.json"
    assert report_path.is_file(), proc.stdout + proc.stderr
    report = json.loads(report_path.read_text("utf-8"))
    return {"proc": proc, "scenarios": {s["name"]: s for s in report["scenarios"]}}


def _verdicts(scenario: dict[str, Any]) -> list[tuple[str, str]]:
    return [(a["type"], a["status"]) for a in scenario["assertions"]]


def test_what_the_agent_did_passes_as_written(record_run: dict[str, Any]) -> None:
    acts = record_run["scenarios"]["acts"]
    assert _verdicts(acts) == [
        ("tool_called_with", "pass"),
        ("tool_call_count", "pass"),
        ("tool_call_count", "pass"),  # the refused call is not a call
        ("no_tool_loop", "pass"),
        ("message_not_sent", "pass"),
        ("run_completed", "pass"),
    ], acts["assertions"]
    refused = acts["assertions"][2]["message"]
    assert "'no_such_tool' was attempted 1 time but refused" in refused, refused


def test_the_reports_tokens_come_from_the_record_and_the_plugin_agrees(
    record_run: dict[str, Any],
) -> None:
    """`acts` makes three model calls of the scripted provider's default usage (100 input, 10
    output tokens); the plugin's events count the same, so no disagreement is named."""
    tokens = record_run["scenarios"]["acts"]["evidence"]["tokens"]
    assert tokens["source"] == "run record", tokens
    assert (tokens["input"], tokens["output"], tokens["total"]) == (300, 30, 330), tokens


def test_a_loop_fails_and_names_the_closest_call(record_run: dict[str, Any]) -> None:
    proc, loops = record_run["proc"], record_run["scenarios"]["loops"]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _verdicts(loops) == [
        ("tool_call_count", "pass"),  # failed reads ran: calls
        ("no_tool_loop", "fail"),
        ("tool_called_with", "fail"),
        ("run_completed", "pass"),
    ], loops["assertions"]
    loop, closest = loops["assertions"][1]["message"], loops["assertions"][2]["message"]
    assert "called 'read' with the same arguments 4 times in a row (calls 1 to 4)" in loop, loop
    assert "the closest, call 1 of run" in closest, closest
    assert 'path: expected "other.md", found "missing.md"' in closest, closest
