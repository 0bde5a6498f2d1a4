"""`clawspec coverage`: which skills and agents have contracts, scenarios and negatives."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawspec.commands.options import add_config
from clawspec.errors import ExitCode

if TYPE_CHECKING:
    from clawspec.config.settings import Settings

NAME = "coverage"


def add_parser(commands: argparse._SubParsersAction) -> None:
    coverage = commands.add_parser(
        NAME, help="show which skills and agents have contracts, scenarios and negatives"
    )
    coverage.add_argument(
        "workspace", nargs="?", metavar="WORKSPACE", help="default: the workspace"
    )
    add_config(coverage, "found by walking up from WORKSPACE")
    coverage.add_argument("--openclaw-config", metavar="FILE", help="openclaw.json with agents")
    coverage.add_argument("--format", choices=["text", "json"], default="text", help="output form")
    coverage.add_argument(
        "--min-coverage",
        metavar="RATIO",
        help="exit 1 when fewer targets have scenarios (0.8 or 80%%)",
    )


class _AnyEnvironment(dict):
    """Coverage reads contracts without running them: every `{{env.NAME}}` counts as set."""

    def __contains__(self, key: object) -> bool:
        return True


def run(args: argparse.Namespace) -> ExitCode:
    import os

    from clawspec.authoring.coverage import HISTORY_RUNS, history_reports, measure, parse_ratio
    from clawspec.authoring.coverage_output import render_json, render_summary, render_terminal
    from clawspec.authoring.workspace import discover_workspace
    from clawspec.ci_context import CIContext
    from clawspec.config.loading import resolve_settings
    from clawspec.contracts.discovery import discover
    from clawspec.errors import ClawSpecError, UsageError

    try:
        minimum = parse_ratio(args.min_coverage) if args.min_coverage is not None else None
    except ValueError as exc:
        raise UsageError(f"--min-coverage: {exc}") from None
    settings, config_path = resolve_settings(args.config, Path(args.workspace or "."), os.environ)
    context = CIContext.from_environ(os.environ)
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
        files = discover([root], settings.scenario_patterns, workspace=root)
    except UsageError:
        files = []  # no contracts yet: every target is uncovered
    loaded, invalid = _read_contracts(files, workspace.root, settings)
    try:
        report = measure(
            workspace, loaded, invalid, history_reports(settings, context, HISTORY_RUNS)
        )
    except ClawSpecError as exc:  # the history store could not be read
        report = measure(workspace, loaded, invalid)
        report.history_problem = str(exc)
    print(render_json(report) if args.format == "json" else render_terminal(report), end="")
    for problem in workspace.problems:
        print(f"warning: {problem}", file=sys.stderr)
    if context.system == "github":
        from clawspec.reports.github.commands import GitHubRunner

        GitHubRunner(context).append_summary(render_summary(report))
    if not report.targets:
        # 0/0 is no coverage: a minimum is never met by a workspace with nothing to cover
        # (a wrong folder, a layout not recognised).
        print(f"no agents or skills found under {workspace.root}", file=sys.stderr)
        return ExitCode.FAILED if minimum is not None else ExitCode.OK
    if minimum is not None and report.ratio < minimum:
        print(f"coverage {report.ratio:.0%} is below --min-coverage {minimum:.0%}", file=sys.stderr)
        return ExitCode.FAILED
    return ExitCode.OK


def _read_contracts(
    files: list[Path], root: Path, settings: Settings
) -> tuple[list[Any], list[str]]:
    """The contracts that load (with a run's limits: a file a run refuses counts as invalid
    here too) and the display paths of those that do not."""
    from clawspec.contracts.discovery import display_path
    from clawspec.contracts.loader import load_contract
    from clawspec.inputs.limits import ContractLimits

    limits = ContractLimits.from_settings(settings)
    loaded: list[Any] = []
    invalid: list[str] = []
    for path in files:
        result = load_contract(path, root, _AnyEnvironment(), limits=limits)
        if isinstance(result, list):
            invalid.append(display_path(path))
        else:
            loaded.append(result)
    return loaded, invalid
