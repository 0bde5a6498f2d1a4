"""Repeats through the real CLI: a scenario that passes 2 of 3 attempts (hooks fake scripted)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from clawspec.cli import main
from clawspec.reports.json_report import schema_path
from tests.support.hooks_api import HooksServer

FLAKY = """version: "1.0"
target: {type: skill, path: skills/news}
defaults: {timeout: 5, poll_interval: 0.05}
scenarios:
  - name: sometimes-writes
    repeat: 3
    min_pass_rate: %s
    when: {invoke: "draft [write:out/{{run_id}}.md][nth:draft:ok,quiet,ok]"}
    then:
      - {type: artifact_exists, path: "out/{{run_id}}.md"}
      - {type: file_absent, path: never.md}
"""


def _report(workspace: Path) -> dict:
    data = json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))
    jsonschema.validate(data, json.loads(schema_path().read_text("utf-8")))
    return data


@pytest.mark.parametrize(
    ("min_pass_rate", "exit_code", "status"), [(0.6, 0, "pass"), (0.8, 1, "fail")]
)
def test_two_of_three_attempts_is_flaky_and_min_pass_rate_decides(
    workspace: Path,
    write_contract,
    server: HooksServer,
    capsys: pytest.CaptureFixture[str],
    min_pass_rate: float,
    exit_code: int,
    status: str,
) -> None:
    write_contract(FLAKY % min_pass_rate)
    assert main(["run", ".", "--concurrency", "3"]) == exit_code
    (scenario,) = _report(workspace)["scenarios"]
    assert (scenario["status"], scenario["flaky"]) == (status, True)
    stats = scenario["attempts"]
    assert (stats["attempts"], stats["passes"], stats["pass_rate"]) == (3, 2, 0.6667)
    assert (stats["ci_low"], stats["ci_high"]) == (0.2077, 0.9385)
    runs = stats["runs"]
    assert sorted(r["status"] for r in runs) == ["fail", "pass", "pass"]
    # A fresh {{run_id}} per attempt: three requests, three different ids, three files asked for.
    assert len({r["run_id"] for r in runs}) == 3 and len(server.requests) == 3
    messages = {r["body"]["message"] for r in server.requests}
    assert {f"draft [write:out/{r['run_id']}.md][nth:draft:ok,quiet,ok]" for r in runs} == messages
    # The top-level fields show the failing attempt, and each assertion its own pass rate.
    failing = next(r for r in runs if r["status"] == "fail")
    assert scenario["run_id"] == failing["run_id"]
    rates = [(a["attempts"]["passes"], a["attempts"]["attempts"]) for a in scenario["assertions"]]
    assert rates == [(2, 3), (3, 3)]
    out = capsys.readouterr().out
    assert "FLAKY" in out and "2/3 attempts passed (0.67, 95% CI 0.21-0.94)" in out


def test_repeat_flag_runs_every_scenario_n_times_and_a_single_run_has_no_attempts(
    workspace: Path, write_contract, server: HooksServer
) -> None:
    write_contract(
        'version: "1.0"\ntarget: {type: skill, path: s}\nscenarios:\n'
        "  - name: steady\n    when: {invoke: steady}\n"
        "    then: [{type: file_absent, path: n.md}]\n"
        "  - name: once\n    repeat: 1\n    when: {invoke: once}\n"
        "    then: [{type: file_absent, path: n.md}]\n"
    )
    assert main(["run", ".", "--repeat", "4"]) == 0
    steady, once = _report(workspace)["scenarios"]
    assert (steady["attempts"]["attempts"], steady["attempts"]["pass_rate"]) == (4, 1.0)
    assert steady["flaky"] is False
    assert once["attempts"] is None  # the scenario's own `repeat: 1` wins over --repeat
    assert len(server.requests) == 5


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("repeat", "0", "field 'repeat': input should be greater than or equal to 1, found 0"),
        (
            "min_pass_rate",
            "1.5",
            "field 'min_pass_rate': input should be less than or equal to 1, found 1.5",
        ),
        ("repeat", "many", "field 'repeat': input should be a valid integer, unable to parse"),
    ],
)
def test_repeat_fields_are_validated_like_every_field(
    workspace: Path,
    write_contract,
    capsys: pytest.CaptureFixture[str],
    field: str,
    value: str,
    problem: str,
) -> None:
    write_contract(
        'version: "1.0"\ntarget: {type: skill, path: s}\nscenarios:\n'
        f"  - name: a\n    {field}: {value}\n    when: {{invoke: x}}\n"
        "    then: [{type: file_absent, path: n.md}]\n"
    )
    assert main(["validate", "."]) == 2
    assert f"error: case.clawspec.yaml:5:5: scenario 'a': {problem}" in capsys.readouterr().err


@pytest.mark.parametrize(("concurrency", "most_at_once"), [(1, 1), (3, 2)])
def test_attempts_of_one_scenario_never_overlap_while_another_scenario_runs_beside(
    workspace: Path, write_contract, server: HooksServer, concurrency: int, most_at_once: int
) -> None:
    # The attempts share the workspace: one after another; `after` runs beside the first (it
    # takes as long as an attempt, so the two overlap whichever request reaches the server first).
    write_contract(
        'version: "1.0"\ntarget: {type: skill, path: s}\nscenarios:\n'
        '  - name: slow\n    repeat: 3\n    when: {invoke: "[sleep:1]"}\n'
        "    then: [{type: file_absent, path: n.md}]\n"
        '  - name: after\n    when: {invoke: "[sleep:1]"}\n'
        "    then: [{type: file_absent, path: n.md}]\n"
    )
    assert main(["run", ".", "--concurrency", str(concurrency)]) == 0
    assert server.max_active == most_at_once
    slow, after = _report(workspace)["scenarios"]  # contract order, whatever finished first
    assert (slow["name"], slow["attempts"]["attempts"], after["name"]) == ("slow", 3, "after")
