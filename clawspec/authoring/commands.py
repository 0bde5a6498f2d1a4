"""Adoption and authoring subcommands: `schema`, `lint`, `init`, `coverage`, `migrate` (issue 13).

Only argparse is imported here (this module loads with `clawspec --help`); each handler imports
its own modules when it runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from clawspec.errors import ExitCode

if TYPE_CHECKING:
    from clawspec.config import Settings


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add the authoring subcommands to the `clawspec` parser."""
    schema = commands.add_parser(
        "schema", help="print the JSON Schema of contracts or of clawspec.yaml (for editors)"
    )
    schema.add_argument("kind", nargs="?", default="contract", choices=["contract", "config"])

    lint = commands.add_parser("lint", help="check SKILL.md and SOUL.md files")
    lint.add_argument(
        "paths", nargs="*", metavar="PATH", help="files or folders (default: the workspace)"
    )
    lint.add_argument("--config", metavar="FILE", help="clawspec.yaml with `lint` settings")
    lint.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    lint.add_argument("--format", choices=["text", "json"], default="text", help="output form")
    _add_init(commands)

    migrate = commands.add_parser(
        "migrate", help="rewrite ClawSpec 0.1 contracts, handoffs, pipelines and clawspec.yaml"
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

    coverage = commands.add_parser(
        "coverage", help="show which skills and agents have contracts, scenarios and negatives"
    )
    coverage.add_argument(
        "workspace", nargs="?", metavar="WORKSPACE", help="default: the workspace"
    )
    coverage.add_argument("--config", metavar="FILE", help="clawspec.yaml to use")
    coverage.add_argument("--openclaw-config", metavar="FILE", help="openclaw.json with agents")
    coverage.add_argument("--format", choices=["text", "json"], default="text", help="output form")
    coverage.add_argument(
        "--min-coverage",
        metavar="RATIO",
        help="exit 1 when fewer targets have scenarios (0.8 or 80%%)",
    )


def _add_init(commands: argparse._SubParsersAction) -> None:
    init = commands.add_parser(
        "init", help="write clawspec.yaml, starter contracts and a CI workflow for a workspace"
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


def _settings(config: str | None, start: Path) -> tuple[Settings, Path | None]:
    """The settings (and the clawspec.yaml read) for a command that runs nothing."""
    from clawspec.config import load_settings, locate_config

    path = locate_config(config, start)
    return load_settings(path, os.environ), path


def cmd_schema(args: argparse.Namespace) -> ExitCode:
    from clawspec.authoring.schema import schema_path

    sys.stdout.write(schema_path(args.kind).read_text(encoding="utf-8"))
    return ExitCode.OK


def cmd_lint(args: argparse.Namespace) -> ExitCode:
    from clawspec.lint.engine import find_documents, lint_files
    from clawspec.lint.output import publish_github, render_json, render_terminal
    from clawspec.lint.rules import LintOptions

    paths = args.paths or ["."]
    settings, _ = _settings(args.config, Path(paths[0]))
    files = find_documents(paths)
    if not files:
        print(f"no SKILL.md or SOUL.md found in {', '.join(map(str, paths))}", file=sys.stderr)
        return ExitCode.USAGE
    options = LintOptions(soul_sections=tuple(settings.lint.soul_sections))
    report = lint_files(files, settings.lint.rules, options)
    print(render_json(report) if args.format == "json" else render_terminal(report), end="")
    if args.format == "text":
        print()
    if os.environ.get("GITHUB_ACTIONS") == "true":
        publish_github(report, args.strict, os.environ)
    return report.exit_code(args.strict)


def cmd_init(args: argparse.Namespace) -> ExitCode:
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
    return ExitCode.OK


class _AnyEnvironment(dict):
    """Coverage reads contracts without running them: every `{{env.NAME}}` counts as set."""

    def __contains__(self, key: object) -> bool:
        return True


def cmd_coverage(args: argparse.Namespace) -> ExitCode:
    from clawspec.authoring.coverage import HISTORY_RUNS, history_reports, measure, parse_ratio
    from clawspec.authoring.coverage_output import render_json, render_summary, render_terminal
    from clawspec.authoring.workspace import discover_workspace
    from clawspec.contracts.discovery import discover, display_path
    from clawspec.contracts.loader import load_contract
    from clawspec.errors import ClawSpecError, UsageError

    try:
        minimum = parse_ratio(args.min_coverage) if args.min_coverage is not None else None
    except ValueError as exc:
        raise UsageError(f"--min-coverage: {exc}") from None
    settings, config_path = _settings(args.config, Path(args.workspace or "."))
    if args.workspace:
        root = Path(args.workspace)
    elif config_path is not None:
        root = config_path.parent
    else:
        root = Path(".")
    if not root.is_dir():
        raise UsageError(f"{root}: no such folder")
    openclaw = Path(args.openclaw_config) if args.openclaw_config else None
    workspace = discover_workspace(root, openclaw)
    try:
        files = discover([root], settings.scenario_patterns)
    except UsageError:
        files = []  # no contracts yet: every target is uncovered
    loaded, invalid = [], []
    for path in files:
        result = load_contract(path, workspace.root, _AnyEnvironment())
        if isinstance(result, list):
            invalid.append(display_path(path))
        else:
            loaded.append(result)
    try:
        report = measure(
            workspace, loaded, invalid, history_reports(settings, os.environ, HISTORY_RUNS)
        )
    except ClawSpecError as exc:  # the store (issue 12's HistoryError) could not be read
        report = measure(workspace, loaded, invalid)
        report.history_problem = str(exc)
    print(render_json(report) if args.format == "json" else render_terminal(report), end="")
    for problem in workspace.problems:
        print(f"warning: {problem}", file=sys.stderr)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        from clawspec.reports.github.commands import GitHubRunner

        GitHubRunner(os.environ).append_summary(render_summary(report))
    if not report.targets:
        # 0/0 is no coverage: a minimum is never met by a workspace with nothing to cover
        # (a wrong folder, a layout not recognised).
        print(f"no agents or skills found under {workspace.root}", file=sys.stderr)
        return ExitCode.FAILED if minimum is not None else ExitCode.OK
    if minimum is not None and report.ratio < minimum:
        print(f"coverage {report.ratio:.0%} is below --min-coverage {minimum:.0%}", file=sys.stderr)
        return ExitCode.FAILED
    return ExitCode.OK


def cmd_migrate(args: argparse.Namespace) -> ExitCode:
    from clawspec.config import find_config
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


COMMANDS: dict[str, Callable[[argparse.Namespace], ExitCode]] = {
    "schema": cmd_schema,
    "lint": cmd_lint,
    "init": cmd_init,
    "coverage": cmd_coverage,
    "migrate": cmd_migrate,
}
