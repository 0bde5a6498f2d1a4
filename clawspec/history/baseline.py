"""Which earlier run a run is compared with, and the recent runs its trends come from.

The rule:
- a pull/merge request (the run has a base branch) compares with the latest stored run of the
  BASE branch at or before the PR's merge-base: not an earlier push of the same PR, and not a
  newer base commit the PR has not merged;
- any other run (push, schedule) compares with the previous stored run of its own branch.

"At or before the merge-base" is decided per stored run, best evidence first:
1. git ancestry: the run's commit is the merge-base or an ancestor of it
   (`git merge-base --is-ancestor`). Needs a checkout with history: `fetch-depth: 0` in
   actions/checkout, `GIT_DEPTH: 0` on GitLab. The merge-base is GitLab's
   `CI_MERGE_REQUEST_DIFF_BASE_SHA` when set, else `git merge-base <PR head> origin/<base>`.
2. commit times, when ancestry cannot be checked (shallow clone, commit not fetched): the run's
   commit time is at or before the merge-base's commit time (or the PR head's, which no merged
   base commit can postdate).
3. neither known for any run: the latest run of the base branch is used, with a note saying so.
Every lookup answers `Baseline` or `NoBaseline(reason)`; store and network problems become the
reason, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clawspec.ci_context import CIContext
from clawspec.config.settings import Settings
from clawspec.history.git import Git
from clawspec.history.source import is_pull_request
from clawspec.history.store import (
    SHA_CHARS,
    HistoryError,
    RunStore,
    StoredRun,
    parse_report,
    parse_time,
)
from clawspec.history.stores import open_store, source_kind
from clawspec.reports.model import BaselineRef, RunReport, RunSource

MAX_LOAD_ATTEMPTS = 5  # runs tried newest first when a report is missing or its artifact expired


@dataclass(frozen=True)
class Baseline:
    """The run to compare with: its report, the reference for `RunReport.baseline`, and notes
    (runs passed over, e.g. an expired artifact) worth a line in the output."""

    report: RunReport
    ref: BaselineRef
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class NoBaseline:
    """No baseline: `reason` says why, ready to print ("no stored run of 'main' in ...")."""

    reason: str
    notes: tuple[str, ...] = ()
    # The store itself did not answer (unreachable, forbidden, silent): not asked again for
    # trends in the same run (a silent store would cost its whole wait once more).
    store_down: bool = False


@dataclass(frozen=True)
class Candidates:
    """Stored runs allowed as the baseline, newest first, and the rule that chose them."""

    runs: list[StoredRun]
    rule: str
    notes: list[str] = field(default_factory=list)


def candidates(
    runs: list[StoredRun],
    source: RunSource,
    context: CIContext,
    git: Git,
    *,
    current_run_id: str | None = None,
) -> Candidates:
    """Return which of a branch's stored runs (oldest first) may be this run's baseline."""
    earlier = [run for run in runs if not current_run_id or run.run_id != current_run_id]
    newest_first = list(reversed(earlier))
    if not is_pull_request(source):
        return Candidates(newest_first, f"previous run of '{source.branch}'")
    base = source.base_branch
    merge_base = pull_request_merge_base(source, context, git)
    shown = merge_base[:SHA_CHARS] if merge_base else None
    ancestry = _ancestry(merge_base, newest_first, git)
    can_trace = ancestry is not None
    limit = _reference_time(merge_base, source, context, git)
    verdicts = [(run, _at_or_before(run, merge_base, ancestry, limit)) for run in newest_first]
    if verdicts and all(verdict is None for _, verdict in verdicts):
        note = (
            f"could not check which runs of '{base}' are at or before this pull request's "
            "merge-base (no git history: check out with fetch-depth: 0); used the latest one"
        )
        return Candidates(newest_first, f"latest run of '{base}'", [note])
    chosen = [run for run, verdict in verdicts if verdict]
    how = "git ancestry" if can_trace else "commit times"
    at = f"merge-base {shown}" if shown else "the pull request's head commit"
    return Candidates(chosen, f"latest run of '{base}' at or before the {at} ({how})")


def pull_request_merge_base(source: RunSource, context: CIContext, git: Git) -> str | None:
    """A pull request's merge-base with its base branch (None: not found): GitLab's
    `CI_MERGE_REQUEST_DIFF_BASE_SHA`, else git's merge-base of `source.commit` and the base."""
    hint = context.gitlab.merge_base  # GitLab computes it for us
    if hint:
        return hint
    if not source.commit:
        return None
    payload_base = context.github.base_sha  # the PR's base commit in GitHub's event payload
    for ref in (f"origin/{source.base_branch}", str(source.base_branch), payload_base):
        if ref and git.resolve(ref):
            found = git.merge_base(source.commit, ref)
            if found:
                return found
    return None


def _reference_time(
    merge_base: str | None, source: RunSource, context: CIContext, git: Git
) -> datetime | None:
    for ref in (merge_base, source.commit):
        when = parse_time(git.commit_time(ref)) if ref else None
        if when:
            return when
    return parse_time(context.gitlab.commit_time)  # GitLab: the head commit's time


@dataclass(frozen=True)
class _Ancestry:
    """The merge-base's ancestors, and which stored commits git knows at all."""

    ancestors: set[str]
    known: set[str]


def _ancestry(merge_base: str | None, runs: list[StoredRun], git: Git) -> _Ancestry | None:
    """Read ancestry once for all runs (two git calls), or None when it cannot be trusted."""
    if not merge_base or git.is_shallow() is not False:
        return None
    ancestors = git.ancestors(merge_base)
    if ancestors is None:
        return None
    commits = sorted({run.commit for run in runs if run.commit})
    return _Ancestry(ancestors, git.existing(commits))


def _at_or_before(
    run: StoredRun, merge_base: str | None, ancestry: _Ancestry | None, limit: datetime | None
) -> bool | None:
    if run.commit and merge_base and run.commit.startswith(merge_base[:SHA_CHARS]):
        return True
    if run.commit and ancestry is not None and run.commit in ancestry.known:
        return run.commit in ancestry.ancestors
    committed = parse_time(run.committed_at)  # a commit git does not have: compare times
    if committed and limit:
        return committed <= limit
    return None


def find_baseline(
    spec: str | None,
    source: RunSource | None,
    settings: Settings,
    context: CIContext,
    *,
    current_run_id: str | None = None,
    git: Git | None = None,
    http: Any = None,
) -> Baseline | NoBaseline:
    """Return the baseline SOURCE `spec` gives for a run from `source`, or why there is none.

    `spec` is `settings.baseline` normally: a report file, `dir:PATH`, `s3://...` or `github`.
    `context` is the run's CI context (the merge-base hints; the `github` store's repository).
    `current_run_id` keeps the run itself out (when it was saved before the comparison).
    Never raises for a missing, empty, unreachable or forbidden store.
    """
    if not spec:
        return NoBaseline("no baseline configured (set --baseline)")
    try:
        if source_kind(spec) == "file":
            return _from_file(spec)
        store = open_store(spec, settings, context, http=http)
        source = source or RunSource()
        branch = source.base_branch if is_pull_request(source) else source.branch
        if not branch:
            return NoBaseline(
                "cannot tell this run's branch (no CI variables and not a git checkout), so "
                f"no run in {store.label} can be chosen; pass a report file as --baseline"
            )
        runs = store.runs(branch)
    except HistoryError as exc:
        return NoBaseline(f"baseline '{spec}' unavailable: {exc}", store_down=True)
    if not runs:
        return NoBaseline(f"no stored run of '{branch}' in {store.label}")
    chosen = candidates(runs, source, context, git or Git(), current_run_id=current_run_id)
    if not chosen.runs:
        return NoBaseline(
            f"none of the {len(runs)} stored run(s) of '{branch}' in {store.label} qualifies "
            f"as the {chosen.rule}",
            tuple(chosen.notes),
        )
    return _load_first(store, chosen)


def _load_first(store: RunStore, chosen: Candidates) -> Baseline | NoBaseline:
    notes = list(chosen.notes)
    for run in chosen.runs[:MAX_LOAD_ATTEMPTS]:
        try:
            report = store.load(run)
        except HistoryError as exc:
            notes.append(f"skipped {run.label()}: {exc}")
            continue
        ref = BaselineRef(
            source=store.label,
            branch=run.branch,
            commit=run.commit or (report.source.commit if report.source else None),
            created_at=run.created_at or report.started_at,
            run_id=report.run_id,
            location=run.location or None,
        )
        notes.append(f"baseline: {chosen.rule}: {run.label()}")
        if ahead := _dated_ahead(run):
            notes.append(ahead)
        return Baseline(report, ref, tuple(notes))
    return NoBaseline(
        f"no readable report among the newest {min(len(chosen.runs), MAX_LOAD_ATTEMPTS)} "
        f"candidate run(s) in {store.label}",
        tuple(notes),
    )


# A stored run starting this much later than now was saved by a machine whose clock is ahead.
CLOCK_AHEAD_S = 300


def _dated_ahead(run: StoredRun, now: datetime | None = None) -> str | None:
    """A warning when `run` is dated in the future: runs are ordered by their start, so it
    stays the newest of its branch (every later run's baseline) until that time comes."""
    started = parse_time(run.created_at)
    now = now or datetime.now(UTC)
    if started is None or (started - now).total_seconds() <= CLOCK_AHEAD_S:
        return None
    return (
        f"the baseline {run.label()} is dated later than now ({now:%Y-%m-%d %H:%M} "
        "UTC): the clock of the machine that saved it was ahead, and it stays the newest run of "
        "its branch until then; remove it from the store if later runs should be compared "
        "with each other"
    )


def _from_file(spec: str) -> Baseline | NoBaseline:
    path = Path(spec.strip()).expanduser()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return NoBaseline(f"baseline file '{spec}' does not exist")
    except OSError as exc:
        return NoBaseline(f"baseline file '{spec}' cannot be read: {exc.strerror}")
    try:
        report = parse_report(data, str(path))
    except HistoryError as exc:
        return NoBaseline(str(exc))
    source = report.source or RunSource()
    ref = BaselineRef(
        source="file",
        branch=source.branch,
        commit=source.commit,
        created_at=report.started_at,
        run_id=report.run_id,
        location=str(path),
    )
    return Baseline(report, ref)


@dataclass(frozen=True)
class RecentRuns:
    """The last stored runs of a branch, oldest first, with their reports (for trends)."""

    runs: list[tuple[StoredRun, RunReport]]
    notes: tuple[str, ...] = ()


def recent_runs(
    spec: str | None,
    branch: str | None,
    limit: int,
    settings: Settings,
    context: CIContext,
    *,
    http: Any = None,
    until: str | None = None,
) -> RecentRuns:
    """Return up to `limit` most recent stored runs of `branch`, oldest first; with `until`
    (a start time), none started after it (a PR's trend ends at its baseline).

    A report file SOURCE gives just that report. Unreadable runs are left out with a note;
    an unavailable store gives no runs and a note. Never raises.
    """
    if not spec or limit <= 0:
        return RecentRuns([])
    try:
        if source_kind(spec) == "file":
            found = _from_file(spec)
            if isinstance(found, NoBaseline):
                return RecentRuns([], (found.reason,))
            run = StoredRun(
                branch=found.ref.branch or "",
                key="file",
                commit=found.ref.commit,
                created_at=found.ref.created_at,
                run_id=found.ref.run_id,
                location=found.ref.location or "",
            )
            return RecentRuns([(run, found.report)])
        if not branch:
            return RecentRuns([], ("trends: this run's branch is unknown",))
        store = open_store(spec, settings, context, http=http)
        stored = store.runs(branch)
        last = parse_time(until)
        if last is not None:
            stored = [r for r in stored if (t := parse_time(r.created_at)) is None or t <= last]
        stored = stored[-limit:]
    except HistoryError as exc:
        return RecentRuns([], (f"trends: '{spec}' unavailable: {exc}",))
    loaded, notes = [], []
    for run in stored:
        try:
            loaded.append((run, store.load(run)))
        except HistoryError as exc:
            notes.append(f"trends: skipped {run.label()}: {exc}")
    return RecentRuns(loaded, tuple(notes))
