"""`clawspec init`: clawspec.yaml, starter contracts and a CI workflow for a workspace."""

from __future__ import annotations

import argparse
from pathlib import Path

from clawspec.errors import ExitCode

NAME = "init"


def add_parser(commands: argparse._SubParsersAction) -> None:
    init = commands.add_parser(
        NAME, help="write clawspec.yaml, starter contracts and a CI workflow for a workspace"
    )
    init.add_argument("workspace", nargs="?", default=".", metavar="WORKSPACE")
    init.add_argument(
        "--openclaw-config", metavar="FILE", help="openclaw.json (default: WORKSPACE/openclaw.json)"
    )
    init.add_argument("--force", action="store_true", help="replace files that already exist")
    init.add_argument(
        "--skip-existing", action="store_true", help="write only the files that do not exist"
    )
    init.add_argument("--dry-run", action="store_true", help="list what would be written")


def run(args: argparse.Namespace) -> ExitCode:
    from clawspec.authoring.initialize import describe, initialize

    config = Path(args.openclaw_config) if args.openclaw_config else None
    result = initialize(
        Path(args.workspace),
        openclaw_config=config,
        force=args.force,
        skip_existing=args.skip_existing,
        dry_run=args.dry_run,
    )
    print(describe(result))
    return ExitCode.USAGE if result.refused and not args.dry_run else ExitCode.OK
