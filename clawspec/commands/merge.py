"""`clawspec merge REPORT…`: join the shard reports of one matrix into one report and write
every output a run writes."""

from __future__ import annotations

import argparse

from clawspec.commands.options import OUTPUT_FLAGS, add_config, add_outputs, given
from clawspec.errors import ExitCode

NAME = "merge"


def add_parser(commands: argparse._SubParsersAction) -> None:
    merge = commands.add_parser(
        NAME,
        help="join the shard reports of one matrix into one report and write every output",
    )
    merge.add_argument(
        "reports",
        nargs="+",
        metavar="REPORT",
        help="shard JSON reports: files, globs or folders (every *.json below)",
    )
    add_config(merge, "found by walking up from the current folder")
    add_outputs(merge)
    merge.add_argument("--no-color", action="store_true", help="plain terminal output")


def run(args: argparse.Namespace) -> ExitCode:
    from clawspec.api import merge
    from clawspec.reports.terminal import TerminalReporter

    result = merge(args.reports, config=args.config, flags=given(args, OUTPUT_FLAGS))
    TerminalReporter(colour=False if args.no_color else None).summary(result.report, result.outcome)
    merged = result.report.merged
    if merged:
        print(f"merged {len(merged.present)} of {merged.total} shard report(s)")
    from clawspec.contracts.discovery import display_path

    for path in result.written:  # relative to the current folder when inside it
        print(f"report: {display_path(path)}")
    return result.exit_code
