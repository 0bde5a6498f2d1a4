"""Put the regression view into a finished report: baseline, comparison, trends.

Pure: the baseline and the history come from the store (`clawspec.history`), resolved by the
one post-run step (`clawspec.runner.finish`), so `run` and `merge` get the same comparison.
"""

from __future__ import annotations

from collections.abc import Sequence

from clawspec.config.settings import RegressionSettings
from clawspec.regression.compare import compare
from clawspec.regression.trends import compute_trends
from clawspec.reports.model import BaselineRef, Comparison, RunReport
from clawspec.traffic.volatile import DEFAULT_VOLATILE_PATTERNS


def with_regression(
    report: RunReport,
    settings: RegressionSettings,
    *,
    baseline: RunReport | None = None,
    ref: BaselineRef | None = None,
    missing: str | None = None,
    history: Sequence[RunReport] = (),
    volatile_patterns: Sequence[str] = DEFAULT_VOLATILE_PATTERNS,
) -> RunReport:
    """Return `report` with `baseline`, `comparison` and `trends` filled in.

    `missing` says why a baseline that was asked for was not found: the report then carries a
    comparison with only that note, so every output says so and the exit policy falls back.
    """
    update: dict[str, object] = {}
    if baseline is not None and report.shard is not None:
        # One shard of a run holds only its part: the baseline's other scenarios are
        # not "removed", they ran elsewhere. The merged report compares the whole run.
        present = {s.identity.key for s in report.scenarios}
        kept = [s for s in baseline.scenarios if s.identity.key in present]
        baseline = baseline.model_copy(update={"scenarios": kept})
    ran = {s.variant for s in report.scenarios if s.variant is not None}
    if baseline is not None and ran:
        # A run of some variants (`--variant NAME`, one CI job each): the baseline's results
        # on the others ran in their own jobs, not "removed"; the merged report has them all.
        kept = [s for s in baseline.scenarios if s.variant is None or s.variant in ran]
        baseline = baseline.model_copy(update={"scenarios": kept})
    if baseline is not None and report.selection is not None and report.selection.left_out:
        # --changed-since left these out (no change touches them): not "removed" either.
        left_out = set(report.selection.left_out)
        kept = [s for s in baseline.scenarios if s.id not in left_out]
        baseline = baseline.model_copy(update={"scenarios": kept})
    if baseline is not None:
        update["baseline"] = ref
        update["comparison"] = compare(report, baseline, settings, volatile_patterns)
    elif missing is not None:
        update["comparison"] = Comparison(baseline_missing=missing)
    if history:
        update["trends"] = compute_trends(history, report, settings.trend_runs)
    return report.model_copy(update=update) if update else report
