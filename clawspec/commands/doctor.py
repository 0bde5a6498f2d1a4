"""`clawspec doctor`: say which gateway a run would use, and what is missing for it."""

from __future__ import annotations

import argparse

from clawspec.commands.options import add_config
from clawspec.errors import ExitCode

NAME = "doctor"


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        NAME,
        help="show the gateway a run would use (OpenClaw, Node, model keys) and what is missing",
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


def run(args: argparse.Namespace) -> ExitCode:
    import os
    from pathlib import Path

    from clawspec.config import resolve_settings
    from clawspec.gateway.doctor import diagnose

    gateway = {"mode": "bring_up" if args.bring_up else None, "config": args.openclaw_config}
    flags = {"gateway": {k: v for k, v in gateway.items() if v is not None}}
    settings, path = resolve_settings(args.config, Path(args.path), os.environ, flags)
    report = diagnose(settings, path, os.environ)
    for line in report.lines:
        print(line)
    return report.exit_code
