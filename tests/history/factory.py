"""Reports of past runs and a real git repository with a base branch and a PR branch."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from clawspec.reports.model import RunReport, RunSource
from tests.reports.factory import report, scenario


def past_run(
    branch: str | None,
    commit: str | None,
    started_at: str,
    run_id: str = "run-1",
    *,
    failing: bool = False,
    event: str | None = "push",
) -> RunReport:
    """A small finished run of `branch` at `commit`."""
    status = "fail" if failing else "pass"
    base = report(scenario("smoke", "pass"), scenario("tools", status))
    source = RunSource(commit=commit, branch=branch, event=event, ci="github")
    return base.model_copy(update={"run_id": run_id, "started_at": started_at, "source": source})


def git(cwd: Path, *args: str, when: str | None = None) -> str:
    """Run git in `cwd` with a fixed identity (and commit time `when`); return stdout."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    if when:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@dataclass(frozen=True)
class PrRepo:
    """main: m1 → m2 (PR branches here) → m3 → m4; feature: m2 → f1 → f2 (the PR head)."""

    path: Path
    m1: str
    m2: str
    m3: str
    m4: str
    f1: str
    f2: str


def pr_repo(root: Path) -> PrRepo:
    """Create the repository of `PrRepo` with commit times one hour apart, f1/f2 after m4."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")

    def commit(name: str, hour: int) -> str:
        (root / f"{name}.txt").write_text(name, encoding="utf-8")
        git(root, "add", f"{name}.txt")
        git(root, "commit", "-q", "-m", name, when=f"2026-11-20T{hour:02d}:00:00+00:00")
        return git(root, "rev-parse", "HEAD")

    m1, m2 = commit("m1", 1), commit("m2", 2)
    git(root, "checkout", "-q", "-b", "feature")
    git(root, "checkout", "-q", "main")
    m3, m4 = commit("m3", 3), commit("m4", 4)
    git(root, "checkout", "-q", "feature")
    f1, f2 = commit("f1", 5), commit("f2", 6)
    # CI checkouts know the base branch as origin/<base>: give this repository the same ref.
    git(root, "update-ref", "refs/remotes/origin/main", m4)
    return PrRepo(root, m1, m2, m3, m4, f1, f2)
