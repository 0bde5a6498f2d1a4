"""Compare a run with its baseline, scenario by scenario. Pure: reports in, model out.

Each scenario gets one change, decided in this order:

- `new` / `removed`: only in this run / only in the baseline;
- `regressed`: the pass rate dropped significantly (Fisher's exact test, one-sided, at
  `regression.significance`; only when a side ran more than once), or the scenario passed in the
  baseline and now fails with no passing attempt (a single run that went pass → fail);
- `fixed`: failed in the baseline, passes now;
- `flaky`: some attempts passed and some failed now, and no significant drop (10/10 → 9/10);
- `still_failing`: failed then and now; `unchanged`: passed then and now;
- `not_compared`: skipped on a side (a spend limit, a precondition), or errored in the baseline
  on every attempt and judged failing now: nothing was compared. A failure (or error) now where
  the baseline was skipped or errored is counted against the run as a new failing scenario is:
  nobody has accepted that failure yet (calling it `still_failing`, or leaving it uncounted,
  would let a regression through the gate whenever the reference's gateway broke).

Token, cost and duration deltas are computed per scenario (median over attempts where repeated)
and in total over the scenarios both runs have; an increase over its tolerance is flagged.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, get_args

from clawspec.config.settings import RegressionSettings
from clawspec.regression.behaviour import behaviour_diff
from clawspec.regression.stats import fisher_drop_p_value
from clawspec.reports.changes import over_line
from clawspec.reports.model import (
    ChangeKind,
    Comparison,
    RunReport,
    ScenarioChange,
    ScenarioResult,
    advisory_variants,
)
from clawspec.status import PASSING, Status
from clawspec.traffic.volatile import DEFAULT_VOLATILE_PATTERNS

CHANGES: tuple[str, ...] = get_args(ChangeKind)
METRICS = ("tokens", "cost_usd", "duration_ms")
# Wall-clock noise: a duration increase smaller than this per scenario (in a total: times the
# scenarios summed) is never flagged, whatever the ratio. Fast scenarios on a busy CI machine
# easily take twice as long without anything having changed.
MIN_DURATION_DELTA_MS = 1000


@dataclass(frozen=True)
class _Counts:
    """How often a scenario passed on one side (a single run counts as one attempt)."""

    passes: int
    attempts: int
    passed: bool  # the verdict

    @property
    def rate(self) -> float:
        return self.passes / self.attempts


def _counts(scenario: ScenarioResult) -> _Counts | None:
    """Return the pass counts, or None when nothing was evaluated (skipped)."""
    passed = scenario.status in PASSING
    if scenario.attempts is not None:
        stats = scenario.attempts
        return _Counts(stats.passes, stats.attempts, passed) if stats.attempts else None
    return None if scenario.status == Status.SKIP else _Counts(int(passed), 1, passed)


def metric(scenario: ScenarioResult, name: str) -> float | None:
    """Return a scenario's tokens, cost (USD) or duration (ms); medians over repeated attempts."""
    stats = scenario.attempts
    tokens = scenario.evidence.tokens if scenario.evidence else None
    if name == "duration_ms":
        if stats is not None and stats.duration_ms_median is not None:
            return stats.duration_ms_median
        return float(scenario.duration_ms)
    if name == "tokens":
        if stats is not None and stats.tokens_median is not None:
            return stats.tokens_median
        return float(tokens.total) if tokens and tokens.total is not None else None
    return tokens.cost_usd if tokens else None


def _tolerance(settings: RegressionSettings, name: str) -> float | None:
    return {"tokens": settings.tokens, "cost_usd": settings.cost, "duration_ms": settings.duration}[
        name
    ]


def delta(
    name: str,
    baseline: float | None,
    current: float | None,
    settings: RegressionSettings,
    scenarios: int = 1,
) -> dict[str, Any] | None:
    """Return the change of one figure and whether it is over its tolerance (None: unknown)."""
    if baseline is None or current is None:
        return None
    change = current - baseline
    ratio = change / baseline if baseline > 0 else None
    tolerance = _tolerance(settings, name)
    over = tolerance is not None and ratio is not None and ratio > tolerance
    if name == "duration_ms" and change < MIN_DURATION_DELTA_MS * scenarios:
        over = False
    return {
        "baseline": baseline,
        "current": current,
        "delta": change,
        "ratio": None if ratio is None else round(ratio, 4),
        "tolerance": tolerance,
        "over": over,
    }


ERRORED_NOTE = "errored in the baseline (never judged there): nothing to compare"


def classify(
    current: ScenarioResult, baseline: ScenarioResult, significance: float
) -> tuple[str, dict[str, Any]]:
    """Return the change of a scenario both runs have, and the pass-rate details behind it."""
    now, before = _counts(current), _counts(baseline)
    if now is None or before is None:
        side = "now" if now is None else "in the baseline"
        return "not_compared", {"note": f"skipped {side}: nothing to compare"}
    if baseline.status == Status.ERROR and before.passes == 0 and current.status == Status.FAIL:
        return "not_compared", {"note": ERRORED_NOTE, "errored": "baseline"}
    details: dict[str, Any] = {
        "pass_rate": {"baseline": round(before.rate, 4), "current": round(now.rate, 4)},
        "attempts": {"baseline": before.attempts, "current": now.attempts},
    }
    significant = False
    if now.attempts > 1 or before.attempts > 1:
        p_value = fisher_drop_p_value(before.passes, before.attempts, now.passes, now.attempts)
        details["p_value"] = round(p_value, 6)
        significant = now.rate < before.rate and p_value <= significance
        details["significant_drop"] = significant
    if significant or (before.passed and not now.passed and now.passes == 0):
        return "regressed", details
    if not before.passed and now.passed:
        return "fixed", details
    if current.flaky:
        return "flaky", details
    if not before.passed and not now.passed:
        return "still_failing", details
    return "unchanged", details


def compare(
    current: RunReport,
    baseline: RunReport,
    settings: RegressionSettings | None = None,
    volatile_patterns: Sequence[str] = DEFAULT_VOLATILE_PATTERNS,
) -> Comparison:
    """Compare `current` with `baseline`: one change per scenario, deltas, behaviour, reasons.

    `volatile_patterns` (the config's) are left out of the tool arguments compared."""
    settings = settings or RegressionSettings()
    before = {s.identity.key: s for s in baseline.scenarios}
    advisory = advisory_variants(current)  # shown as changes, never a reason to fail
    changes: list[ScenarioChange] = []
    reasons: list[str] = []
    totals = {name: [0.0, 0.0, 0] for name in METRICS}  # baseline sum, current sum, scenarios
    for scenario in current.scenarios:
        identity = scenario.identity
        label, key = identity.label, {"id": identity.id, "variant": identity.variant}
        old = before.pop(identity.key, None)
        counted = reasons if identity.variant not in advisory else []
        if old is None:
            changes.append(ScenarioChange(**key, change="new", status=scenario.status))
            if scenario.status not in PASSING and scenario.status != Status.SKIP:
                counted.append(f"{label}: new scenario {scenario.status.value}s")
            continue
        change, details = classify(scenario, old, settings.significance)
        if change == "regressed":
            counted.append(f"{label}: {_regressed_reason(scenario, old, details)}")
        elif unaccepted := _unaccepted(change, scenario, old, details):
            # As a new scenario: nobody has accepted a failure the baseline never judged. Said
            # in the change's details too: every report lists it with the regressions.
            details["unaccepted"] = unaccepted
            counted.append(f"{label}: {unaccepted}: no accepted failure to compare with")
        if "pass_rate" in details:
            over = _deltas(scenario, old, settings, details, totals)
            counted += [f"{label}: {line}" for line in over]
        if behaviour := behaviour_diff(scenario.evidence, old.evidence, volatile_patterns):
            details["behaviour"] = behaviour
        changes.append(
            ScenarioChange(
                **key,
                change=change,  # type: ignore[arg-type]
                status=scenario.status,
                baseline_status=old.status,
                details=details,
            )
        )
    for old in before.values():
        changes.append(
            ScenarioChange(
                id=old.id, variant=old.variant, change="removed", baseline_status=old.status
            )
        )
    total_details: dict[str, Any] = {"significance": settings.significance}
    for name, (base_sum, now_sum, seen) in totals.items():
        if seen and (found := delta(name, base_sum, now_sum, settings, seen)):
            total_details[name] = found | {"scenarios": seen}
            if found["over"]:
                reasons.append(f"total {over_line(name, found)}")
    counts = dict.fromkeys(CHANGES, 0)
    for item in changes:
        counts[item.change] += 1
    return Comparison(scenarios=changes, counts=counts, details=total_details, regressions=reasons)


_VERBS = {Status.FAIL: "fails", Status.ERROR: "errors"}


def _unaccepted(
    change: str, current: ScenarioResult, baseline: ScenarioResult, details: dict[str, Any]
) -> str | None:
    """How a scenario not compared fails now where the baseline never judged it (it errored
    or was skipped there), e.g. 'fails now and errored in the baseline'; else None."""
    if change != "not_compared" or current.status not in _VERBS:
        return None
    if details.get("errored"):
        return f"{_VERBS[current.status]} now and errored in the baseline"
    if baseline.status == Status.SKIP:
        return f"{_VERBS[current.status]} now and was skipped in the baseline"
    return None


def _deltas(
    current: ScenarioResult,
    baseline: ScenarioResult,
    settings: RegressionSettings,
    details: dict[str, Any],
    totals: dict[str, list[float]],
) -> list[str]:
    """Add the metric deltas to `details` and the running totals; return the lines over budget."""
    over: list[str] = []
    names: list[str] = []
    for name in METRICS:
        found = delta(name, metric(baseline, name), metric(current, name), settings)
        if found is None:
            continue
        details[name] = found
        totals[name][0] += found["baseline"]
        totals[name][1] += found["current"]
        totals[name][2] += 1
        if found["over"]:
            over.append(over_line(name, found))
            names.append(name)
    if names:
        details["over_tolerance"] = names
    return over


def _regressed_reason(
    current: ScenarioResult, baseline: ScenarioResult, details: dict[str, Any]
) -> str:
    if details.get("significant_drop"):
        now, before = details["attempts"]["current"], details["attempts"]["baseline"]
        rate = details["pass_rate"]
        return (
            f"pass rate {rate['baseline']:.2f} ({before} attempts) → {rate['current']:.2f} "
            f"({now} attempts), Fisher p = {details['p_value']:.4f}"
        )
    if "p_value" in details:
        return f"passed in the baseline, no attempt passed now ({current.status.value})"
    return f"{baseline.status.value} → {current.status.value}"


def regressed_keys(comparison: Comparison) -> Iterable[tuple[str, str | None]]:
    """Yield the (scenario id, variant) keys of the scenarios that regressed."""
    return (c.key for c in comparison.scenarios if c.change == "regressed")
