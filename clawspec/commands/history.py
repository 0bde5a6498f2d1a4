"""`clawspec history`: list the stored runs of a branch, newest first."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from clawspec.commands.options import given
from clawspec.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from clawspec.history.store import StoredRun

NAME = "history"
DEFAULT_LIMIT = 20


def add_parser(commands: argparse._SubParsersAction) -> None:
    history = commands.add_parser(NAME, help="list the stored runs of a branch")
    history.add_argument("--config", metavar="FILE", help="clawspec.yaml to use")
    history.add_argument(
        "--baseline",
        metavar="SOURCE",
        help="the store to list: dir:PATH, s3://bucket/prefix or github "
        "(default: config baseline, else dir:.clawspec-history)",
    )
    history.add_argument("--branch", metavar="NAME", help="branch to list (default: this one)")
    history.add_argument(
        "--limit",
        type=int,
        default=DEFAULT_LIMIT,
        metavar="N",
        help=f"newest N runs (default {DEFAULT_LIMIT})",
    )
    history.add_argument("--json", action="store_true", help="print the runs as JSON")


def run(args: argparse.Namespace) -> ExitCode:
    """Print the newest `--limit` runs of `--branch` (default: this checkout's) in the store.

    The store is the `baseline` setting (default `dir:.clawspec-history`). A store that cannot
    be read is `HistoryError` (exit 2); an empty store is not an error.
    """
    import json
    import os
    from pathlib import Path

    from clawspec.ci_context import CIContext
    from clawspec.config.loading import resolve_settings
    from clawspec.history.source import run_source
    from clawspec.history.store import HistoryError
    from clawspec.history.stores import DEFAULT_STORE, open_store, source_kind
    from clawspec.text import clean, pluralize

    if args.limit < 1:
        raise UsageError(f"--limit: expected a positive number, found {args.limit}")
    settings, _ = resolve_settings(args.config, Path.cwd(), os.environ, given(args, ["baseline"]))
    spec = settings.baseline or DEFAULT_STORE
    if source_kind(spec) == "file":
        raise HistoryError(f"baseline '{spec}' is a single report file, not a store of runs")
    context = CIContext.from_environ(os.environ)
    store = open_store(spec, settings, context)
    branch = args.branch or run_source(context).branch
    if not branch:  # nothing to list: a usage error, not an empty history
        known = store.branches()
        hint = f" (branches with stored runs: {', '.join(known)})" if known else ""
        raise UsageError(
            f"this run's branch is unknown (no CI variables, not a git checkout): name one "
            f"with --branch{hint}"
        )
    runs = list(reversed(store.runs(branch)))[: args.limit]
    if args.json:
        payload = {
            "store": store.label,
            "branch": branch,
            "runs": [run.model_dump(mode="json") for run in runs],
        }
        print(clean(json.dumps(payload, indent=2)))
        return ExitCode.OK
    if not runs:
        print(f"no stored runs of '{branch}' in {store.label}")
    else:
        print(f"{pluralize(len(runs), 'run')} of '{branch}' in {store.label}, newest first:")
        for stored in runs:
            print(clean(_line(stored)))
    others = [name for name in store.branches() if name != branch]
    if others and not runs:
        print(f"branches with stored runs: {', '.join(others)}")
    return ExitCode.OK


def _line(run: StoredRun) -> str:
    from clawspec.history.store import SHA_CHARS, parse_time
    from clawspec.text import pluralize

    when = parse_time(run.created_at)
    shown = when.strftime("%Y-%m-%d %H:%M UTC") if when else "unknown time    "
    commit = (run.commit or "-")[:SHA_CHARS].ljust(SHA_CHARS)
    event = (run.event or "-").ljust(12)
    totals = run.totals
    counts = ", ".join(
        f"{totals[name]} {name}"
        for name in ("passed", "failed", "errored", "warned", "skipped")
        if totals.get(name)
    )
    summary = f"{pluralize(totals.get('scenarios', 0), 'scenario')}: {counts or 'none'}"
    summary = summary if totals else "-"
    return f"  {shown}  {commit}  {event}  {summary}  {run.location}"
