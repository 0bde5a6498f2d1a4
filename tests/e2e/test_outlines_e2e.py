"""Scenario outlines on the real OpenClaw gateway, through the real `clawspec run` CLI.

tests/e2e/contracts/outlines holds an inline outline of three rows (one over its token budget)
and one reading its rows from a CSV file; each row writes its own draft through the scripted
provider. Every output must show each row as a scenario of its own: its verdict, run id, line
and identity name `name[row id]` in the JSON report, JUnit, the GitHub summary and annotations,
Code Quality and the HTML report. Runs inside the loopback-only namespace.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import run_clawspec
from tests.support.scripted_provider import ScriptedProvider, load_scripts

CONTRACTS = Path(__file__).resolve().parent / "contracts" / "outlines"
PROVIDER_PORT = 18088  # the port contracts/outlines/openclaw.json names
CONTRACT = "newsletter.clawspec.yaml"
ROWS = {
    "drafts[easter]": ("pass", 10),
    "drafts[advent]": ("pass", 11),
    "drafts[tight]": ("fail", 12),
    "seasonal[spring]": ("pass", 18),  # a data file's row: the scenario's line
    "seasonal[autumn]": ("pass", 18),
}

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def outline_run(openclaw_launcher: str, tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("outlines") / "suite"
    shutil.copytree(CONTRACTS, work)
    summary = work.parent / "summary.md"
    github = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(work),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(work.parent / "outputs.txt"),
    }
    with ScriptedProvider(load_scripts(work / "provider-scripts.json"), port=PROVIDER_PORT):
        proc = run_clawspec(
            work,
            openclaw_launcher,
            "--bring-up",
            "--openclaw-config",
            str(work / "openclaw.json"),
            extra_env=github,
        )
    reports = work / "reports"
    report_path = reports / "clawspec-report.json"
    assert report_path.is_file(), proc.stdout + proc.stderr
    report = json.loads(report_path.read_text("utf-8"))
    return {
        "proc": proc,
        "report": report,
        "scenarios": {s["name"]: s for s in report["scenarios"]},
        "reports": reports,
        "summary": summary.read_text("utf-8") if summary.is_file() else "",
    }


def test_each_row_is_a_scenario_with_its_own_verdict_run_and_line(outline_run: dict) -> None:
    proc, scenarios = outline_run["proc"], outline_run["scenarios"]
    assert proc.returncode == 1, proc.stdout + proc.stderr  # one row fails
    assert {n: (s["status"], s["line"]) for n, s in scenarios.items()} == ROWS, proc.stdout
    for name, scenario in scenarios.items():
        assert scenario["id"] == f"{CONTRACT}::{name}"
        assert scenario["contract"] == CONTRACT
        assert scenario["example"] == name.split("[")[1].rstrip("]")
        assert scenario["variant"] is None
    run_ids = [s["run_id"] for s in scenarios.values()]
    assert all(run_ids) and len(set(run_ids)) == len(run_ids)  # each row ran on its own
    assert scenarios["drafts[advent]"]["tags"] == ["newsletter", "winter"]
    failed = scenarios["drafts[tight]"]
    assert [a["status"] for a in failed["assertions"]] == ["pass", "fail"]
    # the row's budget reached the assertion as an integer: the measured total is over it
    assert "100" in failed["assertions"][1]["message"], failed["assertions"][1]
    assert "cases.csv" in json.dumps(scenarios["seasonal[spring]"])  # where the row came from


def test_the_terminal_and_the_summary_name_the_rows(outline_run: dict) -> None:
    out, summary = outline_run["proc"].stdout, outline_run["summary"]
    for name in ROWS:
        assert f"{CONTRACT}::{name}" in out
    assert "5 scenarios: 4 passed, 1 failed" in out
    assert "**5 scenarios**" in summary
    assert "**drafts\\[tight\\]**" in summary  # what failed, its brackets escaped for Markdown


def test_junit_has_one_testcase_per_row(outline_run: dict) -> None:
    root = ET.parse(outline_run["reports"] / "junit.xml").getroot()
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert set(cases) == set(ROWS)
    assert [n for n, c in cases.items() if c.find("failure") is not None] == ["drafts[tight]"]


def test_the_failing_rows_annotation_and_code_quality_point_at_the_row(outline_run: dict) -> None:
    annotations = [
        line for line in outline_run["proc"].stdout.splitlines() if line.startswith("::error ")
    ]
    assert annotations and all(f"file={CONTRACT},line=12" in a for a in annotations), annotations
    issues: list[dict[str, Any]] = json.loads(
        (outline_run["reports"] / "codequality.json").read_text("utf-8")
    )
    assert {(i["location"]["path"], i["location"]["lines"]["begin"]) for i in issues} == {
        (CONTRACT, 12)
    }
    assert "drafts[tight]" in issues[0]["description"]
    assert len({i["fingerprint"] for i in issues}) == len(issues)


def test_the_html_report_carries_every_row(outline_run: dict) -> None:
    html = (outline_run["reports"] / "report.html").read_text("utf-8")
    for name in ROWS:
        assert json.dumps(f"{CONTRACT}::{name}") in html
