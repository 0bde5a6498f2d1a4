"""`clawspec doctor`: say which gateway a run would use, and what is missing for it."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from clawspec.commands.options import add_config
from clawspec.errors import ExitCode

if TYPE_CHECKING:
    from clawspec.config.settings import Settings

NAME = "doctor"


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        NAME,
        help="show the gateway a run would use (OpenClaw, Node, model keys; for conversations "
        "the gateway token and chat endpoint) and what is missing",
    )
    parser.add_argument(
        "path", nargs="?", default=".", metavar="PATH", help="where runs start (default: here)"
    )
    add_config(parser, "found by walking up from PATH")
    parser.add_argument(
        "--bring-up", action="store_true", help="check bring-up mode whatever the config says"
    )
    parser.add_argument(
        "--openclaw-config", metavar="FILE", help="the openclaw.json bring-up merges into"
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=None,
        metavar="NAME",
        dest="selected_variants",
        help="check only this variant of the config's `variants` (repeatable; default: all)",
    )


def run(args: argparse.Namespace) -> ExitCode:
    import os

    from clawspec.config.loading import resolve_settings
    from clawspec.gateway.doctor import diagnose

    gateway = {"mode": "bring_up" if args.bring_up else None, "config": args.openclaw_config}
    flags: dict[str, object] = {"gateway": {k: v for k, v in gateway.items() if v is not None}}
    if args.selected_variants:
        flags["selected_variants"] = args.selected_variants
    settings, path = resolve_settings(args.config, Path(args.path), os.environ, flags)
    from clawspec.selection.steps import selected_variants

    # The selected variants' models need keys too (all variants unless --variant picks some).
    variants = [v for v in selected_variants(settings) if v is not None]
    talks = conversations(settings, Path(args.path), os.environ)
    report = diagnose(settings, path, os.environ, variants, talks)
    from clawspec.authoring.workspace import discover_workspace, skills_missing_env
    from clawspec.lint.requires import unset_message

    # A warning, not a missing piece: the exit code stays the gateway's.
    root = Path(settings.workspace) if settings.workspace else Path(args.path)
    config = Path(settings.gateway.config) if settings.gateway.config else None
    workspace = discover_workspace(root, config if config and config.is_file() else None)
    warnings = [
        f"  warning  skill {skill.name} ({skill.source}): {unset_message(names)}"
        for skill, names in skills_missing_env(workspace, os.environ)
    ]
    from clawspec.text import console_line

    for line in [*report.lines[:-1], *warnings, *report.lines[-1:]]:
        print(console_line(line))
    return report.exit_code


def conversations(settings: Settings, start: Path, environ: Mapping[str, str]) -> list[str]:
    """The conversations (scenarios with `turns`) of the contracts under `start`, named
    `'name' (file)`: they need the gateway's chat endpoint and token. A file that does not load
    is left out (`clawspec validate` says why); no contracts at all is no conversations."""
    from clawspec.contracts.discovery import discover
    from clawspec.contracts.loader import LoadedContract, load_contract
    from clawspec.errors import UsageError

    workspace = Path(settings.workspace) if settings.workspace else Path.cwd()
    try:
        files = discover([start], settings.scenario_patterns, workspace=workspace)
    except UsageError:
        return []
    found: list[str] = []
    for file in files:
        loaded = load_contract(file, workspace, environ)
        if isinstance(loaded, LoadedContract):
            found += [
                f"'{s.name}' ({loaded.display})"
                for s in loaded.contract.scenarios
                if s.turns is not None
            ]
    return found
