"""`clawspec history`: list the stored runs of a branch, newest first."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from clawspec.config import Settings
from clawspec.errors import ExitCode
from clawspec.history.source import run_source
from clawspec.history.store import SHA_CHARS, HistoryError, StoredRun, parse_time
from clawspec.history.stores import DEFAULT_STORE, open_store, source_kind
from clawspec.text import clean, pluralize

DEFAULT_LIMIT = 20


def history(
    settings: Settings,
    environ: Mapping[str, str],
    *,
    branch: str | None = None,
    limit: int = DEFAULT_LIMIT,
    as_json: bool = False,
    out: TextIO | None = None,
    base: Path | None = None,
) -> ExitCode:
    """Print the newest `limit` runs of `branch` (default: this checkout's) in the baseline store.

    The store is `settings.baseline` (default `dir:.clawspec-history`). Raises `HistoryError`
    (exit 2) when the store cannot be read; an empty store is not an error.
    """
    out = out or sys.stdout
    spec = settings.baseline or DEFAULT_STORE
    if source_kind(spec) == "file":
        raise HistoryError(f"baseline '{spec}' is a single report file, not a store of runs")
    store = open_store(spec, settings, environ, base=base)
    branch = branch or run_source(environ).branch
    runs = list(reversed(store.runs(branch)))[:limit] if branch else []
    secrets = settings.secret_values()
    if as_json:
        payload = {
            "store": store.label,
            "branch": branch,
            "runs": [run.model_dump(mode="json") for run in runs],
        }
        print(clean(json.dumps(payload, indent=2), secrets), file=out)
        return ExitCode.OK
    if not branch:
        print("this run's branch is unknown: name one with --branch", file=out)
    elif not runs:
        print(f"no stored runs of '{branch}' in {store.label}", file=out)
    else:
        print(
            f"{pluralize(len(runs), 'run')} of '{branch}' in {store.label}, newest first:", file=out
        )
        for run in runs:
            print(clean(_line(run), secrets), file=out)
    others = [name for name in store.branches() if name != branch]
    if others and not runs:
        print(f"branches with stored runs: {', '.join(others)}", file=out)
    return ExitCode.OK


def _line(run: StoredRun) -> str:
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
