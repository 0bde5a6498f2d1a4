"""Which commit `changed_since` counts changes from, and the files changed since then.

`changed_since` is a git ref (a branch, tag or commit), or `auto`:
- in a pull/merge request, its merge-base with the base branch, found the way the baseline
  choice finds it (clawspec/history/baseline.py: GitLab's `CI_MERGE_REQUEST_DIFF_BASE_SHA`, else
  `git merge-base HEAD origin/<base>`); from HEAD, so GitHub's merge commit gives the base
  commit it merged and the diff holds only the pull request's changes;
- anywhere else (a push, a schedule, a manual run) nothing: every scenario runs.
A ref is taken from its merge-base with HEAD (the ref itself when it is an ancestor, as a
commit usually is), so a branch that moved on does not count its own changes as this one's.

A ref that cannot be resolved (a shallow clone without the history, an unknown name, no git
checkout, no git installed) is no error: every scenario runs and `Unresolved.reason` says why
and what fixes it.
Listing the changes of a resolved commit is the one git failure that stops the run
(`ChangeListError`, exit 2): it should not happen, and running everything would hide it.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from clawspec.ci_context import CIContext
from clawspec.errors import UsageError
from clawspec.history.git import Git

AUTO = "auto"
SHORT = 7  # characters of a commit id shown
LIST_TIMEOUT_S = 120.0  # a diff of a large checkout against an old commit takes a while
HISTORY_FIX = (
    "check out the history: `fetch-depth: 0` for actions/checkout, `GIT_DEPTH: 0` on GitLab"
)


class ChangeListError(UsageError):
    """git could not list the changes since a resolved commit."""


@dataclass(frozen=True)
class Since:
    """The commit changes are counted from."""

    ref: str  # as asked: auto, origin/main, a commit
    commit: str  # its full id

    @property
    def short(self) -> str:
        return self.commit[:SHORT]


@dataclass(frozen=True)
class Unresolved:
    """No commit to count from: every scenario runs. `reason` is ready to print."""

    ref: str
    reason: str
    warning: bool  # a problem to fix (no history, unknown ref), not a push with `auto`


def resolve_since(ref: str, context: CIContext, git: Git) -> Since | Unresolved:
    """Turn `changed_since` into the commit to count changes from (see the module's docstring)."""
    ref = ref.strip()
    if not git.installed():
        why = f"--changed-since {ref}: git is not installed (not on PATH); every scenario runs"
        return Unresolved(ref, why, True)
    if git.head() is None:
        why = f"--changed-since {ref}: {git.cwd} is not in a git checkout; every scenario runs"
        return Unresolved(ref, why, True)
    if ref == AUTO:
        return _auto(context, git)
    commit = git.resolve(ref)
    if commit is None:
        return Unresolved(ref, _missing(f"'{ref}'", git), True)
    base = git.merge_base(commit, "HEAD")
    if base is None and git.is_shallow():
        return Unresolved(ref, _missing(f"the merge-base of '{ref}' and HEAD", git), True)
    return Since(ref, base or commit)


def _auto(context: CIContext, git: Git) -> Since | Unresolved:
    if not context.is_pull_request:
        event = f" ({context.event})" if context.event else ""
        return Unresolved(
            AUTO,
            f"--changed-since auto: not a pull or merge request{event}; every scenario runs",
            False,
        )
    from clawspec.history.baseline import pull_request_merge_base
    from clawspec.history.source import run_source

    source = run_source(context, None, git)
    head = git.head()
    found = pull_request_merge_base(source.model_copy(update={"commit": head}), context, git)
    commit = git.resolve(found) if found else None
    if commit is None:
        what = f"this pull request's merge-base with '{context.base_branch}'"
        if found:
            what += f" ({found[:SHORT]})"
        return Unresolved(AUTO, _missing(what, git), True)
    return Since(AUTO, commit)


def _missing(what: str, git: Git) -> str:
    if git.is_shallow():
        return (
            f"--changed-since: no history to find {what} (a shallow clone); every scenario "
            f"runs; {HISTORY_FIX}"
        )
    return (
        f"--changed-since: {what} is not in this repository; every scenario runs; fetch it, "
        f"or {HISTORY_FIX}"
    )


@dataclass(frozen=True)
class ChangedFiles:
    """Files changed between a commit and the working tree: added, modified, deleted, both
    sides of a rename, committed or not, untracked ones included. Absolute, '/'-separated."""

    since: Since
    root: Path  # the checkout's top folder
    paths: frozenset[str]


def changed_files(since: Since, git: Git) -> ChangedFiles:
    """List what changed between `since` and the working tree (raise ChangeListError)."""
    top = _git(git.cwd, "rev-parse", "--show-toplevel").strip()
    root = Path(top).resolve()
    diff = _git(root, "diff", "--name-status", "-z", "-M", "--no-ext-diff", since.commit, "--")
    untracked = _git(root, "ls-files", "-z", "--others", "--exclude-standard")
    relative = set(_diff_paths(diff)) | {p for p in untracked.split("\0") if p}
    return ChangedFiles(since, root, frozenset((root / p).as_posix() for p in relative))


def _diff_paths(output: str) -> list[str]:
    """Every path of `git diff --name-status -z`: one after a status, two after R and C."""
    fields = output.split("\0")
    paths: list[str] = []
    at = 0
    while at < len(fields) and fields[at]:
        status = fields[at]
        count = 2 if status[:1] in ("R", "C") else 1
        paths += fields[at + 1 : at + 1 + count]
        at += 1 + count
    return paths


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    command = ["git", "-c", "safe.directory=*", "-c", "core.quotepath=off", *args]
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=LIST_TIMEOUT_S,
            env=env,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise ChangeListError(
            f"--changed-since: cannot run `git {' '.join(args[:2])}`: {exc}"
        ) from None
    if done.returncode != 0:
        why = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "no message"
        raise ChangeListError(
            f"--changed-since: `git {' '.join(args[:2])}` failed in {cwd} (exit "
            f"{done.returncode}): {why}"
        )
    return done.stdout
