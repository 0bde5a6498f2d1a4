"""The few read-only git questions history needs, each bounded and never failing.

Every call runs `git` with a timeout, no prompt and no network (nothing here fetches). Any
failure — git missing, not a repository, an unknown commit, a timeout — is an answer of None,
so a run outside a git checkout simply has less information, never an error.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

TIMEOUT_S = 5.0


class Git:
    """Ask git about the repository that contains `cwd`."""

    def __init__(self, cwd: Path | None = None, timeout_s: float = TIMEOUT_S) -> None:
        self.cwd = cwd or Path.cwd()
        self.timeout_s = timeout_s

    @staticmethod
    def installed() -> bool:
        """Whether a `git` command is on PATH (without it every question has no answer)."""
        return shutil.which("git") is not None

    def _run(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str] | None:
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
        try:
            return subprocess.run(
                # safe.directory: in the container action the checkout belongs to the runner's
                # user, not root, and git would refuse to read it ("dubious ownership").
                ["git", "-c", "safe.directory=*", *args],
                cwd=self.cwd,
                capture_output=True,
                text=True,
                input=stdin,
                timeout=self.timeout_s,
                env=env,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None

    def _out(self, *args: str) -> str | None:
        done = self._run(*args)
        if done is None or done.returncode != 0:
            return None
        return done.stdout.strip() or None

    def resolve(self, ref: str) -> str | None:
        """Return the full commit id of `ref`, or None when it is not in this repository."""
        return self._out("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")

    def head(self) -> str | None:
        """Return the checked-out commit."""
        return self.resolve("HEAD")

    def branch(self) -> str | None:
        """Return the checked-out branch (None on a detached HEAD)."""
        name = self._out("rev-parse", "--abbrev-ref", "HEAD")
        return None if name in (None, "HEAD") else name

    def is_shallow(self) -> bool | None:
        """True for a shallow clone (ancestry answers cannot be trusted), None outside a repo."""
        answer = self._out("rev-parse", "--is-shallow-repository")
        return None if answer is None else answer == "true"

    def merge_base(self, one: str, other: str) -> str | None:
        """Return the best common ancestor of two commits."""
        return self._out("merge-base", one, other)

    def ancestors(self, ref: str) -> set[str] | None:
        """Return `ref` and every commit reachable from it (one call for any number of checks)."""
        done = self._run("rev-list", ref, "--")
        if done is None or done.returncode != 0:
            return None
        return set(done.stdout.split())

    def existing(self, commits: list[str]) -> set[str]:
        """Return which of `commits` (full ids) this repository has."""
        if not commits:
            return set()
        done = self._run(
            "cat-file", "--batch-check=%(objectname) %(objecttype)", stdin="\n".join(commits) + "\n"
        )
        if done is None or done.returncode != 0:
            return set()
        return {
            parts[0]
            for parts in (line.split() for line in done.stdout.splitlines())
            if len(parts) == 2 and parts[1] == "commit"
        }

    def commit_time(self, ref: str) -> str | None:
        """Return the committer time of `ref` (ISO-8601), None when the commit is not here."""
        return self._out("show", "-s", "--format=%cI", f"{ref}^{{commit}}", "--")
