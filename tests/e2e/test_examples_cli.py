"""The bundled examples through the real `clawspec` CLI, with ClawSpec's own bring-up of a real
OpenClaw gateway (the end-to-end proof). Runs inside the loopback-only namespace."""

from __future__ import annotations

import glob
import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import IN_CI, kept_gateway_log, run_clawspec
from tests.support.scripted_provider import ScriptedProvider, load_scripts

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

pytestmark = pytest.mark.e2e
# The replays run one scenario at a time. Replayed model calls answer at once, so concurrent
# runs reach OpenClaw 2026.9.6's agent state store together, and it sometimes fails them inside
# the gateway ("another OpenClaw process owns state-lifecycle", "schema-missing": sub-agents that
# never start). These tests are about verdicts on another day; concurrency is the live run's.
ONE_AT_A_TIME = ("--concurrency", "1")


def _checkout(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """The examples in a git clone of their own, as a workflow checks a repository out: the
    repository root (paths in Code Quality findings, JUnit `file`) is the clone's, whatever
    the machine's temporary folder sits in."""
    clone = tmp_path_factory.mktemp(name)
    work = clone / "examples"
    shutil.copytree(EXAMPLES, work)
    git = ["git", "-C", str(clone), "-c", "user.name=ci", "-c", "user.email=ci@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "checkout"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    return work


# What OpenClaw 2026.9.6's gateway log says when concurrent first runs of a fresh gateway meet
# inside its agent state store (docs/gateway.md): a sub-agent or a run that never starts.
OPENCLAW_STORE_RACE = ("another OpenClaw process owns", "schema-missing")


@pytest.fixture(scope="module")
def examples_run(openclaw_launcher: str, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Run every example once (concurrency 4) and return the JSON report and the CLI output.

    Run once more, on a new gateway, only when the first run's gateway log shows OpenClaw's
    own store race: its verdicts are OpenClaw's failure, not ClawSpec's (said in the output)."""
    for attempt in (1, 2):
        work = _checkout(tmp_path_factory, "examples")
        scripts = load_scripts(work / "provider-scripts.json")
        with ScriptedProvider(scripts, port=18080) as provider:  # the port openclaw.json names
            proc = run_clawspec(
                work, openclaw_launcher, "--report-dir", str(work / "reports"),
                "--junit", str(work / "reports/junit.xml"),
                "--report-html", str(work / "reports/report.html"),
                "--codequality", str(work / "reports/gl-code-quality.json"),
            )  # fmt: skip
            requests = provider.requests
        log = kept_gateway_log(work / "reports").read_text("utf-8")
        raced = [line for line in log.splitlines() if any(m in line for m in OPENCLAW_STORE_RACE)]
        if not raced or attempt == 2:
            break
        print(f"OpenClaw's store race in the first run, run again: {raced[0][:300]}")
    report = json.loads((work / "reports" / "clawspec-report.json").read_text("utf-8"))
    return {
        "proc": proc,
        "report": report,
        "work": work,
        "provider_requests": requests,
        "scenarios": {s["name"]: s for s in report["scenarios"]},
    }


def _libfaketime() -> str | None:
    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))
    if not found and IN_CI:
        pytest.fail(
            "libfaketime is not installed (Debian package libfaketime; scripts/test.sh)",
            pytrace=False,
        )
    return found[0] if found else None


# The replay's gateway believes it is a Sunday half a minute before midnight in Kolkata, so the
# date also changes during the run: weekday, date, time and zone all differ from the recording's.
# ClawSpec keeps the real clock (its timers under a faked clock are not what is tested here).
FAKE_DAY = "@2027-03-14 23:59:30"
FAKE_ZONE = "Asia/Kolkata"


@pytest.fixture(scope="module")
def examples_replay(openclaw_launcher: str, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The examples again, replaying their committed cassettes with no model provider at all,
    from a git checkout and with SHELL unset (as the example workflow runs them on pull
    requests, in a container), on a gateway whose clock says another day, hour and zone (see
    FAKE_DAY; without libfaketime, outside CI, on the real clock). The cassettes were recorded
    outside a checkout, where SHELL was set, on another day: OpenClaw's prompts differ in all
    three."""
    work = _checkout(tmp_path_factory, "examples-replay")
    launcher, faketime = openclaw_launcher, _libfaketime()
    if faketime is not None:
        shifted = work.parent / "openclaw-on-another-day"
        shifted.write_text(
            "#!/bin/sh\n"
            f"export LD_PRELOAD='{faketime}' FAKETIME='{FAKE_DAY}' "
            f"FAKETIME_DONT_FAKE_MONOTONIC=1 TZ={FAKE_ZONE}\n"
            f'exec "{openclaw_launcher}" "$@"\n',
            encoding="utf-8",
        )
        shifted.chmod(0o755)
        launcher = str(shifted)
    proc = run_clawspec(
        work, launcher, "--model-traffic", "replay", *ONE_AT_A_TIME, "--report-dir",
        str(work / "reports"), "--codequality", str(work / "reports/gl-code-quality.json"),
        unset=("SHELL",),
    )  # fmt: skip
    report = json.loads((work / "reports" / "clawspec-report.json").read_text("utf-8"))
    log = kept_gateway_log(work / "reports").read_text("utf-8")
    return {"proc": proc, "report": report, "work": work, "gateway_log": log, "shifted": faketime}


def _assertion(scenario: dict[str, Any], type_name: str) -> dict[str, Any]:
    return next(a for a in scenario["assertions"] if a["type"] == type_name)


def test_exit_code_and_totals(examples_run: dict) -> None:
    proc = examples_run["proc"]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert examples_run["report"]["totals"] == {
        "scenarios": 7,
        "passed": 3,
        "failed": 3,
        "errored": 1,
        "skipped": 0,
        "warned": 0,
    }, proc.stdout  # the terminal's failure list says why a scenario did not end as expected
    assert "7 scenarios: 3 passed, 3 failed, 1 errored" in proc.stdout


def test_agent_that_writes_its_artifact_passes(examples_run: dict) -> None:
    scenario = examples_run["scenarios"]["writes-draft"]
    assert scenario["status"] == "pass", scenario
    assert {a["type"]: a["status"] for a in scenario["assertions"]} == {
        "file_present": "pass",
        "artifact_exists": "pass",
        "artifact_contains": "pass",
        "artifact_absent_words": "pass",
        "tool_was_called": "pass",
        "tool_not_called": "pass",
        "tool_not_permitted": "pass",
        "token_budget": "pass",
        "llm_call_count": "pass",
        "tool_sequence": "pass",
        "model_used": "pass",
        "no_span_errors": "pass",
        "reply_contains": "pass",
    }
    budget = _assertion(scenario, "token_budget")
    # Counted from OpenClaw's run record; the plugin's events agree (no disagreement named).
    assert budget["message"] == "total tokens 2,840 ≤ 12,000 (from the run record, 1 run)"
    assert (examples_run["work"] / "memory/drafts/newsletter.md").is_file()


def test_forbidden_tool_fails_naming_the_tool(examples_run: dict) -> None:
    scenario = examples_run["scenarios"]["sends-in-test-mode"]
    assert scenario["status"] == "fail"
    assert _assertion(scenario, "tool_not_called")["status"] == "fail"
    assert "'exec'" in _assertion(scenario, "tool_not_called")["message"]
    assert _assertion(scenario, "tool_not_permitted")["status"] == "fail"
    assert "'exec'" in _assertion(scenario, "tool_not_permitted")["message"]
    # No trace assertion fetched its trace: the report looked it up, as the scenario failed.
    assert scenario["trace"] and scenario["trace"]["backend"] == "local", scenario["trace"]
    assert len(scenario["trace"]["id"]) == 32


def test_concurrent_scenarios_never_see_each_others_tool_calls(examples_run: dict) -> None:
    # sends-in-test-mode calls exec while writes-draft runs on the same gateway at the same time.
    clean = examples_run["scenarios"]["writes-draft"]
    dirty = examples_run["scenarios"]["sends-in-test-mode"]
    assert clean["run_id"] != dirty["run_id"]
    assert _assertion(clean, "tool_not_called")["status"] == "pass"
    assert _assertion(dirty, "tool_not_called")["status"] == "fail"


def test_token_budget_fails_with_the_measured_numbers(examples_run: dict) -> None:
    scenario = examples_run["scenarios"]["stays-within-budget"]
    budget = _assertion(scenario, "token_budget")
    assert budget["status"] == "fail"
    assert budget["message"] == (
        "total tokens 23,000 > 12,000; output tokens 4,500 > 4,000 (from the run record, 1 run)"
    )


def test_delegation_to_the_right_agent_passes_and_to_the_wrong_one_fails(
    examples_run: dict,
) -> None:
    right = examples_run["scenarios"]["delegates-review"]
    assert _assertion(right, "delegation_occurred")["status"] == "pass", right
    assert _assertion(right, "delegation_path")["status"] == "pass", right
    assert right["trace"] and right["trace"]["backend"] == "local"
    assert right["status"] == "pass", right
    wrong = examples_run["scenarios"]["delegates-to-copywriter"]
    delegation = _assertion(wrong, "delegation_occurred")
    assert delegation["status"] == "fail"
    assert "'brand'" in delegation["message"] and "'copywriter'" in delegation["message"]


def test_model_provider_failure_is_an_error_within_the_timeout(examples_run: dict) -> None:
    scenario = examples_run["scenarios"]["model-provider-down"]
    assert scenario["status"] == "error"
    assert scenario["message"].startswith("invocation failed: ")
    assert scenario["assertions"] == []
    # An error, never a hang: the gateway's own error, or the client's deadline (the contract's
    # timeout + the 5 s HTTP grace), which names the timeout. Told by the message, not by the
    # duration, which a busy machine stretches.
    contract = (examples_run["work"] / "skills/newsletter/tests/scenarios.yaml").read_text()
    (down,) = [
        s for s in yaml.safe_load(contract)["scenarios"] if s["name"] == "model-provider-down"
    ]
    timeout = down["timeout"]
    ended_by = ("completed with status 'error'", f"no completion within {timeout} s")
    assert any(cause in scenario["message"] for cause in ended_by), scenario["message"]


def test_junit_and_gateway_log_are_written(examples_run: dict) -> None:
    reports = examples_run["work"] / "reports"
    suites = ET.parse(reports / "junit.xml").getroot()
    assert sum(int(s.get("tests", 0)) for s in suites.iter("testsuite")) == 7
    kept = kept_gateway_log(reports)
    assert "embedded run start" in kept.read_text("utf-8")  # kept for CI artifacts
    # and the terminal names it (relative to the folder the run started in)
    printed = kept.relative_to(examples_run["work"]).as_posix()
    assert f"gateway log: {printed}" in examples_run["proc"].stdout


def _tools(scenario: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(tool["name"], tool["agent"]) for tool in scenario["evidence"]["tools"]]


def test_report_evidence_has_the_tools_in_order_and_the_delegations(examples_run: dict) -> None:
    scenarios = examples_run["scenarios"]
    draft = scenarios["writes-draft"]["evidence"]
    assert _tools(scenarios["writes-draft"]) == [("write", "main")]
    # OpenClaw's run record counts the tokens (bring-up knows its state folder); the plugin's
    # events count the same.
    assert draft["tokens"]["total"] == 2840 and draft["tokens"]["source"] == "run record"
    assert draft["tokens"]["disagreement"] is None
    assert all(t["started_at"] <= t["ended_at"] for t in draft["tools"])
    assert _tools(scenarios["sends-in-test-mode"]) == [("exec", "main"), ("write", "main")]
    review = scenarios["delegates-review"]["evidence"]
    # the orchestrator (agent main) spawns; the brand sub-agent writes, in its own lane
    assert _tools(scenarios["delegates-review"]) == [("sessions_spawn", "main"), ("write", "brand")]
    assert review["delegations"] == ["brand"]
    assert review["spans"], "the local trace the delegation assertions fetched"
    names = {span["name"] for span in review["spans"]}
    assert "openclaw.tool.execution" in names and review["spans_omitted"] == 0
    assert any(span["type"] == "llm" and span["model"] for span in review["spans"])


def test_html_report_of_the_examples_in_real_chromium(examples_run: dict, tmp_path: Path) -> None:
    from tests.support import browser

    browser.require_chromium()
    path = examples_run["work"] / "reports" / "report.html"
    assert path.stat().st_size < 2_000_000
    report = examples_run["report"]
    review = examples_run["scenarios"]["delegates-review"]
    with browser.chromium(tmp_path / "profile", 1280, 1400) as driver:
        browser.open_report(driver, path)
        totals = report["totals"]
        assert browser.page_totals(driver) == {
            "all": totals["scenarios"], "pass": totals["passed"], "fail": totals["failed"],
            "error": totals["errored"], "warn": totals["warned"], "skip": totals["skipped"],
        }  # fmt: skip
        assert len(browser.visible_rows(driver)) == 7
        driver.find_element("css selector", "[data-filter-status='fail']").click()
        assert len(browser.visible_rows(driver)) == 7 - totals["failed"]
        driver.find_element("css selector", "[data-filter-tag='demo-failure']").click()
        assert browser.visible_rows(driver) == ["model-provider-down"]  # the others failed
        # a deep link opens the delegation scenario, which the filters hid
        driver.execute_script(
            "location.hash = arguments[0]", f"#{review['contract']}/{review['name']}"
        )
        detail = driver.find_element(
            "css selector", "#scenario-list > li:not([hidden]) .detail:not([hidden])"
        )
        assert "delegates-review" in detail.find_element("tag name", "h2").text
        assert len(browser.visible_rows(driver)) == 7  # the deep link cleared the filters
        tools = [
            li.get_attribute("data-tool")
            for li in detail.find_elements("css selector", ".tool-list li")
        ]
        assert (
            tools == [t["name"] for t in review["evidence"]["tools"]] == ["sessions_spawn", "write"]
        )
        lanes = [el.text for el in detail.find_elements("css selector", ".lane-name")]
        assert lanes == ["main", "brand"]
        bars = detail.find_elements("css selector", ".span-bar")
        assert len(bars) == len(review["evidence"]["spans"]) > 0
        shot = tmp_path / "examples-1280.png"
        driver.save_screenshot(str(shot))
        assert browser.screenshot_variance(shot) > 200
        assert browser.console_messages(driver) == [] and browser.network_requests(driver) == []


def test_replay_of_the_committed_cassettes_gives_the_designed_verdicts(
    examples_replay: dict,
) -> None:
    statuses = {s["name"]: s["status"] for s in examples_replay["report"]["scenarios"]}
    assert statuses == {
        "writes-draft": "pass",
        "delegates-review": "pass",
        "remembers-the-name": "pass",
        "sends-in-test-mode": "fail",
        "stays-within-budget": "fail",
        "delegates-to-copywriter": "fail",
        "model-provider-down": "error",
    }, examples_replay["proc"].stdout


def test_the_replay_ran_on_another_day_hour_and_zone(examples_replay: dict) -> None:
    if examples_replay["shifted"] is None:
        pytest.skip("libfaketime is not installed (Debian package libfaketime; scripts/test.sh)")
    # the gateway ran on the fake clock (its log's timestamps), across midnight in Kolkata
    assert '"date":"2027-03-14T18:2' in examples_replay["gateway_log"]
    assert '"date":"2027-03-14T18:3' in examples_replay["gateway_log"]


def test_code_quality_reports_of_two_runs_are_valid_with_stable_fingerprints(
    examples_run: dict, examples_replay: dict
) -> None:
    """GitLab's merge request widget tells new from fixed findings by fingerprint: the same
    assertions give the same fingerprints in another run (other run ids, other timings)."""
    from tests.reports.test_codequality import _valid

    live, replay = (
        _valid((run["work"] / "reports/gl-code-quality.json").read_bytes())
        for run in (examples_run, examples_replay)
    )
    scenarios = examples_run["report"]["scenarios"]
    not_passed = [a for s in scenarios for a in s["assertions"] if a["status"] in ("fail", "error")]
    bare = [s for s in scenarios if s["status"] == "error" and not s["assertions"]]
    assert len(live) == len(not_passed) + len(bare) == 5  # one per failing assertion / bare error
    assert {f["fingerprint"] for f in live} == {f["fingerprint"] for f in replay}
    assert len({f["fingerprint"] for f in live}) == len(live)  # different assertions differ
    for finding in live:
        # relative to the repository's root, as GitLab resolves it (the examples' folder)
        assert finding["location"]["path"].startswith(("examples/skills/", "examples/agents/"))
        assert finding["location"]["lines"]["begin"] > 1
    assert {f["severity"] for f in live} == {"major", "critical"}
