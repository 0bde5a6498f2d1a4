"""Fold the attempts of a repeated scenario into one result.

The verdict comes from the pass rate: a scenario passes when `passes / counted ≥ min_pass_rate`.
An attempt counts as passing when its status is `pass` or `warn`; `skip` attempts (nothing could
be evaluated) are left out of the rate; `fail` and `error` attempts count as failures. A scenario
with both passing and failing attempts is *flaky* (a flag, not a status).

What the top-level fields show: the first failing attempt (in attempt order), else the last one:
its `run_id`, `gateway_run_id`, `assertions`, `trace` and `evidence`, so a failing or flaky
scenario always shows a failure to look at. `duration_ms` is the sum over attempts (what the
scenario cost); each attempt's own figures are in `attempts.runs`.
"""

from __future__ import annotations

from collections.abc import Sequence

from clawspec.regression.stats import percentile, wilson_interval
from clawspec.reports.model import (
    AssertionResult,
    AttemptEvidence,
    AttemptRun,
    AttemptStats,
    PassRate,
    ScenarioResult,
    TurnResult,
)
from clawspec.status import PASSING, Status
from clawspec.text import one_line


def pass_rate(passes: int, attempts: int) -> PassRate:
    """Return a PassRate with its Wilson 95 % interval (rounded for readable reports)."""
    low, high = wilson_interval(passes, attempts)
    rate = passes / attempts if attempts else 0.0
    return PassRate(
        attempts=attempts,
        passes=passes,
        pass_rate=round(rate, 4),
        ci_low=round(low, 4),
        ci_high=round(high, 4),
    )


def attempt_tokens(result: ScenarioResult) -> int | None:
    """The attempt's total tokens, when the evidence has them."""
    tokens = result.evidence.tokens if result.evidence else None
    return tokens.total if tokens else None


def combine_attempts(
    attempts: Sequence[ScenarioResult],
    min_pass_rate: float,
    observed: Sequence[AttemptEvidence | None] | None = None,
) -> ScenarioResult:
    """Return one scenario result for all its attempts (in attempt order; at least one).
    `observed`: each attempt's own evidence (kept in `attempts.runs`, for `clawspec bless`)."""
    counted = [a for a in attempts if a.status != Status.SKIP]
    passes = sum(1 for a in counted if a.status in PASSING)
    failing = [a for a in counted if a.status not in PASSING]
    shown = failing[0] if failing else attempts[-1]
    rate = passes / len(counted) if counted else 0.0
    flaky = bool(passes and failing)
    status, message = _verdict(attempts, counted, passes, rate, min_pass_rate, shown)
    stats = _stats(attempts, passes, len(counted), observed or [None] * len(attempts))
    return shown.model_copy(
        update={
            "status": status,
            "message": one_line(message, 500),
            "duration_ms": sum(a.duration_ms for a in attempts),
            "assertions": _assertion_rates(shown, attempts),
            "turns": _turn_rates(shown, attempts),
            "flaky": flaky,
            "attempts": stats,
        }
    )


def _verdict(
    attempts: Sequence[ScenarioResult],
    counted: Sequence[ScenarioResult],
    passes: int,
    rate: float,
    min_pass_rate: float,
    shown: ScenarioResult,
) -> tuple[Status, str]:
    if not counted:
        return Status.SKIP, shown.message
    if rate >= min_pass_rate:
        # A pass with a warning only when every passing attempt warned.
        passing = [a for a in counted if a.status in PASSING]
        if passing and all(a.status == Status.WARN for a in passing):
            return Status.WARN, f"attempt {attempts.index(passing[0]) + 1}: {passing[0].message}"
        return Status.PASS, ""
    failures = [a for a in counted if a.status not in PASSING]
    status = Status.ERROR if all(a.status == Status.ERROR for a in failures) else Status.FAIL
    return status, (
        f"passed {passes} of {len(counted)} attempts (pass rate {rate:.2f} < min_pass_rate "
        f"{min_pass_rate:g}); attempt {attempts.index(shown) + 1}: {shown.message}"
    )


def _stats(
    attempts: Sequence[ScenarioResult],
    passes: int,
    counted: int,
    observed: Sequence[AttemptEvidence | None],
) -> AttemptStats:
    durations = [float(a.duration_ms) for a in attempts]
    tokens = [float(t) for t in map(attempt_tokens, attempts) if t is not None]
    runs = [
        AttemptRun(
            run_id=a.run_id,
            gateway_run_id=a.gateway_run_id,
            status=a.status,
            duration_ms=a.duration_ms,
            tokens=attempt_tokens(a),
            message=a.message,
            recording=a.model_traffic.cassette if a.model_traffic is not None else None,
            evidence=seen,
        )
        for a, seen in zip(attempts, observed, strict=True)
    ]
    return AttemptStats(
        **pass_rate(passes, counted).model_dump(),
        duration_ms_median=percentile(durations, 50),
        duration_ms_p90=percentile(durations, 90),
        tokens_median=percentile(tokens, 50),
        tokens_p90=percentile(tokens, 90),
        runs=runs,
    )


def _assertion_rates(
    shown: ScenarioResult, attempts: Sequence[ScenarioResult]
) -> list[AssertionResult]:
    """Give each assertion of the shown attempt its pass rate over the attempts that ran it."""
    by_position = _statuses(attempts)
    return [_rated(a, by_position) for a in shown.assertions]


def _turn_rates(
    shown: ScenarioResult, attempts: Sequence[ScenarioResult]
) -> list[TurnResult] | None:
    """A conversation's turns, each check with its pass rate over the attempts (a turn's
    check is its own: turn 2's then[0] is not turn 1's)."""
    if shown.turns is None:
        return None
    by_position = _statuses(attempts)
    return [
        turn.model_copy(update={"assertions": [_rated(a, by_position) for a in turn.assertions]})
        for turn in shown.turns
    ]


_Position = tuple[str, int, int | None]  # phase, index, turn


def _statuses(attempts: Sequence[ScenarioResult]) -> dict[_Position, list[Status]]:
    by_position: dict[_Position, list[Status]] = {}
    for attempt in attempts:
        for a in attempt.checks():
            if a.status != Status.SKIP:
                by_position.setdefault((a.phase, a.index, a.turn), []).append(a.status)
    return by_position


def _rated(a: AssertionResult, by_position: dict[_Position, list[Status]]) -> AssertionResult:
    statuses = by_position.get((a.phase, a.index, a.turn), [])
    passed = sum(1 for s in statuses if s in PASSING)
    return a.model_copy(update={"attempts": pass_rate(passed, len(statuses))})
