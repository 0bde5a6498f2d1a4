"""Open the store a `--baseline SOURCE` names, and save a finished run into it.

SOURCE is one of (config `baseline`, env `CLAWSPEC_BASELINE`, flag `--baseline`, input `baseline`):
- a plain path: one JSON report file (`clawspec-report.json` of an earlier run);
- `dir:PATH`: a history folder (relative paths resolve against the current folder);
- `s3://bucket/prefix`: a history in S3 or an S3-compatible store;
- `github`: the report artifacts of earlier runs of this workflow.
`--save-baseline` stores into the same SOURCE; without a SOURCE it uses `dir:.clawspec-history`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from clawspec.ci_context import CIContext
from clawspec.config.settings import Settings
from clawspec.history.git import Git
from clawspec.history.store import HistoryError, RunStore, StoredRun

DEFAULT_STORE = "dir:.clawspec-history"
SourceKind = Literal["file", "dir", "s3", "github"]


def source_kind(spec: str) -> SourceKind:
    """Say what a SOURCE names: a report `file`, or a `dir`, `s3` or `github` store."""
    text = spec.strip()
    if text.startswith("dir:"):
        return "dir"
    if text.startswith("s3://"):
        return "s3"
    if text == "github":
        return "github"
    if text.startswith("s3:") or "://" in text:
        raise HistoryError(
            f"baseline '{spec}': expected a report file, dir:PATH, s3://bucket/prefix or github"
        )
    return "file"


def open_store(
    spec: str,
    settings: Settings,
    context: CIContext,
    *,
    base: Path | None = None,
    http: Any = None,
) -> RunStore:
    """Return the store SOURCE names (not for report files: see `source_kind`).

    `context` is the run's CI context, which the github store reads its repository, API URL and
    workflow from; `base` is the folder relative `dir:` paths resolve against (default: the
    workspace root, else the current folder: the settings' own paths are absolute already, so
    it is the default store's); `http` is an optional `requests.Session` for the github store.
    """
    kind = source_kind(spec)
    text = spec.strip()
    if kind == "dir":
        from clawspec.history.dirstore import dir_store

        return dir_store(text.removeprefix("dir:"), base or settings.workspace or Path.cwd())
    if kind == "s3":
        from clawspec.history.s3store import s3_store

        return s3_store(text, settings.history.s3_endpoint_url)
    if kind == "github":
        from clawspec.history.github import GitHubStore

        token = settings.github_token.get_secret_value() if settings.github_token else None
        return GitHubStore(
            context,
            token,
            artifact=settings.history.github_artifact,
            workflow=settings.history.github_workflow,
            http=http,
        )
    raise HistoryError(f"baseline '{spec}' is a report file, not a store of runs")


def save_report(
    report: Any,
    settings: Settings,
    context: CIContext,
    *,
    git: Git | None = None,
    base: Path | None = None,
) -> str:
    """Store a finished report where `baseline` points (`--save-baseline`); return what happened.

    A report file SOURCE is overwritten with this report; `github` stores nothing here (the
    workflow uploads the artifact). Raises `HistoryError` when the store cannot be written.
    """
    spec = settings.baseline or DEFAULT_STORE
    kind = source_kind(spec)
    if kind == "file":
        from clawspec.reports.json_report import write_json

        path = Path(spec).expanduser()
        path = path if path.is_absolute() else (base or settings.workspace or Path.cwd()) / path
        try:
            write_json(report, path)
        except OSError as exc:
            raise HistoryError(f"{path}: cannot write the baseline: {exc.strerror}") from None
        return f"baseline saved: {path}"
    if kind == "github":
        return (
            "baseline: the github store keeps this run once the workflow uploads the report "
            f"folder as artifact '{settings.history.github_artifact}'"
        )
    store = open_store(spec, settings, context, base=base)
    commit = report.source.commit if report.source else None
    committed_at = (git or Git()).commit_time(commit) if commit else None
    record: StoredRun = store.save(report, committed_at=committed_at)
    return f"baseline saved: {record.location}"
