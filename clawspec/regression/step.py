"""The regression part of the one post-run step (`clawspec.runner.finish`).

Resolves the baseline and the recent runs through the history store (`clawspec.history`), then
fills `baseline`, `comparison` and `trends` (`with_regression`). Runs for `run` and `merge`
alike, before any output is written, so every output shows the same comparison. A missing or
unreachable baseline is a note, never an error: the normal exit policy then applies.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from clawspec.ci_context import CIContext
from clawspec.config.settings import Settings
from clawspec.regression.apply import with_regression
from clawspec.reports.model import RunReport
from clawspec.text import clean


def judge_against_history(
    report: RunReport,
    settings: Settings,
    context: CIContext,
    err: TextIO | None = None,
) -> RunReport:
    """Return the report compared with its baseline (unchanged when none is configured).

    Without `baseline`, only `fail_on: regression` asks for one: the report then says that
    no baseline was found, so the fallback to the normal policy is visible everywhere.
    """
    if not settings.baseline and settings.fail_on != "regression":
        return report
    from clawspec.history.baseline import Baseline, NoBaseline, find_baseline

    err = err or sys.stderr

    def note(text: str) -> None:
        print(clean(f"note: {text}"), file=err, flush=True)

    found = find_baseline(
        settings.baseline, report.source, settings, context, current_run_id=report.run_id
    )
    for line in found.notes:
        note(line)
    # A PR's trend ends at its baseline: base-branch runs after its merge-base are not its.
    until = found.ref.created_at if isinstance(found, Baseline) else None
    down = isinstance(found, NoBaseline) and found.store_down
    history = [] if down else _recent(report, settings, context, note, until)
    if isinstance(found, NoBaseline):
        # Not a note here: every report's headline says it, with how the run was judged
        # (`changes.change_headline`), and the terminal's would say it a second time.
        return with_regression(report, settings.regression, missing=found.reason, history=history)
    compared = with_regression(
        report,
        settings.regression,
        baseline=found.report,
        ref=found.ref,
        history=history,
        volatile_patterns=settings.volatile_patterns,
    )
    if disjoint := _nothing_in_common(compared):
        note(disjoint)
    return compared


def _nothing_in_common(report: RunReport) -> str:
    """A note when the baseline and the run share no scenario: the baseline is the branch's
    latest saved run, whatever it ran (another folder, `--scenario`, `--tag`), and then every
    scenario is `new` (a known failure fails the job again, a pass-rate drop goes unseen)."""
    comparison = report.comparison
    if comparison is None or not comparison.scenarios:
        return ""
    counts = comparison.counts
    if counts.get("new", 0) + counts.get("removed", 0) != len(comparison.scenarios):
        return ""
    if not counts.get("new") or not counts.get("removed"):
        return ""
    return (
        "the baseline shares no scenario with this run: it ran another selection or suite (a "
        "run saved with --save-baseline from another folder, --scenario or --tag), so every "
        "scenario here is new; save baselines from the runs you compare with"
    )


def _recent(
    report: RunReport,
    settings: Settings,
    context: CIContext,
    note: Callable[[str], None],
    baseline_at: str | None = None,
) -> list[RunReport]:
    """The earlier stored runs the trends show, oldest first (a PR: its base branch's)."""
    if settings.regression.trend_runs <= 1 or not settings.baseline:
        return []
    from clawspec.history.baseline import recent_runs
    from clawspec.history.source import is_pull_request

    source = report.source
    pull_request = source is not None and is_pull_request(source)
    branch = None
    if source is not None:
        branch = source.base_branch if pull_request else source.branch
    recent = recent_runs(
        settings.baseline,
        branch,
        settings.regression.trend_runs - 1,
        settings,
        context,
        until=baseline_at if pull_request else None,
    )
    for line in recent.notes:
        note(line)
    return [stored for _, stored in recent.runs if stored.run_id != report.run_id]
