"""The Python API: `load`, `validate`, `run` and `merge`, which the commands use too."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawspec.config.loading import resolve_settings
from clawspec.contracts.discovery import discover
from clawspec.errors import ContractError, UsageError
from clawspec.secrets import scoped

# Only what loading and validating need is imported at module level: `clawspec validate` must
# not import HTTP clients, the runner or the report writers; `run` imports them when called.
# The contract loader (and the assertion models it builds) is imported once the files are
# known, while they are being parsed (`load`).
if TYPE_CHECKING:
    from clawspec.config.settings import Settings
    from clawspec.contracts.loader import LoadedContract
    from clawspec.runner.run import RunListener

# Re-exported: part of the Python API.
from clawspec.contracts.loaded import Loaded
from clawspec.gateway.timezone import gateway_timezone
from clawspec.runner.finish import RunResult, finish, save_baseline
from clawspec.runner.plans import plan
from clawspec.selection.steps import shard_plans

__all__ = [
    "Loaded",
    "RunResult",
    "finish",
    "gateway_timezone",
    "load",
    "merge",
    "plan",
    "run",
    "save_baseline",
    "shard_plans",
    "validate",
]


class _Quiet:
    def on_run_start(self, total: int) -> None:
        pass

    def on_scenario_done(self, result: Any) -> None:
        pass

    def on_warning(self, message: str) -> None:
        pass


def load(
    paths: Sequence[str | Path],
    *,
    config: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> Loaded:
    """Read the configuration and load and validate every contract named by `paths`.

    `on_warning` hears of what loads but deserves a word (e.g. a searched folder's YAML files
    that look like contracts but match no scenario pattern).
    """
    environ = dict(os.environ if environ is None else environ)
    return _load(paths, config, environ, flags, on_warning=on_warning)


def _load(
    paths: Sequence[str | Path],
    config: str | Path | None,
    environ: Mapping[str, str],
    flags: Mapping[str, Any] | None,
    meanwhile: Callable[[], object] | None = None,
    on_warning: Callable[[str], None] | None = None,
    settled: Callable[[Settings], object] | None = None,
) -> Loaded:
    """`load`; where the CLI allowed it, a large suite's files are parsed in a forked process
    while this one builds the assertion models and runs `meanwhile` (contracts/parse_ahead.py)."""
    from clawspec.contracts import parse_ahead
    from clawspec.inputs.limits import ContractLimits
    from clawspec.speed.collector import collector_paused

    # Everything loading allocates (modules, models, contracts) lives on: the collector is
    # paused here, the one place it is, and what was loaded skips its young generations.
    with collector_paused():
        paths = list(paths) or ["."]
        # Resolving registers the settings' secrets (`load_settings`) before any contract
        # is read: what the contracts reference is masked from here on.
        settings, _ = resolve_settings(config, Path(paths[0]), environ, flags)
        if settled is not None:
            settled(settings)
        workspace = (settings.workspace or Path.cwd()).resolve()
        files = discover(paths, settings.scenario_patterns, on_warning, workspace=workspace)
        limits = ContractLimits.from_settings(settings)
        enabled = parse_ahead.allowed()
        with parse_ahead.parsing_ahead(files, enabled=enabled, limits=limits) as ahead:
            if meanwhile is not None:
                meanwhile()
            from clawspec.contracts.loader import load_contracts

            parsed = ahead.results() if ahead is not None else None
            return Loaded(
                settings, workspace, load_contracts(files, workspace, environ, parsed, limits)
            )


def validate(paths: Sequence[str | Path], **options: Any) -> list[LoadedContract]:
    """Load and validate contracts; raise ContractError listing every problem."""
    return load(paths, **options).contracts


def _outputs_ready(settings: Settings) -> None:
    """Before any contract is read: every report path can be written (said now, not after a
    paid-for run), and no earlier run's report is left where this run's goes."""
    from clawspec.reports.publish import clear_earlier_reports, output_problems

    if problems := output_problems(settings):
        raise UsageError("; ".join(problems) + "; nothing was run")
    clear_earlier_reports(settings, keep=_reports_read(settings))


def _say_stopped(problems: list[str], settings: Settings, environ: Mapping[str, str]) -> None:
    """The PR comment of a run invalid contracts stopped: the job's, or a shard's that
    publishes its own; a shard that does not is left to the merge job. `shard: auto` outside a
    sharded job is the whole selection."""
    from clawspec.ci_context import CIContext
    from clawspec.reports.publish import publish_stopped
    from clawspec.sharding.split import resolve_shard

    try:
        shard = resolve_shard(settings.shard, CIContext.from_environ(environ))
    except UsageError:
        return  # the run says what is wrong with it
    if shard is not None and not settings.shard_publish:
        return
    publish_stopped(problems, settings, environ, shard=shard.index if shard else None)


def _merged_inputs(patterns: Sequence[str]) -> list[Path]:
    """The report files a merge reads (none when a pattern names nothing: said by `collect`)."""
    from clawspec.sharding.report_files import expand

    found: list[Path] = []
    for pattern in patterns:
        with contextlib.suppress(UsageError):
            found += [item.path for item in expand([pattern])]
    return found


def _reports_read(settings: Settings) -> list[Path]:
    """The earlier reports a run reads (a report file as its baseline, those `durations`
    names): never removed as stale, though they may sit where this run writes its own."""
    read: list[Path] = []
    if settings.baseline:  # imported only then: a plain run's first request waits for neither
        from clawspec.history.stores import source_kind

        if source_kind(settings.baseline) == "file":
            read.append(Path(settings.baseline))
    if settings.durations:
        from clawspec.sharding.report_files import expand

        # Nothing there yet is no error here: the run says so when it balances its shards.
        with contextlib.suppress(UsageError):
            read += [found.path for found in expand([settings.durations])]
    return read


def _import_session() -> None:
    import clawspec.runner.session  # noqa: F401  (what running needs: see its docstring)


@scoped  # the run's secrets registry (the CLI's, else one for this call): clawspec/secrets.py
def run(
    paths: Sequence[str | Path],
    *,
    config: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
    scenarios: Sequence[str] = (),
    tags: Sequence[str] = (),
    exclude_tags: Sequence[str] = (),
    listener: RunListener | None = None,
    stop: threading.Event | None = None,
    abandon: threading.Event | None = None,
) -> RunResult:
    """Run the selected scenarios and write the reports (also when interrupted)."""
    environ = dict(os.environ if environ is None else environ)
    # The runner's modules are imported while a large suite's files are parsed ahead.
    listener = listener or _Quiet()
    settled: list[Settings] = []

    def ready(settings: Settings) -> None:
        _outputs_ready(settings)
        settled.append(settings)

    try:
        loaded = _load(
            paths,
            config,
            environ,
            flags,
            meanwhile=_import_session,
            on_warning=listener.on_warning,
            settled=ready,
        )
    except ContractError as exc:
        if settled:  # the pull request hears that this push ran nothing
            _say_stopped(exc.messages, settled[0], environ)
        raise
    handed = [loaded]
    del loaded
    from clawspec.runner.session import run_loaded

    # Handed over in a list the session empties: this frame keeps no reference to the
    # contracts, so they are freed before the results become models again.
    return run_loaded(
        handed,
        environ,
        listener,
        scenarios=scenarios,
        tags=tags,
        exclude_tags=exclude_tags,
        stop=stop,
        abandon=abandon,
    )


@scoped  # the secrets registry, as for `run`: resolving the settings fills it
def merge(
    patterns: Sequence[str],
    *,
    config: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
    note: Callable[[str], None] | None = None,
) -> RunResult:
    """Merge the shard reports and write every output a run writes; return the result.

    Settings come from the config file (`config`, else found from the current folder), the
    environment and the flags, as for `run`, so the report paths and the exit policy match.
    """
    from clawspec.sharding.merge import (
        check,
        collect,
        join,
        missing_variants,
        runs,
        unknown_variants,
    )
    from clawspec.sharding.merge import merge as merge_shards

    environ = dict(os.environ if environ is None else environ)
    note = note or (lambda text: print(text, file=sys.stderr, flush=True))
    settings, config_path = resolve_settings(config, Path.cwd(), environ, flags)
    from clawspec.reports.publish import clear_earlier_reports, output_problems

    if problems := output_problems(settings):
        raise UsageError("; ".join(problems))
    # No earlier merge's outputs are left to be read as this one's; the reports merged stay.
    clear_earlier_reports(settings, keep=[*_merged_inputs(patterns), *_reports_read(settings)])
    try:
        found = collect(patterns, note)
    except UsageError as exc:  # nothing to merge: the pull request hears it, not stale verdicts
        from clawspec.reports.publish import publish_stopped

        publish_stopped([str(exc)], settings, environ, merge=True)
        raise
    # Shards of one run, or the runs of different variants (each whole or sharded), joined.
    parts, shards = [], []
    for group in runs(found):
        if group[0].report.shard is None:
            parts.append(group[0].report)
            continue
        checked = check(group)
        shards += checked
        parts.append(merge_shards(checked))
    configured = [v.name for v in settings.variants]
    report = parts[0] if len(parts) == 1 else join(parts, configured)
    # A part's own comparison was made under its job's settings: the merge's decide (a part
    # compared under `fail_on: regression` must not speak for a merge judged by `fail`).
    report = report.model_copy(update={"comparison": None, "baseline": None, "trends": []})
    if warning := unknown_variants(report, configured, config_path):
        note(warning)
    if absent := missing_variants(report, settings.variants):
        report = report.model_copy(update={"variants_missing": absent})
    result = finish(report, settings, environ, merged=True)
    # The outcome (reports/outcome.py) fails an incomplete merge; stderr names what is missing.
    cut = [f"shard {i.shard.index}/{i.shard.total}" for i in shards if i.report.interrupted]
    cut += [f"variant run {p.run_id}" for p in parts if p.interrupted and p.merged is None]
    if cut:
        note(f"error: interrupted {', '.join(cut)}: the merged report is incomplete")
    if report.merged is not None and report.merged.missing:
        note(f"error: {report.merged.missing_message()}; the merged report is incomplete")
    if report.variants_missing:
        from clawspec.reports.outcome import variants_missing_message

        note(
            f"error: {variants_missing_message(report.variants_missing)} (pass every variant "
            "job's report, or mark a variant you do not run `required: false`)"
        )
    return result
