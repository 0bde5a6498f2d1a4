"""`clawspec run`: run scenarios and write reports."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from clawspec.commands import signals
from clawspec.commands.options import add_outputs, add_paths, run_flags
from clawspec.errors import ExitCode

if TYPE_CHECKING:
    from clawspec.crash import Faults
    from clawspec.reports.terminal import TerminalReporter
    from clawspec.runner.finish import RunResult

NAME = "run"


def add_parser(commands: argparse._SubParsersAction) -> None:
    run = commands.add_parser(NAME, help="run scenarios and write reports")
    add_paths(run)
    run.add_argument(
        "--scenario",
        action="append",
        default=[],
        metavar="NAME",
        help="run only this scenario (repeatable)",
    )
    run.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="TAG",
        help="run only scenarios with this tag (repeatable: any of them)",
    )
    run.add_argument(
        "--exclude-tag",
        action="append",
        default=[],
        metavar="TAG",
        help="skip scenarios with this tag (repeatable)",
    )
    run.add_argument(
        "--variant",
        action="append",
        default=None,
        metavar="NAME",
        dest="selected_variants",
        help="run only this variant of the config's `variants` (repeatable)",
    )
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="load and render the plan and print it; invoke nothing",
    )
    run.add_argument("--gateway-base-url", metavar="URL", help="gateway to target")
    run.add_argument("--timezone", metavar="ZONE", help="gateway time zone for {{today}}")
    add_outputs(run)
    run.add_argument("--concurrency", type=int, metavar="N", help="agent runs at once")
    run.add_argument(
        "--changed-since",
        metavar="REF|auto",
        help="run only the scenarios a change since this git ref touches (working tree "
        "included); 'auto': a pull/merge request's merge-base with its base branch, else all",
    )
    run.add_argument(
        "--shard",
        metavar="I/N|auto",
        help="run only part I of N of the selection (1-based), balanced; 'auto' reads GitLab's "
        "CI_NODE_INDEX/CI_NODE_TOTAL",
    )
    run.add_argument(
        "--durations",
        metavar="REPORT",
        help="earlier JSON report(s) (file, glob or folder) whose durations balance the shards",
    )
    run.add_argument(
        "--shard-publish",
        action="store_true",
        default=None,
        help="a shard writes its own job summary, annotations and PR comment too",
    )
    run.add_argument(
        "--max-cost-usd",
        metavar="USD",
        help="run budget: start no agent run once the finished ones cost this much (a run of "
        "unknown cost stops the run too); the rest are skipped and the run fails",
    )
    run.add_argument(
        "--max-tokens",
        metavar="N",
        help="run budget: start no agent run once the finished ones used this many tokens",
    )
    run.add_argument(
        "--max-duration",
        metavar="TIME",
        help="run budget: start no agent run this long after the first one started (90s, "
        "30m, 1h30m)",
    )
    run.add_argument(
        "--repeat",
        type=int,
        metavar="N",
        help="run each scenario N times; the pass rate decides (see min_pass_rate)",
    )
    run.add_argument(
        "--bring-up",
        action="store_true",
        default=None,
        help="start an OpenClaw gateway for this run and stop it afterwards",
    )
    run.add_argument(
        "--gateway-command", metavar="CMD", help="command that runs the gateway in bring-up mode"
    )
    run.add_argument(
        "--openclaw-config",
        metavar="FILE",
        help="your openclaw.json, merged with ClawSpec's settings in bring-up mode",
    )
    run.add_argument(
        "--observability-backend",
        choices=["none", "local", "opik", "phoenix", "langfuse"],
        help="where trace assertions read spans from",
    )
    run.add_argument(
        "--model-traffic",
        choices=["off", "record", "replay"],
        help="record the agent's model calls into cassettes, or replay them (hermetic runs)",
    )
    run.add_argument("--cassette-dir", metavar="DIR", help="where cassettes are kept")
    run.add_argument(
        "--openclaw-state-dir",
        metavar="DIR",
        help="state folder of your gateway (its OPENCLAW_STATE_DIR): where run records are read",
    )
    run.add_argument("--today", metavar="YYYY-MM-DD", help="fixed value of {{today}}")
    run.add_argument("--no-color", action="store_true", help="plain terminal output")


def run(args: argparse.Namespace) -> ExitCode:
    import os
    import threading

    from clawspec import api
    from clawspec.ci_context import CIContext
    from clawspec.crash import Faults
    from clawspec.reports.terminal import TerminalReporter

    flags = run_flags(args)
    if args.dry_run:
        from clawspec.dry_run.plan import print_plan

        loaded = api.load(args.paths, config=args.config, flags=flags, on_warning=_warn)
        from clawspec.runner.plans import this_part

        context = CIContext.from_environ(os.environ)
        part = this_part(loaded, context, _warn, args.scenario, args.tag, args.exclude_tag)
        plans = part.plans
        if part.selection:
            print(part.selection.describe(planned=True))  # nothing ran
        if part.shard:
            print(_shard_line(part.shard))
        print_plan(loaded, plans)
        from clawspec.dry_run.spend import expected_spend_lines

        for line in expected_spend_lines(plans, loaded.settings, os.environ):
            print(line)
        return ExitCode.OK
    stop, abandon = threading.Event(), threading.Event()
    reporter = TerminalReporter(colour=False if args.no_color else None)
    restore = signals.install(stop, abandon, reporter.scenarios_running)
    try:
        result = api.run(
            args.paths,
            config=args.config,
            flags=flags,
            scenarios=args.scenario,
            tags=args.tag,
            exclude_tags=args.exclude_tag,
            listener=reporter,
            stop=stop,
            abandon=abandon,
        )
    finally:
        restore()
    if stop.is_set() and not result.report.interrupted:
        # The signal cut nothing short: the run keeps its own verdict (reports/outcome.py).
        budget = result.report.budget
        said = (
            "the spend limit had already stopped the run, and the scenarios running finished"
            if budget is not None and budget.stopped
            else "the signal came once every scenario had started, and each finished: the "
            "run is complete"
        )
        print(f"note: {said}", file=sys.stderr, flush=True)
    faults = Faults()
    try:
        _print_summary(reporter, result, faults)
    except KeyboardInterrupt:
        # The run is over and its reports are written: a signal now cuts only this text.
        print("\ninterrupted while printing the summary; the reports are complete", file=sys.stderr)
    # The reports are written: a bug in the summary costs only the summary.
    report_dir = result.written[0].parent if result.written else None
    faults.raise_if_any(report_dir=report_dir, written=result.written)
    return result.exit_code


def _print_summary(reporter: TerminalReporter, result: RunResult, faults: Faults) -> None:
    """The run's summary, then the files it wrote."""
    with faults.guard("TerminalReporter.summary"):
        reporter.summary(result.report, result.outcome)
    if result.report.shard:
        print(_shard_line(result.report.shard))
    from clawspec.contracts.discovery import display_path

    # The files as written: relative to the current folder when inside it, else absolute.
    for path in result.written:
        print(f"report: {display_path(path)}")
    for path in result.gateway_logs:
        print(f"gateway log: {display_path(path)}")


def _shard_line(shard: Any) -> str:
    return (
        f"shard {shard.index}/{shard.total}: {len(shard.positions)} of the {shard.selected} "
        f"selected scenarios (balanced by {shard.balanced_by}); join the shards with "
        "`clawspec merge`"
    )


def _warn(message: str) -> None:
    """A warning line on stderr, masked (on GitHub Actions, one about files is an annotation
    on each: reports/github/annotations.py)."""
    from clawspec.reports.github.annotations import warn_on_github
    from clawspec.secrets import mask

    if not warn_on_github(message):
        print(mask(f"warning: {message}"), file=sys.stderr)
