"""One identity for a scenario run, whatever folder ClawSpec runs from: the real CLI in a
subprocess against a local server speaking the hooks API (127.0.0.1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.hooks_api import HooksServer

TOKEN = "hook-token-identity-4d3c2b"
REPO = Path(__file__).parents[2]
# A name holding `::`, `[` and `: ` (nothing parses an id back into its parts).
ODD = "refund: angry [vip]::escalates"


def _scenario(name: str, passing: bool) -> str:
    path = "out/{{run_id}}.md" if passing else "out/never-written.md"
    return (
        f"  - name: {json.dumps(name)}\n"
        '    when: {invoke: "[write:out/{{run_id}}.md]"}\n'
        f'    then: [{{type: artifact_exists, path: "{path}"}}]\n'
    )


def _contract(*scenarios: str) -> str:
    return (
        'version: "1.0"\ntarget: {type: skill, path: skills/x}\n'
        "defaults: {timeout: 5, poll_interval: 0.02}\nscenarios:\n" + "".join(scenarios)
    )


@pytest.fixture
def server(workspace: Path) -> Iterator[HooksServer]:
    with HooksServer(TOKEN, workspace) as running:
        yield running


def _cli(
    server: HooksServer, cwd: Path, *args: str, **extra: str
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        **extra,
        "CLAWSPEC_HOOKS_TOKEN": TOKEN,
        "CLAWSPEC_GATEWAY_BASE_URL": server.base_url,
        "PYTHONPATH": str(REPO),
    }
    return subprocess.run(
        [sys.executable, "-m", "clawspec", *args],
        check=False,  # the exit code is asserted
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _outputs(server: HooksServer, cwd: Path, paths: str, out: Path) -> dict:
    """Run the suite from `cwd`; return the ids of its JSON report, JUnit and Code Quality."""
    out.mkdir()
    done = _cli(
        server,
        cwd,
        "run",
        paths,
        "--report-json",
        str(out / "report.json"),
        "--junit",
        str(out / "junit.xml"),
        "--codequality",
        str(out / "quality.json"),
    )
    assert done.returncode == 1, done.stderr  # one scenario fails: findings to fingerprint
    report = json.loads((out / "report.json").read_text("utf-8"))
    cases = ET.parse(out / "junit.xml").getroot().iter("testcase")
    quality = json.loads((out / "quality.json").read_text("utf-8"))
    return {
        "ids": [(s["id"], s["contract"], s["name"], s["variant"]) for s in report["scenarios"]],
        "junit": [(c.get("classname"), c.get("name"), c.get("file")) for c in cases],
        "quality": [(f["fingerprint"], f["location"]["path"]) for f in quality],
        "terminal": done.stdout,
    }


def test_the_same_suite_from_the_workspace_root_and_a_sub_folder_has_one_identity(
    workspace: Path, server: HooksServer
) -> None:
    (workspace / ".git").mkdir()  # the repository root: file locations are relative to it
    suite = workspace / "suite"
    for name, text in {
        "a/tests/a.clawspec.yaml": _contract(_scenario("drafts", True), _scenario(ODD, False)),
        "b/tests/b.clawspec.yaml": _contract(_scenario("drafts", True)),
    }.items():
        (suite / name).parent.mkdir(parents=True, exist_ok=True)
        (suite / name).write_text(text, encoding="utf-8")
    from_root = _outputs(server, workspace, "suite", workspace / "root-out")
    from_sub = _outputs(server, suite / "a", "..", workspace / "sub-out")
    assert (
        from_root["ids"]
        == from_sub["ids"]
        == [
            (
                "suite/a/tests/a.clawspec.yaml::drafts",
                "suite/a/tests/a.clawspec.yaml",
                "drafts",
                None,
            ),
            (f"suite/a/tests/a.clawspec.yaml::{ODD}", "suite/a/tests/a.clawspec.yaml", ODD, None),
            (
                "suite/b/tests/b.clawspec.yaml::drafts",
                "suite/b/tests/b.clawspec.yaml",
                "drafts",
                None,
            ),
        ]
    )
    assert from_root["junit"] == from_sub["junit"]
    assert ("suite/a/tests/a.clawspec", ODD, "suite/a/tests/a.clawspec.yaml") in from_root["junit"]
    assert from_root["quality"] == from_sub["quality"]
    assert [path for _, path in from_root["quality"]] == ["suite/a/tests/a.clawspec.yaml"]
    assert f"FAIL  suite/a/tests/a.clawspec.yaml::{ODD}" in from_sub["terminal"]


def test_trends_and_the_summary_show_a_name_holding_colons_and_brackets(
    workspace: Path, server: HooksServer
) -> None:
    (workspace / "case.clawspec.yaml").write_text(
        _contract(_scenario(ODD, True), _scenario("plain", True)), encoding="utf-8"
    )
    summary = workspace / "summary.md"
    for commit in ("a" * 40, "b" * 40):  # the second run has a trend over two runs
        where = {"JENKINS_URL": "http://127.0.0.1:8080/", "BRANCH_NAME": "main"}
        done = _cli(
            server,
            workspace,
            "run",
            ".",
            "--baseline",
            "dir:history",
            "--save-baseline",
            "--report-json",
            str(workspace / "report.json"),
            **where,
            GIT_COMMIT=commit,
        )
        assert done.returncode == 0, done.stderr
    report = json.loads((workspace / "report.json").read_text("utf-8"))
    assert [(t["id"], t["name"], t["variant"]) for t in report["trends"]] == [
        (f"case.clawspec.yaml::{ODD}", ODD, None),
        ("case.clawspec.yaml::plain", "plain", None),
    ]
    from clawspec.reports.github.summary import render_summary
    from clawspec.reports.model import RunReport

    summary.write_text(render_summary(RunReport.model_validate(report)), encoding="utf-8")
    rows = [line for line in summary.read_text("utf-8").splitlines() if "`██`" in line]
    # the whole identity name (escaped as Markdown data), never the part after the last `::`
    assert rows[0].startswith("| refund: angry \\[vip\\]::escalates |"), rows
    assert rows[1].startswith("| plain |"), rows


def test_a_baseline_stored_by_the_previous_version_is_still_compared(
    workspace: Path, server: HooksServer
) -> None:
    """The report a run from the workspace root wrote before the identity was typed: the same
    ids, so each scenario is compared, not 'new' and 'removed'."""
    stored = workspace / "baseline.json"
    stored.write_bytes((REPO / "tests/regression/data/report-before-identity.json").read_bytes())
    for contract, names in {
        "skills/newsletter/tests/scenarios.yaml": ["writes-draft", "provider-down"],
        "agents/orchestrator/tests/scenarios.yaml": ["delegates-review"],
    }.items():
        (workspace / contract).parent.mkdir(parents=True, exist_ok=True)
        (workspace / contract).write_text(
            _contract(*(_scenario(n, True) for n in names)), encoding="utf-8"
        )
    done = _cli(server, workspace, "run", ".", "--baseline", str(stored), "--fail-on", "regression")
    assert done.returncode == 0, done.stderr
    report = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    changes = {(c["id"], c["variant"]): c["change"] for c in report["comparison"]["scenarios"]}
    assert changes == {
        ("agents/orchestrator/tests/scenarios.yaml::delegates-review", None): "fixed",
        ("skills/newsletter/tests/scenarios.yaml::writes-draft", None): "unchanged",
        ("skills/newsletter/tests/scenarios.yaml::provider-down", None): "fixed",
        # only in the baseline: not run now
        ("skills/newsletter/tests/scenarios.yaml::judged", None): "removed",
        ("skills/newsletter/tests/scenarios.yaml::verbose", None): "removed",
    }


def test_a_row_result_carries_its_scenario_name_and_older_reports_still_read(
    workspace: Path, server: HooksServer
) -> None:
    """The runner writes the scenario's name (without the row) as its own field; a report
    written before that field existed gives the same identity from its other fields."""
    from clawspec.identity import ScenarioIdentity
    from clawspec.reports.model import RunReport

    outline = (
        "  - name: 'refund [vip]'\n"
        '    when: {invoke: "[write:out/{{run_id}}.md]"}\n'
        "    then: [{type: artifact_exists, path: 'out/{{run_id}}.md'}]\n"
        "    examples:\n      - {id: 'x]'}\n"
    )
    (workspace / "case.clawspec.yaml").write_text(_contract(outline), encoding="utf-8")
    done = _cli(server, workspace, "run", ".", "--report-json", str(workspace / "report.json"))
    assert done.returncode == 0, done.stderr
    data = json.loads((workspace / "report.json").read_text("utf-8"))
    [written] = data["scenarios"]
    assert (written["name"], written["scenario"], written["example"]) == (
        "refund [vip][x]]",
        "refund [vip]",
        "x]",
    )
    expected = ScenarioIdentity("case.clawspec.yaml", "refund [vip]", "x]")
    assert RunReport.model_validate(data).scenarios[0].identity == expected
    del written["scenario"]  # as an older version wrote it
    assert RunReport.model_validate(data).scenarios[0].identity == expected
