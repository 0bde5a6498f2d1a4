"""The one place a run's outcome is decided: the exit code, the check run's conclusion and the
headline every output leads with, for each case of the exit policy."""

from __future__ import annotations

from typing import Any

import pytest

from clawspec.errors import ExitCode
from clawspec.reports.model import BudgetReport, MergeInfo, RunReport, VariantInfo
from clawspec.reports.outcome import Policy, RunOutcome, decide
from tests.reports.factory import report, scenario


def _run(*statuses: str, interrupted: bool = False, **update: Any) -> RunReport:
    built = report(
        *(scenario(f"s{i}", s, id=f"c::s{i}") for i, s in enumerate(statuses)),
        interrupted=interrupted,
    )
    return built.model_copy(update=update)


MISSING = MergeInfo(total=3, present=[1, 3], missing=[2], unreported=5, fingerprint="f", selected=9)
STOPPED = BudgetReport(max_cost_usd=0.01, planned=4, runs=1, stopped="the cost limit was reached")
OK, FAILED = ExitCode.OK, ExitCode.FAILED


@pytest.mark.parametrize(
    ("run", "policy", "expected"),
    [
        (_run("pass"), Policy(), RunOutcome(OK, "success")),
        (_run("pass", "warn", "skip"), Policy(), RunOutcome(OK, "success")),
        (_run(), Policy(), RunOutcome(OK, "neutral", ("no scenario ran",))),
        # Every scenario skipped checked nothing: never a green check.
        (
            _run("skip", "skip"),
            Policy(),
            RunOutcome(OK, "neutral", ("all 2 scenarios skipped: nothing checked",)),
        ),
        (_run("pass", "fail"), Policy(), RunOutcome(FAILED, "failure", ("1 failed",))),
        (
            _run("fail", "error", "error"),
            Policy(),
            RunOutcome(FAILED, "failure", ("1 failed, 2 errored",)),
        ),
        (_run("error"), Policy("error"), RunOutcome(FAILED, "failure", ("1 errored",))),
        (
            _run("pass", "fail"),
            Policy("error"),
            RunOutcome(OK, "neutral", ("1 failed, let through (fail_on: error)",)),
        ),
        (
            _run("fail", "error"),
            Policy("never"),
            RunOutcome(OK, "neutral", ("1 failed and 1 errored, let through (fail_on: never)",)),
        ),
        # Nothing to compare with: `regression` is the normal policy.
        (_run("fail"), Policy("regression"), RunOutcome(FAILED, "failure", ("1 failed",))),
        (
            _run("pass", "skip"),
            Policy(max_skipped="0"),
            RunOutcome(FAILED, "failure", ("1 scenario skipped, over max_skipped (0)",)),
        ),
        (
            _run("skip", "skip", "pass"),
            Policy("never", "1"),
            RunOutcome(FAILED, "failure", ("2 scenarios skipped, over max_skipped (1)",)),
        ),
        # Every scenario that reported passed, but a shard is missing: never a pass.
        (
            _run("pass", merged=MISSING),
            Policy("never", merged=True),
            RunOutcome(FAILED, "failure", (MISSING.missing_message(),)),
        ),
        (
            _run("pass", interrupted=True),
            Policy(merged=True),
            RunOutcome(
                FAILED,
                "failure",
                ("a merged part was interrupted: the merged report is incomplete",),
            ),
        ),
        (
            _run("pass", budget=STOPPED),
            Policy("never"),
            RunOutcome(
                FAILED,
                "failure",
                ("stopped by the run budget (the cost limit was reached): a partly checked suite",),
            ),
        ),
        (
            _run("pass", interrupted=True),
            Policy(),
            RunOutcome(
                ExitCode.INTERRUPTED,
                "cancelled",
                ("the run was interrupted: results are incomplete",),
            ),
        ),
        (
            _run("error"),
            Policy(gateway_unreachable=True),
            RunOutcome(ExitCode.GATEWAY, "failure", ("the gateway could not be reached",)),
        ),
        # An interruption outranks an unreachable gateway; an internal error outranks both.
        (
            _run("error", interrupted=True),
            Policy(gateway_unreachable=True),
            RunOutcome(
                ExitCode.INTERRUPTED,
                "cancelled",
                ("the run was interrupted: results are incomplete",),
            ),
        ),
        (
            _run("pass", interrupted=True),
            Policy(internal_error=True, gateway_unreachable=True),
            RunOutcome(
                ExitCode.INTERNAL,
                "failure",
                (
                    "an internal error in ClawSpec cut the run short; the reports hold what "
                    "finished",
                ),
            ),
        ),
    ],
)
def test_the_outcome_of_each_case(run: RunReport, policy: Policy, expected: RunOutcome) -> None:
    assert decide(run, policy) == expected


def test_reasons_add_up_and_the_headline_says_them_all() -> None:
    run = _run("pass", "fail", "skip", merged=MISSING, budget=STOPPED)
    outcome = decide(run, Policy(max_skipped="0", merged=True))
    assert outcome.exit_code == ExitCode.FAILED
    assert outcome.headline == (
        f"failed: {MISSING.missing_message()}; stopped by the run budget (the cost limit was "
        "reached): a partly checked suite; 1 scenario skipped, over max_skipped (0); 1 failed"
    )
    assert decide(_run("pass"), Policy()).headline == "passed"


def test_an_advisory_variants_failure_is_let_through_and_said() -> None:
    failing = scenario("s", "fail", id="c::s").model_copy(update={"variant": "mini"})
    passing = scenario("s", "pass", id="c::s").model_copy(update={"variant": "gpt"})
    variants = [
        VariantInfo(name="gpt", model="m1", reference=True),
        VariantInfo(name="mini", model="m2", required=False),
    ]
    run = report(passing, failing).model_copy(update={"variants": variants})
    assert decide(run, Policy()) == RunOutcome(
        OK, "neutral", ("1 failed, let through (advisory variants)",)
    )
