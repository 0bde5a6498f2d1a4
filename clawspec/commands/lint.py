"""`clawspec lint`: check SKILL.md, SOUL.md and contract files."""

from __future__ import annotations

import argparse
import sys

from clawspec.errors import ExitCode

NAME = "lint"


def add_parser(commands: argparse._SubParsersAction) -> None:
    lint = commands.add_parser(NAME, help="check SKILL.md, SOUL.md and contract files")
    lint.add_argument(
        "paths", nargs="*", metavar="PATH", help="files or folders (default: the workspace)"
    )
    lint.add_argument("--config", metavar="FILE", help="clawspec.yaml with `lint` settings")
    lint.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    lint.add_argument("--format", choices=["text", "json"], default="text", help="output form")


def run(args: argparse.Namespace) -> ExitCode:
    import os
    from pathlib import Path

    from clawspec.authoring.workspace import skills_config
    from clawspec.ci_context import CIContext
    from clawspec.config.loading import resolve_settings
    from clawspec.lint.engine import find_documents, lint_files
    from clawspec.lint.output import publish_github, render_json, render_terminal
    from clawspec.lint.rules import LintOptions
    from clawspec.lint.suppress import Ignore

    paths = args.paths or ["."]
    settings, config_path = resolve_settings(args.config, Path(paths[0]), os.environ)
    files = find_documents(paths, settings.scenario_patterns, settings.workspace)
    if not files:
        print(
            f"no SKILL.md, SOUL.md or contract found in {', '.join(map(str, paths))}",
            file=sys.stderr,
        )
        return ExitCode.USAGE
    options = LintOptions(
        soul_sections=tuple(settings.lint.soul_sections),
        environ=os.environ,
        openclaw_config=skills_config(settings.gateway.config, settings.workspace or Path.cwd()),
    )
    ignores = [Ignore(entry.rule, entry.path) for entry in settings.lint.ignore]
    base = config_path.parent if config_path else Path.cwd()
    report = lint_files(files, settings.lint.rules, options, ignores, base)
    print(render_json(report) if args.format == "json" else render_terminal(report), end="")
    if args.format == "text":
        print()
    context = CIContext.from_environ(os.environ)
    if context.system == "github":
        publish_github(report, args.strict, context)
    return report.exit_code(args.strict)
