"""`clawspec cassettes check`: stale, unused, invalid and missing cassettes, and their size."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from clawspec.commands.options import add_paths, given
from clawspec.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from clawspec.config.settings import Settings, VariantSettings

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
        "--variant",
        action="append",
        default=None,
        metavar="NAME",
        dest="selected_variants",
        help="check only this variant's recordings (repeatable; default: all or CLAWSPEC_VARIANTS)",
    )
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
    from clawspec.selection.steps import selected_variants
    from clawspec.traffic.cassette import cassette_root
    from clawspec.traffic.check import Expected, check, render

    if args.cassettes_command != "check":
        raise UsageError("usage: clawspec cassettes check [PATH ...] [--report FILE]")
    flags = given(args, ["workspace", "cassette_dir", "selected_variants"])
    loaded = load(args.paths, config=args.config, flags=flags)
    settings, workspace = loaded.settings, loaded.workspace
    root = cassette_root(settings, workspace)
    report = Path(args.report) if args.report else None
    release = _bring_up_release(settings)
    # A replay runs each scenario once per selected variant (in its own sub-folder; all of them
    # unless --variant or CLAWSPEC_VARIANTS picks some, as for `run`), or once without
    # variants: the folders of those runs are the ones a replay reads. The recordings of the
    # variants not selected are left out: neither stale nor missing.
    chosen = selected_variants(settings)
    names = {variant.name for variant in chosen if variant is not None}
    others = [variant for variant in settings.variants if variant.name not in names]

    def runs(variants: Sequence[VariantSettings | None]) -> dict[Path, Expected]:
        return {  # the cassette folder of every run of the loaded contracts -> that run
            replay_folder(plan, settings, workspace): Expected(
                plan.identity.label,
                _variant_release(variant, release),
                variant.name if variant is not None else None,
            )
            for contract in loaded.contracts
            for index, scenario in enumerate(contract.contract.scenarios)
            for variant in variants
            for plan in [ScenarioPlan(contract, index, scenario, variant)]
        }

    within = _within(args.paths, workspace, root)
    result = check(root, runs(chosen), report, workspace, within, set(runs(others)))
    for line in render(result):
        print(line)
    return ExitCode.OK if result.ok else ExitCode.FAILED


def _within(paths: list[str], workspace: Path, root: Path) -> list[Path] | None:
    """The cassette folders of the contracts the paths name (a contract's folder is its path
    relative to the workspace, without its suffix); None when a path is the workspace or
    outside it: then every recording is judged."""
    from pathlib import Path

    within = []
    for named in paths or ["."]:
        path = Path(named).resolve()
        if not path.is_relative_to(workspace.resolve()) or path == workspace.resolve():
            return None
        relative = path.relative_to(workspace.resolve())
        within.append(root / (relative.with_suffix("") if path.is_file() else relative))
    return within


def _variant_release(variant: VariantSettings | None, default: str | None) -> str | None:
    """The OpenClaw release a variant's replay runs on: its own `openclaw_version` (a gateway
    of its own running that release), else the default gateway's."""
    if variant is not None and variant.openclaw_version:
        return variant.openclaw_version
    return default


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
