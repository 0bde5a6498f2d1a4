"""Which stored run a pull request compares with: the base branch at or before the merge-base."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawspec.ci_context import CIContext
from clawspec.config.settings import Settings
from clawspec.history.baseline import Baseline, NoBaseline, find_baseline
from clawspec.history.dirstore import dir_store
from clawspec.history.git import Git
from clawspec.reports.model import RunSource
from tests.history.factory import PrRepo, git, past_run, pr_repo

NO_CI = CIContext.from_environ({})  # a run outside CI


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PrRepo:
    monkeypatch.chdir(tmp_path)  # dir:hist resolves against the current folder
    return pr_repo(tmp_path / "repo")


def _store_runs(root: Path, repo: PrRepo, commits: dict[str, str]) -> None:
    """Store one run of main per commit name (run id = the name), in commit order."""
    store = dir_store("hist", root)
    for hour, (name, commit) in enumerate(commits.items(), start=1):
        run = past_run("main", commit, f"2026-11-21T{hour:02d}:00:00+00:00", name)
        committed = git(repo.path, "show", "-s", "--format=%cI", commit)
        store.save(run, committed_at=committed)
    # The PR's own earlier push is stored too, and must never be its baseline.
    store.save(past_run("feature", repo.f1, "2026-11-21T09:00:00+00:00", "pr-push"))


def _pr(repo: PrRepo, head: str | None = None) -> RunSource:
    return RunSource(
        commit=head or repo.f2, branch="feature", base_branch="main", pull_request=5, ci="github"
    )


def test_pr_uses_the_latest_base_run_at_or_before_the_merge_base(
    tmp_path: Path, repo: PrRepo
) -> None:
    _store_runs(tmp_path, repo, {"m1": repo.m1, "m2": repo.m2, "m3": repo.m3, "m4": repo.m4})
    found = find_baseline("dir:hist", _pr(repo), Settings(), NO_CI, git=Git(repo.path))
    assert isinstance(found, Baseline)
    assert found.report.run_id == "m2"  # m3 and m4 are newer base commits the PR has not merged
    assert found.ref.commit == repo.m2
    assert found.notes[-1].startswith(
        f"baseline: latest run of 'main' at or before the merge-base {repo.m2[:12]} (git ancestry)"
    )


def test_pr_without_a_run_at_the_merge_base_takes_the_one_before(
    tmp_path: Path, repo: PrRepo
) -> None:
    _store_runs(tmp_path, repo, {"m1": repo.m1, "m3": repo.m3, "m4": repo.m4})
    found = find_baseline("dir:hist", _pr(repo), Settings(), NO_CI, git=Git(repo.path))
    assert isinstance(found, Baseline) and found.report.run_id == "m1"


def test_pr_that_merged_the_base_branch_moves_its_merge_base(tmp_path: Path, repo: PrRepo) -> None:
    git(repo.path, "merge", "-q", "--no-edit", repo.m3, when="2026-11-20T07:00:00+00:00")
    head = git(repo.path, "rev-parse", "HEAD")
    _store_runs(tmp_path, repo, {"m1": repo.m1, "m2": repo.m2, "m3": repo.m3, "m4": repo.m4})
    found = find_baseline("dir:hist", _pr(repo, head), Settings(), NO_CI, git=Git(repo.path))
    assert isinstance(found, Baseline) and found.report.run_id == "m3"


def test_pr_with_only_newer_base_runs_has_no_baseline(tmp_path: Path, repo: PrRepo) -> None:
    _store_runs(tmp_path, repo, {"m3": repo.m3, "m4": repo.m4})
    found = find_baseline("dir:hist", _pr(repo), Settings(), NO_CI, git=Git(repo.path))
    assert isinstance(found, NoBaseline)
    assert found.reason == (
        "none of the 2 stored run(s) of 'main' in dir:hist qualifies as the latest run of 'main' "
        f"at or before the merge-base {repo.m2[:12]} (git ancestry)"
    )


def test_shallow_clone_falls_back_to_commit_times(tmp_path: Path, repo: PrRepo) -> None:
    _store_runs(tmp_path, repo, {"m1": repo.m1, "m2": repo.m2, "m3": repo.m3, "m4": repo.m4})
    clone = tmp_path / "shallow"
    git(
        tmp_path,
        "clone",
        "-q",
        "--depth",
        "3",
        "--no-single-branch",
        "-b",
        "feature",
        f"file://{repo.path}",
        str(clone),
    )
    assert Git(clone).is_shallow() is True
    found = find_baseline("dir:hist", _pr(repo), Settings(), NO_CI, git=Git(clone))
    assert isinstance(found, Baseline) and found.report.run_id == "m2"
    assert found.notes[-1].startswith(
        f"baseline: latest run of 'main' at or before the merge-base {repo.m2[:12]} (commit times)"
    )


def test_gitlab_diff_base_sha_needs_no_history(tmp_path: Path, repo: PrRepo) -> None:
    _store_runs(tmp_path, repo, {"m1": repo.m1, "m2": repo.m2, "m3": repo.m3, "m4": repo.m4})
    nowhere = tmp_path / "no-repo"
    nowhere.mkdir()
    environ = {"CI_MERGE_REQUEST_DIFF_BASE_SHA": repo.m2}
    found = find_baseline(
        "dir:hist", _pr(repo), Settings(), CIContext.from_environ(environ), git=Git(nowhere)
    )
    assert isinstance(found, Baseline) and found.report.run_id == "m2"


def test_without_any_evidence_the_latest_base_run_is_used_and_said(
    tmp_path: Path, repo: PrRepo
) -> None:
    store = dir_store("hist", tmp_path)
    store.save(past_run("main", repo.m1, "2026-11-21T01:00:00+00:00", "m1"))
    store.save(past_run("main", repo.m4, "2026-11-21T04:00:00+00:00", "m4"))
    nowhere = tmp_path / "no-repo"
    nowhere.mkdir()
    found = find_baseline("dir:hist", _pr(repo), Settings(), NO_CI, git=Git(nowhere))
    assert isinstance(found, Baseline) and found.report.run_id == "m4"
    assert "check out with fetch-depth: 0" in found.notes[0]


def test_a_stored_commit_git_does_not_have_is_judged_by_its_commit_time(
    tmp_path: Path, repo: PrRepo
) -> None:
    store = dir_store("hist", tmp_path)
    gone = "0" * 40  # e.g. force-pushed away; its commit time (01:30) is before the merge-base's
    store.save(
        past_run("main", gone, "2026-11-21T01:00:00+00:00", "gone"),
        committed_at="2026-11-20T01:30:00+00:00",
    )
    for name, commit in (("m3", repo.m3), ("m4", repo.m4)):
        store.save(
            past_run("main", commit, f"2026-11-21T0{name[1]}:00:00+00:00", name),
            committed_at=git(repo.path, "show", "-s", "--format=%cI", commit),
        )
    assert Git(repo.path).existing([gone, repo.m3]) == {repo.m3}
    assert repo.m2 in Git(repo.path).ancestors(repo.m2)
    found = find_baseline("dir:hist", _pr(repo), Settings(), NO_CI, git=Git(repo.path))
    assert isinstance(found, Baseline) and found.report.run_id == "gone"
