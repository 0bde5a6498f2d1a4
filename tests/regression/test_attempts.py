"""Folding attempts into one scenario verdict: pass rate, flaky flag, what the result shows."""

from __future__ import annotations

import pytest

from clawspec.regression.attempts import combine_attempts
from clawspec.reports.model import ScenarioEvidence, TokenTotals
from tests.reports.factory import assertion, scenario


def _attempt(status: str, n: int, tokens: int | None = None, duration_ms: int = 1000):
    evidence = (
        ScenarioEvidence(tokens=TokenTotals(total=tokens, source="plugin")) if tokens else None
    )
    return scenario(
        "s",
        status,
        assertion(status, f"attempt {n} {status}"),
        run_id=f"run-{n}",
        message="" if status == "pass" else f"attempt {n} {status}",
        duration_ms=duration_ms,
        evidence=evidence,
    )


@pytest.mark.parametrize(
    ("statuses", "min_pass_rate", "status", "flaky", "rate"),
    [
        (["pass", "fail", "pass"], 0.6, "pass", True, 0.6667),
        (["pass", "fail", "pass"], 0.8, "fail", True, 0.6667),
        (["pass", "pass", "pass"], 1.0, "pass", False, 1.0),
        (["fail", "fail", "fail"], 0.0, "pass", False, 0.0),
        (["error", "error"], 1.0, "error", False, 0.0),
        (["error", "fail"], 1.0, "fail", False, 0.0),
        (["warn", "pass"], 1.0, "pass", False, 1.0),
        (["warn", "warn"], 1.0, "warn", False, 1.0),
        (["skip", "pass"], 1.0, "pass", False, 1.0),
        (["skip", "skip"], 1.0, "skip", False, 0.0),
    ],
)
def test_verdict_comes_from_the_pass_rate(
    statuses: list[str], min_pass_rate: float, status: str, flaky: bool, rate: float
) -> None:
    result = combine_attempts([_attempt(s, n) for n, s in enumerate(statuses, 1)], min_pass_rate)
    assert (result.status, result.flaky) == (status, flaky)
    assert result.attempts is not None and result.attempts.pass_rate == rate
    assert len(result.attempts.runs) == len(statuses)


def test_failing_verdict_says_how_often_it_passed_and_shows_the_first_failure() -> None:
    attempts = [_attempt("pass", 1), _attempt("fail", 2), _attempt("fail", 3)]
    result = combine_attempts(attempts, 0.8)
    assert result.message == (
        "passed 1 of 3 attempts (pass rate 0.33 < min_pass_rate 0.8); attempt 2: attempt 2 fail"
    )
    assert result.run_id == "run-2"
    (shown,) = result.assertions
    assert shown.message == "attempt 2 fail"
    assert shown.attempts is not None
    assert (shown.attempts.passes, shown.attempts.attempts) == (1, 3)


def test_passing_scenario_shows_its_last_attempt_with_spread_of_duration_and_tokens() -> None:
    attempts = [
        _attempt("pass", 1, tokens=1000, duration_ms=1000),
        _attempt("pass", 2, tokens=3000, duration_ms=3000),
        _attempt("pass", 3, tokens=2000, duration_ms=2000),
    ]
    result = combine_attempts(attempts, 1.0)
    assert (result.run_id, result.message, result.duration_ms) == ("run-3", "", 6000)
    stats = result.attempts
    assert stats is not None
    assert (stats.passes, stats.attempts, stats.ci_low, stats.ci_high) == (3, 3, 0.4385, 1.0)
    assert (stats.duration_ms_median, stats.duration_ms_p90) == (2000, 2800)
    assert (stats.tokens_median, stats.tokens_p90) == (2000, 2800)
    assert [r.tokens for r in stats.runs] == [1000, 3000, 2000]


def test_a_conversations_checks_get_their_pass_rates_turn_by_turn() -> None:
    from clawspec.reports.model import ScenarioResult
    from clawspec.status import Status
    from tests.reports.conversation_report import remembers_the_name

    def passed(result: ScenarioResult) -> ScenarioResult:
        """Turn 2 passes; the scenario-level then[0] (same phase and index) fails."""
        turns = list(result.turns or [])
        ok = [a.model_copy(update={"status": Status.PASS}) for a in turns[1].assertions]
        turns[1] = turns[1].model_copy(update={"status": Status.PASS, "assertions": ok})
        given, then = result.assertions
        return result.model_copy(
            update={
                "turns": turns,
                "assertions": [given, then.model_copy(update={"status": Status.FAIL})],
                "run_id": "run-2",
            }
        )

    first = remembers_the_name()
    result = combine_attempts([first, passed(first), first], 1.0)
    assert result.run_id == first.run_id  # the first failing attempt is shown
    turns = result.turns or []
    rates = [
        [(a.attempts.passes, a.attempts.attempts) for a in turn.assertions if a.attempts]
        for turn in turns
    ]
    assert rates == [[(3, 3)], [(1, 3), (3, 3)], [(3, 3)]]
    _given, then = result.assertions
    assert then.attempts is not None and (then.attempts.passes, then.attempts.attempts) == (2, 3)
