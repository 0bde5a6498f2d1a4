"""Options several commands share, and how flags become settings (flags win over the
environment and the file: clawspec/config/loading.py)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any


def add_paths(parser: argparse.ArgumentParser) -> None:
    """The contract PATHs, `--config` and `--workspace` of the commands that load contracts."""
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="contract files or folders (default: the current folder)",
    )
    add_config(parser, "found by walking up from PATH")
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        help="the workspace root, relative to the current folder (default: the folder of "
        "clawspec.yaml)",
    )


def add_config(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument(
        "--config", metavar="FILE", help=f"clawspec.yaml to use (default: {default})"
    )


def comment_mode(value: str) -> str:
    """Check a `--pr-comment` MODE (true/false are aliases of always/off)."""
    mode = {"true": "always", "false": "off"}.get(value.strip().lower(), value.strip().lower())
    if mode not in ("always", "changes", "failures", "off"):
        # nargs="?" takes the next word: a path written after the flag lands here.
        raise argparse.ArgumentTypeError(
            f"expected always, changes, failures or off, found '{value}' (put paths before "
            "--pr-comment, or write --pr-comment=MODE)"
        )
    return mode


def add_outputs(parser: argparse.ArgumentParser) -> None:
    """The report and exit-policy options `run` and `merge` share (OUTPUT_FLAGS)."""
    parser.add_argument(
        "--baseline",
        metavar="SOURCE",
        help="compare with an earlier run: a report file, dir:PATH, s3://bucket/prefix or github",
    )
    parser.add_argument(
        "--save-baseline",
        action="store_true",
        default=None,
        help="store this run's report in the --baseline store (default dir:.clawspec-history)",
    )
    parser.add_argument(
        "--report-json",
        metavar="FILE",
        help="JSON report path (default: <report_dir>/clawspec-report.json)",
    )
    parser.add_argument("--report-dir", metavar="DIR", help="folder for reports")
    parser.add_argument(
        "--max-skipped",
        metavar="N|RATIO",
        help="exit 1 when more scenarios than this are skipped (3, 0.2 or 20%%)",
    )
    parser.add_argument("--junit", metavar="FILE", help="write JUnit XML here")
    parser.add_argument(
        "--report-html", metavar="FILE", help="write the self-contained HTML report here"
    )
    parser.add_argument(
        "--codequality",
        metavar="FILE",
        help="write a GitLab Code Quality report here (findings in merge requests)",
    )
    parser.add_argument(
        "--summary",
        metavar="FILE",
        help="write the job summary's Markdown here (a local preview of GitHub's)",
    )
    parser.add_argument(
        "--pr-comment",
        nargs="?",
        const="always",
        type=comment_mode,
        metavar="MODE",
        help="pull-request comment (GitHub): always (the default MODE), changes (a new comment "
        "only when the verdicts changed), failures (only when something failed) or off",
    )
    parser.add_argument(
        "--check-run",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="write a GitHub check run with an annotation for every non-passing assertion "
        "(default: when the token may write checks)",
    )
    parser.add_argument(
        "--check-name", metavar="NAME", help="name of the check run (default: 'ClawSpec: <job>')"
    )
    parser.add_argument(
        "--fail-on",
        choices=["fail", "error", "never", "regression"],
        help="what makes the exit code 1 (default: fail = failed or errored; regression = "
        "only regressions against the baseline)",
    )


# The report and exit-policy flags `run` and `merge` share, as setting names.
OUTPUT_FLAGS = (
    "report_json",
    "report_dir",
    "max_skipped",
    "junit",
    "report_html",
    "codequality",
    "summary",
    "pr_comment",
    "check_run",
    "check_name",
    "fail_on",
    "baseline",
    "save_baseline",
)


def given(args: argparse.Namespace, names: Sequence[str]) -> dict[str, Any]:
    """The flags among `names` the user gave, by setting name (a flag's dest is its setting)."""
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def gateway_and_budget(args: argparse.Namespace) -> dict[str, Any]:
    """The `gateway` and `budget` settings the run flags give (`--bring-up`, `--max-tokens`…),
    each only when one of its flags was given."""
    flags: dict[str, Any] = {}
    gateway = {
        "mode": "bring_up" if args.bring_up else None,
        "command": args.gateway_command,
        "config": args.openclaw_config,
    }
    gateway = {key: value for key, value in gateway.items() if value is not None}
    if gateway:
        flags["gateway"] = gateway
    budget = {
        "max_cost_usd": getattr(args, "max_cost_usd", None),
        "max_tokens": getattr(args, "max_tokens", None),
        "max_duration": getattr(args, "max_duration", None),
    }
    budget = {key: value for key, value in budget.items() if value is not None}
    if budget:
        flags["budget"] = budget
    return flags


def run_flags(args: argparse.Namespace) -> dict[str, Any]:
    """Map `run` flags onto settings."""
    names = [
        "workspace",
        *OUTPUT_FLAGS,
        "concurrency",
        "gateway_base_url",
        "timezone",
        "repeat",
        "changed_since",
        "shard",
        "durations",
        "shard_publish",
        "model_traffic",
        "cassette_dir",
        "openclaw_state_dir",
        "today",
        "selected_variants",
    ]
    flags = given(args, names)
    flags.update(gateway_and_budget(args))
    if args.observability_backend:
        flags["observability"] = {"backend": args.observability_backend}
    return flags
