"""The history store: one interface, and one layout for every place where runs are kept.

Every store keeps runs per branch. The folder stores (`dir:PATH`, `s3://bucket/prefix`) share
this layout, so a folder copied to a bucket (or out of a CI cache) is still a valid store:

    <prefix>/<branch>/<run-timestamp>-<sha>-<run>/clawspec-report.json
    <prefix>/<branch>/index.json

- `<branch>` is the branch name percent-encoded into one path segment (`feature/x` →
  `feature%2Fx`), so one branch never lists another branch's runs;
- `<run-timestamp>` is the run's start in UTC, `20261123T093613Z`: sorting names sorts by time;
- `<sha>` is the first 12 hex digits of the commit (`nocommit` when unknown);
- `<run>` is the start of the run's id: two runs of one commit that start in the same second
  (two jobs saving at once) keep a folder each. Older stores' `<run-timestamp>-<sha>` folders
  are read as well.

The index holds each run's metadata (commit, commit time, event, totals), so listing a branch is
one read and one listing of its folders. The run folders are the truth: a run whose folder
exists but is missing from the index (two saves raced) is read from its report and listed all
the same, and one whose folder is gone (removed by hand) is not listed; each save writes the
index again from what is listed.

The `github` store (workflow artifacts) has no folders of its own; it maps workflow runs onto
the same `StoredRun` records, so baseline choice and trends treat every store alike.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Protocol
from urllib.parse import quote, unquote

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clawspec.errors import ClawSpecError
from clawspec.reports.model import RunReport

REPORT_NAME = "clawspec-report.json"
INDEX_NAME = "index.json"
INDEX_VERSION = 1
SHA_CHARS = 12
RUN_CHARS = 8


class HistoryError(ClawSpecError):
    """A store could not be read or written; the message is safe to print (no credentials)."""


class StoredRun(BaseModel):
    """One stored run: what a listing shows and what baseline choice decides on.

    `created_at` is when the run started (ISO-8601, UTC) and orders runs; `committed_at` is the
    commit's own time when it was known at save time (the fallback for "at or before the
    merge-base" when git history is not available). `location` is where the report is (a path,
    an `s3://` URL or a workflow run's web page), never with credentials.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    branch: str
    key: str = Field(description="'<run-timestamp>-<sha>' (github: the workflow run id).")
    commit: str | None = None
    created_at: str | None = None
    committed_at: str | None = None
    run_id: str | None = Field(None, description="The ClawSpec run id, when known.")
    event: str | None = None
    pull_request: int | None = None
    totals: dict[str, int] = Field(default_factory=dict)
    location: str = ""

    def label(self) -> str:
        """Return 'main @ 1a2b3c4d5e6f, 2026-11-23 09:36 UTC' for messages and tables."""
        commit = (self.commit or "no commit")[:SHA_CHARS]
        when = parse_time(self.created_at)
        shown = when.strftime("%Y-%m-%d %H:%M UTC") if when else "unknown time"
        return f"{self.branch} @ {commit}, {shown}"


class RunStore(Protocol):
    """Where runs are kept. Implementations: `DirStore`/`S3Store` (folder layout), `GitHubStore`.

    `label` names the store in reports and messages (`dir:.clawspec-history`,
    `s3://bucket/prefix`, `github`) and never contains a credential. Every method raises
    `HistoryError` (never another exception) when the store cannot be used.
    """

    label: str

    def branches(self) -> list[str]:
        """Return the branches with stored runs (empty when the store cannot list them)."""
        ...

    def runs(self, branch: str) -> list[StoredRun]:
        """Return the branch's stored runs, oldest first (empty when there are none)."""
        ...

    def load(self, run: StoredRun) -> RunReport:
        """Return the report of one run listed by `runs`."""
        ...

    def save(
        self,
        report: RunReport,
        *,
        committed_at: str | None = None,
    ) -> StoredRun:
        """Store a finished report under its source branch (secrets masked); return the record."""
        ...


class Blobs(Protocol):
    """The few operations the folder layout needs from a file system or a bucket."""

    label: str

    def read(self, key: str) -> bytes | None:
        """Return the object's bytes, or None when it does not exist."""
        ...

    def write(self, key: str, data: bytes) -> None:
        """Create or replace the object (readers never see half of it)."""
        ...

    def children(self, key: str) -> list[str]:
        """Return the names of the immediate sub-folders of `key` ('' = the prefix itself)."""
        ...

    def location(self, key: str) -> str:
        """Return where the object is, for people (path or URL, no credentials)."""
        ...


class _Index(BaseModel):
    model_config = ConfigDict(extra="ignore")

    version: int = INDEX_VERSION
    runs: list[StoredRun] = Field(default_factory=list)


def branch_segment(branch: str) -> str:
    """Return the branch as one path segment (`feature/x` → `feature%2Fx`)."""
    return quote(branch, safe="")


_KEY_TIME = "%Y%m%dT%H%M%SZ"  # a run folder's start time, in UTC


def run_key(report: RunReport) -> str:
    """Return the run's folder name: `<run-timestamp>-<sha>` (see the module docstring)."""
    started = parse_time(report.started_at) or datetime.now(UTC)
    commit = report.source.commit if report.source else None
    sha = (commit or "nocommit")[:SHA_CHARS]
    run = "".join(c for c in report.run_id if c.isalnum())[:RUN_CHARS] or "run"
    return f"{started.astimezone(UTC).strftime(_KEY_TIME)}-{sha}-{run}"


def _key_time(key: str) -> str | None:
    """The start time a run folder's name holds (`run_key`), ISO-8601; None if it holds none."""
    try:
        return datetime.strptime(key.split("-", 1)[0], _KEY_TIME).replace(tzinfo=UTC).isoformat()
    except ValueError:
        return None


def parse_time(text: str | None) -> datetime | None:
    """Parse an ISO-8601 time (a naive one counts as UTC); None when absent or unreadable."""
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def parse_report(data: bytes, where: str) -> RunReport:
    """Read a stored JSON report; a file that is not one is a `HistoryError` naming `where`."""
    try:
        return RunReport.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field = ".".join(map(str, first["loc"])) or "(top level)"
        raise HistoryError(
            f"{where}: not a ClawSpec JSON report this version can read "
            f"({exc.error_count()} problem(s); first: {field}: {first['msg']})"
        ) from None


def run_record(
    report: RunReport, branch: str, key: str, location: str, committed_at: str | None = None
) -> StoredRun:
    """Describe a report as the index stores it."""
    source = report.source
    totals = report.totals.model_dump()
    return StoredRun(
        branch=branch,
        key=key,
        commit=source.commit if source else None,
        created_at=report.started_at,
        committed_at=committed_at,
        run_id=report.run_id,
        event=source.event if source else None,
        pull_request=source.pull_request if source else None,
        totals={name: int(value) for name, value in totals.items()},
        location=location,
    )


class FolderStore:
    """The folder layout on top of any `Blobs` (a local folder, an S3 prefix)."""

    def __init__(self, blobs: Blobs) -> None:
        self.blobs = blobs
        self.label = blobs.label

    def branches(self) -> list[str]:
        return sorted(unquote(name) for name in self.blobs.children(""))

    def runs(self, branch: str) -> list[StoredRun]:
        return self._listed(branch, {})

    def _listed(self, branch: str, known: dict[str, StoredRun]) -> list[StoredRun]:
        """The runs of `branch` its folders hold, and the `known` records (a run just saved:
        taken as they are, not read back from their reports)."""
        segment = branch_segment(branch)
        folders = self.blobs.children(segment)
        present = set(folders)
        # An index entry whose folder is gone (removed by hand) is not a run any more.
        indexed = {run.key: run for run in self._index(segment).runs if run.key in present}
        indexed.update(known)
        for key in folders:
            if key in indexed:
                continue
            # In the folders but not the index: a save that raced another one. Read it.
            report_key = f"{segment}/{key}/{REPORT_NAME}"
            data = self.blobs.read(report_key)
            if data is None:
                continue  # a folder without a report (a save still in progress)
            location = self.blobs.location(report_key)
            try:
                report = parse_report(data, location)
            except HistoryError:
                # Listed by its folder's name alone: loading it fails again with the reason,
                # and the baseline choice skips it for an older run (as a broken report the
                # index lists). One bad folder must not make the whole store unreadable.
                indexed[key] = StoredRun(
                    branch=branch, key=key, created_at=_key_time(key), location=location
                )
                continue
            indexed[key] = run_record(report, branch, key, location)
        return sorted(indexed.values(), key=lambda run: (run.created_at or "", run.key))

    def load(self, run: StoredRun) -> RunReport:
        key = f"{branch_segment(run.branch)}/{run.key}/{REPORT_NAME}"
        data = self.blobs.read(key)
        if data is None:
            raise HistoryError(f"{self.blobs.location(key)}: stored report is missing")
        return parse_report(data, self.blobs.location(key))

    def save(
        self,
        report: RunReport,
        *,
        committed_at: str | None = None,
    ) -> StoredRun:
        from clawspec.reports.json_report import render_json

        branch = report.source.branch if report.source else None
        if not branch:
            raise HistoryError(
                "cannot store this run: its branch is unknown (no CI variables and not a git "
                "checkout); run inside a git checkout or set the CI branch variables"
            )
        segment, key = branch_segment(branch), run_key(report)
        report_key = f"{segment}/{key}/{REPORT_NAME}"
        # The report first, the index second: a crash in between leaves a run the listing
        # still finds (from its folder), never an index entry without a report.
        self.blobs.write(report_key, render_json(report).encode("utf-8"))
        record = run_record(report, branch, key, self.blobs.location(report_key), committed_at)
        # The index is written again from what is listed (this run included): a missing or
        # damaged one is rebuilt, and runs whose folders are gone leave it.
        runs = self._listed(branch, {key: record})  # this run's report is not read back
        index = _Index(runs=runs)
        self.blobs.write(f"{segment}/{INDEX_NAME}", _dump(index.model_dump(mode="json")))
        return record

    def _index(self, segment: str) -> _Index:
        data = self.blobs.read(f"{segment}/{INDEX_NAME}")
        if data is None:
            return _Index()
        try:
            return _Index.model_validate_json(data)
        except ValidationError:
            # A damaged index is only a cache: the run folders are listed instead.
            return _Index()


def _dump(data: Mapping[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
