"""`clawspec cassettes check`: stale, unused, invalid and missing cassettes, and their size."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from clawspec.commands.options import add_paths, given
from clawspec.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from clawspec.config.settings import Settings

NAME = "cassettes"


def add_parser(commands: argparse._SubParsersAction) -> None:
    cassettes = commands.add_parser(NAME, help="inspect recorded model traffic")
    cassette_commands = cassettes.add_subparsers(dest="cassettes_command", metavar="COMMAND")
    check = cassette_commands.add_parser(
        "check", help="report stale, unused, invalid and missing cassettes and their size"
    )
    add_paths(check)
    check.add_argument("--cassette-dir", metavar="DIR", help="where cassettes are kept")
    check.add_argument(
        "--report",
        metavar="FILE",
        help="JSON report of a replay run: cassette files it did not use are reported",
    )


def run(args: argparse.Namespace) -> ExitCode:
    from pathlib import Path

    from clawspec.api import load
    from clawspec.runner.scenario import ScenarioPlan
    from clawspec.runner.traffic import replay_folder
    from clawspec.traffic.cassette import cassette_root
    from clawspec.traffic.check import check, render

    if args.cassettes_command != "check":
        raise UsageError("usage: clawspec cassettes check [PATH ...] [--report FILE]")
    loaded = load(args.paths, config=args.config, flags=given(args, ["workspace", "cassette_dir"]))
    root = cassette_root(loaded.settings, loaded.workspace)
    report = Path(args.report) if args.report else None
    expected = {  # the cassette folder of every scenario of the loaded contracts -> its id
        replay_folder(plan, loaded.settings, loaded.workspace): plan.id
        for contract in loaded.contracts
        for index, scenario in enumerate(contract.contract.scenarios)
        for plan in [ScenarioPlan(contract, index, scenario)]
    }
    result = check(root, expected, report, loaded.workspace, _bring_up_release(loaded.settings))
    for line in render(result):
        print(line)
    return ExitCode.OK if result.ok else ExitCode.FAILED


def _bring_up_release(settings: Settings) -> str | None:
    """The OpenClaw release a bring-up here runs (the one recordings are compared with): the
    release of the openclaw it would start, the pinned one when none is installed yet (the
    first bring-up installs it); None for a gateway command of your own (not told)."""
    if settings.gateway.command:
        return None
    from clawspec.gateway.bringup import find_openclaw
    from clawspec.gateway.install import OPENCLAW_VERSION
    from clawspec.gateway.release import launcher_release

    launcher = find_openclaw()
    if launcher is None:
        return OPENCLAW_VERSION
    release = launcher_release(launcher)
    return release.version if release is not None else None
