"""`--changed-since auto` in the CI environments ClawSpec reads, and a shallow clone."""

from __future__ import annotations

import json
from pathlib import Path

from tests.history.factory import git
from tests.selection.conftest import ALL, NEWS, Suite
from tests.selection.test_changed import select


def _pull_request(suite: Suite) -> tuple[str, str]:
    """feature: base → f1 (edits the golden file); main: base → m2 (edits the weather skill),
    known as origin/main. Returns (f1, m2); the feature branch is checked out."""
    suite.git("checkout", "-q", "-b", "feature")
    suite.append("golden/news.md", "feature\n")
    f1 = suite.commit("feature: golden")
    suite.git("checkout", "-q", "main")
    suite.append("skills/weather/SKILL.md", "main moved on\n")
    m2 = suite.commit("main: weather")
    suite.git("update-ref", "refs/remotes/origin/main", m2)
    suite.git("checkout", "-q", "feature")
    return f1, m2


def _github(tmp_path: Path, event: str, payload: dict, sha: str) -> dict[str, str]:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    environ = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_SHA": sha,
        "GITHUB_REPOSITORY": "octo/agents",
        "GITHUB_REF_NAME": "7/merge" if event == "pull_request" else "main",
    }
    if event == "pull_request":
        environ |= {"GITHUB_HEAD_REF": "feature", "GITHUB_BASE_REF": "main"}
    return environ


def _pr_payload(f1: str, m2: str) -> dict:
    return {
        "pull_request": {
            "number": 7,
            "head": {"sha": f1, "ref": "feature"},
            "base": {"sha": m2, "ref": "main"},
        }
    }


def test_github_pull_request_on_its_merge_commit_counts_only_the_pull_requests_changes(
    suite: Suite, tmp_path: Path
) -> None:
    f1, m2 = _pull_request(suite)
    # What actions/checkout checks out for a pull_request event: a merge of the head into the
    # base; its tree holds main's own change too, which must not count.
    suite.git("checkout", "-q", "--detach", f1)
    suite.git("merge", "-q", "--no-ff", "-m", "merge", m2)
    merge = suite.git("rev-parse", "HEAD")
    environ = _github(tmp_path, "pull_request", _pr_payload(f1, m2), merge)
    selected = select(suite, "auto", environ)
    assert selected.ids == [f"{NEWS}::draft"]
    assert selected.info is not None
    assert (selected.info.changed_since, selected.info.commit) == ("auto", m2)
    assert selected.warnings == []


def test_github_pull_request_on_its_head_counts_from_the_merge_base(
    suite: Suite, tmp_path: Path
) -> None:
    f1, m2 = _pull_request(suite)
    environ = _github(tmp_path, "pull_request", _pr_payload(f1, m2), f1)
    selected = select(suite, "auto", environ)
    assert selected.ids == [f"{NEWS}::draft"]
    assert selected.info is not None
    assert selected.info.commit == suite.base


def test_gitlab_merge_request_counts_from_the_diff_base_sha(suite: Suite) -> None:
    f1, _ = _pull_request(suite)
    suite.git("update-ref", "-d", "refs/remotes/origin/main")  # GitLab's variable is enough
    environ = {
        "GITLAB_CI": "true",
        "CI_PIPELINE_SOURCE": "merge_request_event",
        "CI_COMMIT_SHA": f1,
        "CI_MERGE_REQUEST_IID": "7",
        "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature",
        "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
        "CI_MERGE_REQUEST_DIFF_BASE_SHA": suite.base,
    }
    selected = select(suite, "auto", environ)
    assert selected.ids == [f"{NEWS}::draft"]
    assert selected.info is not None
    assert selected.info.commit == suite.base


def test_a_push_runs_everything_without_a_warning(suite: Suite, tmp_path: Path) -> None:
    suite.append("golden/news.md", "pushed\n")
    head = suite.commit("push")
    environ = _github(tmp_path, "push", {"after": head}, head)
    selected = select(suite, "auto", environ)
    assert selected.ids == ALL
    assert (selected.info, selected.warnings) == (None, [])


def test_a_shallow_clone_runs_everything_and_names_the_fix(suite: Suite, tmp_path: Path) -> None:
    f1, m2 = _pull_request(suite)
    clone = tmp_path / "clone"
    git(
        tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature", suite.root.as_uri(), "clone"
    )
    assert git(clone, "rev-parse", "--is-shallow-repository") == "true"
    shallow = Suite(clone, "")
    environ = _github(tmp_path, "pull_request", _pr_payload(f1, m2), f1)
    selected = select(shallow, "auto", environ)
    assert selected.ids == ALL
    assert selected.info is None
    assert selected.warnings == [
        "--changed-since: no history to find this pull request's merge-base with 'main' (a "
        "shallow clone); every scenario runs; check out the history: `fetch-depth: 0` for "
        "actions/checkout, `GIT_DEPTH: 0` on GitLab"
    ]
    # A ref the clone lacks says the same.
    named = select(shallow, suite.base)
    assert named.ids == ALL
    assert named.warnings == [
        f"--changed-since: no history to find '{suite.base}' (a shallow clone); every scenario "
        "runs; check out the history: `fetch-depth: 0` for actions/checkout, `GIT_DEPTH: 0` on "
        "GitLab"
    ]
