"""Per-scenario trends over the last stored runs: pass rate and tokens, oldest first.

The store fetches the reports (`clawspec.history`); this only reads them. A run in which a
scenario did not exist, or was skipped, has `None` in its place.
"""

from __future__ import annotations

from collections.abc import Sequence

from clawspec.regression.compare import metric
from clawspec.reports.model import RunReport, ScenarioResult, ScenarioTrend
from clawspec.status import PASSING, Status


def run_label(report: RunReport) -> str:
    """Return e.g. '2026-11-22 3f2c1ab' (date, and commit when the report knows it)."""
    commit = report.source.commit if report.source else None
    return f"{report.started_at[:10]} {commit[:7]}" if commit else report.started_at[:16]


def scenario_pass_rate(scenario: ScenarioResult) -> float | None:
    """The pass rate of one run of a scenario (1.0 / 0.0 for a single attempt; None: skipped)."""
    if scenario.attempts is not None:
        return scenario.attempts.pass_rate if scenario.attempts.attempts else None
    if scenario.status == Status.SKIP:
        return None
    return 1.0 if scenario.status in PASSING else 0.0


def compute_trends(
    history: Sequence[RunReport], current: RunReport, runs: int = 14
) -> list[ScenarioTrend]:
    """Return one trend per scenario of `current`, over the last `runs` runs (current included).

    `history` holds the earlier stored runs, oldest first.
    """
    if runs <= 0:
        return []
    window = [*history, current][-runs:]
    labels = [run_label(r) for r in window[:-1]] + ["this run"]
    indexes = [{s.identity.key: s for s in r.scenarios} for r in window]
    trends = []
    for scenario in current.scenarios:
        identity = scenario.identity
        found = [index.get(identity.key) for index in indexes]
        tokens = [metric(s, "tokens") if s else None for s in found]
        trends.append(
            ScenarioTrend(
                id=identity.id,
                name=identity.name,
                variant=identity.variant,
                runs=labels,
                pass_rates=[scenario_pass_rate(s) if s else None for s in found],
                tokens=[None if t is None else int(t) for t in tokens],
            )
        )
    return trends
