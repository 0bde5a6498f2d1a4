"""Step outputs (`$GITHUB_OUTPUT`): the totals, the report paths and a one-line summary."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from clawspec.reports.github.commands import GitHubRunner
from clawspec.reports.model import RunReport
from clawspec.reports.outcome import Policy, RunOutcome, decide, regression_reasons
from clawspec.reports.spend import spend_line, spend_of, worth_saying
from clawspec.text import pluralize

OUTPUT_NAMES = (
    "total",
    "passed",
    "failed",
    "errored",
    "skipped",
    "warned",
    "report_path",
    "junit_path",
    "summary",
    "regressed",
    "regressions",
    "fixed",
    "flaky",
    "spent",
    "cost_usd",
    "budget_stopped",
)


def one_line_summary(report: RunReport, outcome: RunOutcome | None = None) -> str:
    """Return e.g. '12 scenarios: 9 passed, 2 failed, 1 skipped; failed': the counts, then the
    run's verdict (reports/outcome.py; without one, the default exit policy's) and why, where
    the counts do not say it already."""
    outcome = outcome or decide(report, Policy())
    t = report.totals
    parts = [f"{n:,} {word}" for word, n in t.counts()]
    text = f"{pluralize(t.scenarios, 'scenario')}: {', '.join(parts) or 'nothing ran'}"
    if report.shard is not None:
        text += f" (shard {report.shard.index}/{report.shard.total})"
    bad = ", ".join(f"{n:,} {word}" for word, n in t.counts() if word in ("failed", "errored"))
    why = [reason for reason in outcome.reasons if reason != bad]
    return f"{text}; {outcome.verdict}" + (f": {'; '.join(why)}" if why else "")


def workspace_path(path: Path | str | None, workspace: str | None) -> str:
    """Show a written file relative to `$GITHUB_WORKSPACE` (empty when nothing was written).

    In a container action the workspace is mounted at another path than on the runner, so only
    a workspace-relative path means the same file to the steps that follow.
    """
    if path is None or path == "":
        return ""
    full = Path(os.path.abspath(path))
    if workspace:
        root = Path(os.path.abspath(workspace))
        if full == root or root in full.parents:
            return full.relative_to(root).as_posix()
    return full.as_posix()


def output_values(
    report: RunReport,
    report_path: Path | str | None,
    junit_path: Path | str | None,
    workspace: str | None = None,
    outcome: RunOutcome | None = None,
) -> dict[str, str]:
    """Return every output of the action, as strings, in OUTPUT_NAMES order."""
    t = report.totals
    return {
        "total": str(t.scenarios),
        "passed": str(t.passed),
        "failed": str(t.failed),
        "errored": str(t.errored),
        "skipped": str(t.skipped),
        "warned": str(t.warned),
        "report_path": workspace_path(report_path, workspace),
        "junit_path": workspace_path(junit_path, workspace),
        "summary": one_line_summary(report, outcome),
        # Empty regressed/fixed when the run was not compared with a baseline.
        "regressed": _change_count(report, "regressed"),
        "regressions": _regressions(report),
        "fixed": _change_count(report, "fixed"),
        "flaky": str(sum(1 for s in report.scenarios if s.flaky)),
        **_spend_values(report),
    }


def _spend_values(report: RunReport) -> dict[str, str]:
    """What the agent runs spent: the line every output shows, the cost as a number (or
    `unknown`: never 0 for a cost not known), and why a spend limit stopped the run."""
    spend = spend_of(report)
    if not worth_saying(spend):
        return {"spent": "", "cost_usd": "", "budget_stopped": ""}
    cost = "unknown" if spend.unpriced_runs else str(round(spend.cost_usd, 9))
    return {"spent": spend_line(spend), "cost_usd": cost, "budget_stopped": spend.stopped or ""}


def _regressions(report: RunReport) -> str:
    """What `fail_on: regression` counts against the run (regressed scenarios, new failing
    ones, increases over tolerance, required variants' regressions), as a number; empty when
    there was neither a baseline nor a reference variant to compare with."""
    compared = report.comparison is not None and report.comparison.baseline_missing is None
    if not compared and not report.variant_comparisons:
        return ""
    return str(len(regression_reasons(report)))


def _change_count(report: RunReport, change: str) -> str:
    comparison = report.comparison
    if comparison is None or comparison.baseline_missing is not None:
        return ""
    return str(comparison.counts.get(change, 0))


def write_outputs(
    runner: GitHubRunner,
    report: RunReport,
    report_path: Path | str | None,
    junit_path: Path | str | None,
    new_delimiter: Callable[[], str] | None = None,
    *,
    outcome: RunOutcome | None = None,
) -> Path | None:
    """Append the outputs to `$GITHUB_OUTPUT`; return its path (None when not set)."""
    workspace = runner.context.github.workspace
    values = output_values(report, report_path, junit_path, workspace, outcome)
    return runner.set_outputs(values, new_delimiter)
