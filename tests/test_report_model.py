"""Scenario status and exit code: each computed by one function, tested as a table."""

from __future__ import annotations

import pytest

from clawspec.assertions.base import Status
from clawspec.errors import ExitCode
from clawspec.reports.model import RunReport, ScenarioResult, Totals, scenario_status
from clawspec.reports.outcome import Policy, decide

P, F, S, W, E = Status.PASS, Status.FAIL, Status.SKIP, Status.WARN, Status.ERROR


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ([P, P], P),
        ([P, F], F),
        ([F, E, P], E),
        ([P, W], W),
        ([W, F], F),
        ([S, S], S),
        ([S, P], P),
        ([S, W], W),
        ([], S),
    ],
)
def test_scenario_status(statuses: list[Status], expected: Status) -> None:
    assert scenario_status(statuses) == expected


def _report(*statuses: Status, interrupted: bool = False) -> RunReport:
    scenarios = [
        ScenarioResult(
            id=f"c::{i}",
            contract="c",
            line=1,
            name=str(i),
            target="t",
            status=s,
            message="",
            run_id="r",
            duration_ms=1,
        )
        for i, s in enumerate(statuses)
    ]
    return RunReport(
        version="0",
        run_id="r",
        started_at="t",
        duration_ms=1,
        interrupted=interrupted,
        totals=Totals.of(scenarios),
        scenarios=scenarios,
    )


@pytest.mark.parametrize(
    ("statuses", "max_skipped", "fail_on", "expected"),
    [
        ([P, P], None, "fail", ExitCode.OK),
        ([P, W], None, "fail", ExitCode.OK),
        ([P, F], None, "fail", ExitCode.FAILED),
        ([P, E], None, "fail", ExitCode.FAILED),
        ([P, F], None, "error", ExitCode.OK),
        ([P, E], None, "error", ExitCode.FAILED),
        ([F, E], None, "never", ExitCode.OK),
        ([P, S], None, "fail", ExitCode.OK),
        ([P, S], "0", "fail", ExitCode.FAILED),
        ([P, S], "1", "fail", ExitCode.OK),
        ([P, S, S], "1", "never", ExitCode.FAILED),
        ([P, P, P, S], "0.25", "fail", ExitCode.OK),
        ([P, P, S, S], "0.25", "fail", ExitCode.FAILED),
        ([P, P, S, S], "50%", "fail", ExitCode.OK),
    ],
)
def test_exit_code(
    statuses: list[Status], max_skipped: str | None, fail_on: str, expected: ExitCode
) -> None:
    assert decide(_report(*statuses), Policy(fail_on, max_skipped)).exit_code == expected


def test_interrupted_run_exits_130_even_when_everything_passed() -> None:
    assert decide(_report(P, interrupted=True), Policy()).exit_code == ExitCode.INTERRUPTED


def test_totals_count_each_status() -> None:
    totals = _report(P, F, F, E, S, W).totals
    assert totals == Totals(scenarios=6, passed=1, failed=2, errored=1, skipped=1, warned=1)
