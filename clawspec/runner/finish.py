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
    from clawspec.config import Settings
    from clawspec.reports.model import RunReport


@dataclass(frozen=True)
class RunResult:
    """What a run (or a merge) returns: the report, the exit code, and the files written."""

    report: RunReport
    exit_code: ExitCode
    written: list[Path] = field(default_factory=list)


def finish(
    report: RunReport,
    settings: Settings,
    environ: Mapping[str, str],
    *,
    context: CIContext | None = None,
    complete: bool = True,
) -> RunResult:
    """Turn a finished report into outputs and an exit code.

    (See the module's docstring for why there is exactly one such step.) `environ` is the
    run's environment: the CI context is read from it here, once, unless the caller read it
    already (`context`). A report an internal error cut short (`complete=False`) is written
    but never stored as a baseline. A bug in a step (the run's source, the comparison, a
    report writer) costs only that step: the other outputs are written, then `InternalError`
    is raised (clawspec/crash.py).
    """
    from clawspec.reports.model import exit_code
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
            )
    if settings.baseline or settings.fail_on == "regression":
        from clawspec.regression.step import judge_against_history

        with faults.guard("the comparison with the baseline"):
            report = judge_against_history(report, settings, context)
    try:
        written = publish(report, settings, context=context)
    except InternalError as late:
        faults.extend(late.faults)
        written = late.written
    faults.raise_if_any(report_dir=report_json_path(settings).parent, written=written)
    code = exit_code(report, settings.max_skipped, settings.fail_on)
    if settings.save_baseline and complete:
        save_baseline(report, settings, context)
    return RunResult(report, code, written)


def save_baseline(
    report: RunReport,
    settings: Settings,
    context: CIContext,
    err: TextIO | None = None,
) -> bool:
    """Store the report as a baseline (`--save-baseline`); a failure is a warning, not an error.

    Interrupted runs, single shards and runs `--changed-since` cut short are not stored: half a
    run would make every later comparison look bad. `context` is the run's CI context.
    """
    from clawspec.history.store import HistoryError
    from clawspec.history.stores import save_report
    from clawspec.text import clean

    err = err or sys.stderr
    secrets = settings.secret_values()
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
        print(clean(f"warning: baseline not saved: {exc}", secrets), file=err, flush=True)
        return False
    print(clean(message, secrets), file=err, flush=True)
    return True
