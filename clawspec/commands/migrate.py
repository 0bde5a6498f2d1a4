"""`clawspec migrate`: rewrite legacy ClawSpec contracts, handoffs, pipelines and clawspec.yaml."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from clawspec.errors import ExitCode

NAME = "migrate"


def add_parser(commands: argparse._SubParsersAction) -> None:
    migrate = commands.add_parser(
        NAME, help="rewrite legacy ClawSpec contracts, handoffs, pipelines and clawspec.yaml"
    )
    migrate.add_argument("paths", nargs="+", metavar="PATH", help="files or folders")
    migrate.add_argument("--dry-run", action="store_true", help="say what would change")
    migrate.add_argument(
        "--drop-unsupported",
        action="store_true",
        help="remove constructs with no equivalent (listed) instead of refusing the file",
    )
    migrate.add_argument(
        "--invoke", metavar="TEXT", help="the message that starts a migrated handoff's run"
    )


def run(args: argparse.Namespace) -> ExitCode:
    from clawspec.config.loading import find_config
    from clawspec.migration.run import describe, migrate_paths

    config = find_config(Path(args.paths[0]))
    root = config.parent if config else Path.cwd()
    results = migrate_paths(
        args.paths,
        root,
        invoke=args.invoke,
        drop=args.drop_unsupported,
        dry_run=args.dry_run,
    )
    out, err = describe(results, args.dry_run)
    print(out)
    if err:
        print(err, file=sys.stderr)
    return ExitCode.USAGE if any(r.errors for r in results) else ExitCode.OK
