"""A replay miss in a sub-agent's run, on the real OpenClaw gateway: the scenario ends at once
with an error naming the miss, not after its timeout.

The bundled examples' orchestrator delegates a brand review to its `brand` sub-agent. In a copy
of the examples, the committed recording of the sub-agent's first model call is changed, so the
sub-agent's real call no longer matches it. OpenClaw answers the miss (HTTP 400) by ending the
sub-agent's run with an error, without a retry, while the orchestrator's run has already
answered the hook: the scenario's checks (its sub-agent's record, the file it would write) would
wait for the whole timeout (180 s). Here the check for the file waits ten hours, so a run that
waited for it would never end by itself (`run_clawspec`'s hang guard would fail the test): that
the run ended, with the miss as its error, is what shows it did not wait. Runs inside the
loopback-only namespace.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import run_clawspec

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
SCENARIO = "delegates-review"
RECORDING = Path(".clawspec/cassettes/agents/orchestrator/tests/scenarios") / SCENARIO
CONTRACT = Path("agents/orchestrator/tests/scenarios.yaml")
# The scenario's check for the file its sub-agent would write: 15 s in the examples.
FILE_CHECK = "path: brand/memory/reviews/brand-review.md\n        timeout: "

pytestmark = pytest.mark.e2e


def _change_sub_agent_task(cassette: Path) -> None:
    """Change the sub-agent's task as recorded in its first model call (3.json: the parent's
    two calls come first)."""
    data = json.loads(cassette.read_text("utf-8"))
    task = data["request"]["body"]["messages"][1]
    assert "[Subagent Task]" in task["content"], "3.json is no longer the sub-agent's first call"
    task["content"] = task["content"].replace("Begin.", "Begin now.")
    cassette.write_text(json.dumps(data, indent=2), "utf-8")


@pytest.fixture(scope="module")
def replayed(openclaw_launcher: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("replay-miss") / "examples"
    shutil.copytree(EXAMPLES, work)
    _change_sub_agent_task(work / RECORDING / "3.json")
    contract = (work / CONTRACT).read_text("utf-8")
    assert contract.count(FILE_CHECK + "15\n") == 1, "the examples' file check changed"
    contract = contract.replace(FILE_CHECK + "15\n", FILE_CHECK + "36000\n")
    (work / CONTRACT).write_text(contract, "utf-8")
    proc = run_clawspec(
        work, openclaw_launcher, "--model-traffic", "replay", "--concurrency", "1",
        "--scenario", SCENARIO, "--report-dir", str(work / "reports"),
    )  # fmt: skip
    report = json.loads((work / "reports" / "clawspec-report.json").read_text("utf-8"))
    return {"proc": proc, "scenario": report["scenarios"][0]}


def test_a_sub_agents_miss_ends_the_scenario_without_waiting_for_its_timeout(
    replayed: dict[str, Any],
) -> None:
    scenario, proc = replayed["scenario"], replayed["proc"]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert scenario["status"] == "error", scenario
    assert scenario["message"] == (
        "model traffic replay: model call 3 differs from the closest recording 3.json: "
        "messages[1] (user) changed: -Begin now. Execute the assigned task to completion.; "
        "the whole diff: model_traffic.diff in the JSON report"
    ), scenario["message"]
    traffic = scenario["model_traffic"]
    assert traffic["used"] == [1, 2] and traffic["unmatched"] == 1, traffic
    # The check for the file (ten hours) was cut short by the miss: it has no verdict.
    assert all(check["type"] != "artifact_exists" for check in scenario["assertions"]), scenario
