"""The one step every run ends with: a finished report becomes outputs and an exit code.

`clawspec run` calls it, and so does anything else that produces a whole report (merging shard
reports), so every output, the regression comparison and the exit policy stay the same whichever
way the report came to be. It sits below the commands: nothing here imports `clawspec.api`.
It reads the run's CI context (clawspec/ci_context.py) once, from the environment it is given,
and hands it to the source, the baseline choice, the outputs and the history store.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from clawspec.ci_context import CIContext
from clawspec.crash import Faults, InternalError
from clawspec.errors import ExitCode

if TYPE_CHECKING:
    from clawspec.config.settings import Settings
    from clawspec.reports.model import RunReport
    from clawspec.reports.outcome import RunOutcome


@dataclass(frozen=True)
class RunResult:
    """What a run (or a merge) returns: the report, its outcome, the report files written and
    the logs kept of the gateways ClawSpec brought up."""

    report: RunReport
    outcome: RunOutcome
    written: list[Path] = field(default_factory=list)
    gateway_logs: list[Path] = field(default_factory=list)

    @property
    def exit_code(self) -> ExitCode:
        return self.outcome.exit_code


def finish(
    report: RunReport,
    settings: Settings,
    environ: Mapping[str, str],
    *,
    context: CIContext | None = None,
    complete: bool = True,
    merged: bool = False,
    gateway_unreachable: bool = False,
) -> RunResult:
    """Turn a finished report into outputs and an exit code.

    (See the module's docstring for why there is exactly one such step.) `environ` is the
    run's environment: the CI context is read from it here, once, unless the caller read it
    already (`context`). A report an internal error cut short (`complete=False`) is written
    but never stored as a baseline, and its outcome says so (exit 70). `merged`: the report
    joins other runs' reports (`clawspec merge`); `gateway_unreachable`: no agent run could
    reach the gateway (exit 3). Every output's verdict is the one outcome
    (reports/outcome.py), decided once the report is complete. A bug in a step (the run's
    source, the comparison, a report writer) costs only that step: the other outputs are
    written, then `InternalError` is raised (clawspec/crash.py).
    """
    from clawspec.secrets import settings_scope

    # A Python caller may hold no secrets registry: the settings' secrets are masked regardless.
    with settings_scope(settings, environ):
        return _finish(
            report,
            settings,
            environ,
            context=context,
            complete=complete,
            merged=merged,
            gateway_unreachable=gateway_unreachable,
        )


def _finish(
    report: RunReport,
    settings: Settings,
    environ: Mapping[str, str],
    *,
    context: CIContext | None,
    complete: bool,
    merged: bool,
    gateway_unreachable: bool,
) -> RunResult:
    from clawspec.reports.outcome import decide, policy_for
    from clawspec.reports.publish import publish, report_json_path

    if context is None:
        context = CIContext.from_environ(environ)
    faults = Faults()
    if report.source is None:
        from clawspec.history.source import run_source

        with faults.guard("reading where the run came from"):
            report = report.model_copy(update={"source": run_source(context, settings)})
    if settings.variants:
        from clawspec.regression.variants import with_variants

        with faults.guard("the comparison of the variants"):
            reference = settings.reference_variant
            report = with_variants(
                report,
                settings.variants,
                reference.name if reference else None,
                settings.regression,
                volatile_patterns=settings.volatile_patterns,
            )
    if settings.baseline or settings.fail_on == "regression":
        from clawspec.regression.step import judge_against_history

        with faults.guard("the comparison with the baseline"):
            report = judge_against_history(report, settings, context)
    policy = policy_for(
        settings,
        merged=merged,
        gateway_unreachable=gateway_unreachable,
        internal_error=not complete or bool(faults),
    )
    outcome = decide(report, policy)
    try:
        written = publish(report, settings, context=context, outcome=outcome)
    except InternalError as late:
        faults.extend(late.faults)
        written = late.written
    faults.raise_if_any(report_dir=report_json_path(settings).parent, written=written)
    if settings.save_baseline and complete:
        save_baseline(report, settings, context)
    return RunResult(report, outcome, written)


def prepare() -> None:
    """Import and build what finishing a run needs (and the terminal's summary after it),
    before its end: `clawspec run` calls this once the lanes wait for the gateway, so the
    reports follow the last answer sooner. Nothing here depends on the run."""
    import clawspec.history.source
    import clawspec.reports.changes
    import clawspec.reports.json_report
    import clawspec.reports.outcome
    import clawspec.reports.variants  # noqa: F401
    from clawspec.reports.model import RunReport

    RunReport.model_rebuild()  # its schema is deferred (reports/model.py): built here, not last


def save_baseline(
    report: RunReport,
    settings: Settings,
    context: CIContext,
    err: TextIO | None = None,
) -> bool:
    """Store the report as a baseline (`--save-baseline`); a failure is a warning, not an error.

    Interrupted runs, single shards, runs `--changed-since` cut short and runs only partly
    checked (a shard or variant missing from a merge, a spend limit that stopped it, skips over
    `max_skipped`) are not stored: half a run would make every later comparison look bad.
    `context` is the run's CI context.
    """
    from clawspec.secrets import settings_scope

    with settings_scope(settings):  # masked also when a Python caller holds no registry
        return _save_baseline(report, settings, context, err or sys.stderr)


def _save_baseline(report: RunReport, settings: Settings, context: CIContext, err: TextIO) -> bool:
    from clawspec.history.store import HistoryError
    from clawspec.history.stores import save_report
    from clawspec.text import clean

    if report.interrupted:
        print("note: baseline not saved: the run was interrupted", file=err, flush=True)
        return False
    if report.shard is not None:
        # One shard holds part of the selection; the merge of all shards is the run to keep.
        print(
            "note: baseline not saved: this report is one shard; save it from `clawspec merge`",
            file=err,
            flush=True,
        )
        return False
    from clawspec.reports.outcome import partial, skip_budget_exceeded

    left = partial(report)
    if over := skip_budget_exceeded(report.scenarios, settings.max_skipped):
        left.append(f"{over}, over max_skipped")
    if left:
        # Its unchecked scenarios would be `not_compared` in every later comparison.
        print(f"note: baseline not saved: {left[0]}", file=err, flush=True)
        return False
    if report.selection is not None and report.selection.left_out:
        # A baseline stands for the whole suite: later runs would call the rest "new".
        print(
            f"note: baseline not saved: --changed-since left out "
            f"{len(report.selection.left_out):,} scenarios",
            file=err,
            flush=True,
        )
        return False
    try:
        message = save_report(report, settings, context)
    except HistoryError as exc:
        print(clean(f"warning: baseline not saved: {exc}"), file=err, flush=True)
        return False
    print(clean(message), file=err, flush=True)
    return True
