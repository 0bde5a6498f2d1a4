"""The CI context: GitHub, GitLab and Jenkins variables read once; what a run outside CI gets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawspec.ci_context import CIContext, GitHubActions, GitLabCI, as_context, ci_system

HEAD = "1" * 40
MERGE = "9" * 40
BASE = "2" * 40


def _event(tmp_path: Path, payload: object) -> str:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    return str(path)


def _pull(head_repo: str = "octo/agents") -> dict[str, object]:
    return {
        "number": 42,
        "head": {"sha": HEAD, "ref": "feature/x", "repo": {"full_name": head_repo}},
        "base": {"sha": BASE, "ref": "main", "repo": {"full_name": "octo/agents"}},
    }


def _github_pr(tmp_path: Path, head_repo: str = "octo/agents") -> dict[str, str]:
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": _event(tmp_path, {"pull_request": _pull(head_repo)}),
        "GITHUB_SHA": MERGE,  # the temporary merge commit GitHub checks out
        "GITHUB_REF_NAME": "42/merge",
        "GITHUB_HEAD_REF": "feature/x",
        "GITHUB_BASE_REF": "main",
        "GITHUB_REPOSITORY": "octo/agents",
        "GITHUB_SERVER_URL": "https://github.example.com/",
        "GITHUB_API_URL": "https://github.example.com/api/v3/",
        "GITHUB_RUN_ID": "777",
        "GITHUB_JOB": "test",
        "GITHUB_WORKFLOW": "CI",
        "GITHUB_WORKFLOW_REF": "octo/agents/.github/workflows/ci.yml@refs/pull/42/merge",
        "GITHUB_WORKSPACE": "/home/runner/work/agents/agents",
        "GITHUB_STEP_SUMMARY": "/tmp/summary.md",
        "GITHUB_OUTPUT": "/tmp/output.txt",
        "GITHUB_TOKEN": "ghs_not_context_0123456789",
    }


def test_github_pull_request(tmp_path: Path) -> None:
    context = CIContext.from_environ(_github_pr(tmp_path))
    assert (context.system, context.event) == ("github", "pull_request")
    assert context.commit == HEAD  # the PR's head, not the merge commit
    assert (context.branch, context.base_branch, context.pull_request) == ("feature/x", "main", 42)
    assert context.is_pull_request
    assert context.repository == "octo/agents"
    assert context.job_url == "https://github.example.com/octo/agents/actions/runs/777"
    assert context.repository_root == "/home/runner/work/agents/agents"
    assert context.github == GitHubActions(
        repository="octo/agents",
        server_url="https://github.example.com",
        api_url="https://github.example.com/api/v3",
        run_id="777",
        workflow="CI",
        workflow_ref="octo/agents/.github/workflows/ci.yml@refs/pull/42/merge",
        job="test",
        event_name="pull_request",
        sha=MERGE,
        head_sha=HEAD,
        base_sha=BASE,
        issue_number=42,
        fork=False,
        workspace="/home/runner/work/agents/agents",
        step_summary="/tmp/summary.md",
        output="/tmp/output.txt",
    )
    assert context.github.workflow_file == "ci.yml"
    assert context.gitlab == GitLabCI()


def test_credentials_are_not_context(tmp_path: Path) -> None:
    context = CIContext.from_environ(_github_pr(tmp_path))
    assert "ghs_not_context" not in repr(context)


def test_a_pull_request_from_a_fork(tmp_path: Path) -> None:
    environ = _github_pr(tmp_path, head_repo="someone/agents")
    assert CIContext.from_environ(environ).github.fork
    # pull_request_target runs with the base repository's token: not read-only
    target = {**environ, "GITHUB_EVENT_NAME": "pull_request_target"}
    assert not CIContext.from_environ(target).github.fork


def test_github_push(tmp_path: Path) -> None:
    environ = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_EVENT_PATH": _event(tmp_path, {"ref": "refs/heads/main", "after": MERGE}),
        "GITHUB_SHA": MERGE,
        "GITHUB_REF_NAME": "main",
        "GITHUB_REPOSITORY": "octo/agents",
        "GITHUB_RUN_ID": "5",
    }
    context = CIContext.from_environ(environ)
    assert (context.system, context.event, context.commit, context.branch) == (
        "github",
        "push",
        MERGE,
        "main",
    )
    assert (context.base_branch, context.pull_request) == (None, None)
    assert not context.is_pull_request
    assert context.job_url == "https://github.com/octo/agents/actions/runs/5"
    assert context.github.head_sha == MERGE
    assert (context.github.issue_number, context.github.fork) == (None, False)
    assert context.github.api_url == "https://api.github.com"
    assert context.github.event_error is None


def test_github_schedule_without_an_event_file() -> None:
    environ = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "schedule",
        "GITHUB_SHA": MERGE,
        "GITHUB_REF_NAME": "main",
    }
    context = CIContext.from_environ(environ)
    assert (context.event, context.commit, context.branch) == ("schedule", MERGE, "main")
    assert (context.base_branch, context.pull_request, context.job_url) == (None, None, None)
    assert context.github.event_error is None  # no GITHUB_EVENT_PATH: nothing to read


def test_issue_comment_events_name_the_issue(tmp_path: Path) -> None:
    environ = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "issue_comment",
        "GITHUB_EVENT_PATH": _event(tmp_path, {"issue": {"number": 9}}),
        "GITHUB_SHA": MERGE,
        "GITHUB_REF_NAME": "main",
    }
    context = CIContext.from_environ(environ)
    assert context.github.issue_number == 9  # where the PR comment goes
    assert context.pull_request is None  # the run itself is of main


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (None, "cannot read the event payload"),
        ("{not json", "is not JSON"),
        ("[1, 2]", "is not a JSON object"),
    ],
)
def test_a_missing_or_garbled_event_file_falls_back_to_the_variables(
    tmp_path: Path, content: str | None, reason: str
) -> None:
    path = tmp_path / "garbled-event.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    environ = {**_github_pr(tmp_path), "GITHUB_EVENT_PATH": str(path)}  # None: no such file
    context = CIContext.from_environ(environ)
    # No crash: what the payload would give falls back to the variables...
    assert context.commit == MERGE
    assert (context.branch, context.base_branch) == ("feature/x", "main")
    assert context.pull_request is None
    github = context.github
    assert (github.head_sha, github.base_sha, github.issue_number, github.fork) == (
        MERGE,
        None,
        None,
        False,
    )
    # ... and the context says why.
    assert github.event_error is not None
    assert reason in github.event_error and str(path) in github.event_error


def test_gitlab_merge_request_pipeline() -> None:
    environ = {
        "GITLAB_CI": "true",
        "CI_PIPELINE_SOURCE": "merge_request_event",
        "CI_PROJECT_PATH": "group/agents",
        "CI_PROJECT_DIR": "/builds/group/agents",
        "CI_JOB_URL": "https://gitlab.example.com/group/agents/-/jobs/12",
        "CI_COMMIT_SHA": HEAD,
        "CI_COMMIT_REF_NAME": "feature/x",
        "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature/x",
        "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
        "CI_MERGE_REQUEST_IID": "17",
        "CI_MERGE_REQUEST_DIFF_BASE_SHA": BASE,
        "CI_COMMIT_TIMESTAMP": "2026-11-21T10:00:00+00:00",
        "CI_NODE_INDEX": "2",
        "CI_NODE_TOTAL": "3",
    }
    context = CIContext.from_environ(environ)
    assert context == CIContext(
        system="gitlab",
        event="merge_request_event",
        repository="group/agents",
        job_url="https://gitlab.example.com/group/agents/-/jobs/12",
        commit=HEAD,
        branch="feature/x",
        base_branch="main",
        pull_request=17,
        repository_root="/builds/group/agents",
        gitlab=GitLabCI(
            project_dir="/builds/group/agents",
            node_index="2",
            node_total="3",
            merge_base=BASE,
            commit_time="2026-11-21T10:00:00+00:00",
        ),
    )
    assert context.is_pull_request


def test_gitlab_branch_pipeline() -> None:
    environ = {
        "GITLAB_CI": "true",
        "CI_PIPELINE_SOURCE": "push",
        "CI_COMMIT_SHA": HEAD,
        "CI_COMMIT_BRANCH": "main",
        "CI_COMMIT_REF_NAME": "main",
    }
    context = CIContext.from_environ(environ)
    assert (context.system, context.branch, context.base_branch) == ("gitlab", "main", None)
    assert not context.is_pull_request


def test_jenkins_change_request() -> None:
    environ = {
        "JENKINS_URL": "https://jenkins.example.com/",
        "GIT_COMMIT": HEAD,
        "BRANCH_NAME": "PR-8",
        "CHANGE_ID": "8",
        "CHANGE_BRANCH": "feature/x",
        "CHANGE_TARGET": "main",
        "GIT_URL": "https://bot:s3cret@git.example.com/team/agents.git",
        "BUILD_URL": "https://jenkins.example.com/job/agents/PR-8/3/",
    }
    context = CIContext.from_environ(environ)
    assert context == CIContext(
        system="jenkins",
        event="pull_request",
        repository="https://git.example.com/team/agents.git",  # credentials removed
        job_url="https://jenkins.example.com/job/agents/PR-8/3/",
        commit=HEAD,
        branch="feature/x",
        base_branch="main",
        pull_request=8,
    )
    assert "s3cret" not in repr(context)


def test_jenkins_branch_build() -> None:
    environ = {"JENKINS_HOME": "/var/jenkins", "GIT_BRANCH": "origin/main"}
    context = CIContext.from_environ(environ)
    assert (context.system, context.branch, context.commit) == ("jenkins", "main", None)
    assert (context.event, context.pull_request) == (None, None)


def test_no_ci() -> None:
    assert CIContext.from_environ({}) == CIContext()
    context = CIContext.from_environ({"HOME": "/home/me", "CI": "true"})
    assert context.system == "local"
    assert (context.commit, context.branch, context.repository, context.job_url) == (
        None,
        None,
        None,
        None,
    )
    assert context.github.api_url == "https://api.github.com"
    assert context.github.event_error is None


def test_github_variables_are_read_outside_github_actions_too() -> None:
    """The `github` history store works from a laptop with GITHUB_REPOSITORY set; the run's
    origin stays local."""
    environ = {"GITHUB_REPOSITORY": "octo/agents", "GITHUB_SHA": MERGE, "CI_NODE_INDEX": "1"}
    context = CIContext.from_environ(environ)
    assert context.system == "local" and context.commit is None
    assert context.github.repository == "octo/agents"
    assert context.github.head_sha == MERGE
    assert context.gitlab.node_index == "1"


def test_empty_variables_count_as_unset() -> None:
    context = CIContext.from_environ(
        {"GITHUB_ACTIONS": "true", "GITHUB_SHA": "", "GITHUB_REF_NAME": "", "GITHUB_API_URL": ""}
    )
    assert (context.commit, context.branch) == (None, None)
    assert context.github.api_url == "https://api.github.com"


def test_the_system_is_detected_in_order() -> None:
    assert ci_system({"GITHUB_ACTIONS": "true", "GITLAB_CI": "true"}) == "github"
    assert ci_system({"GITLAB_CI": "true", "JENKINS_URL": "x"}) == "gitlab"
    assert ci_system({"JENKINS_HOME": "/j"}) == "jenkins"
    assert ci_system({"GITHUB_ACTIONS": "false"}) == "local"


def test_as_context_reads_a_raw_environment_once() -> None:
    context = CIContext.from_environ({"GITLAB_CI": "true", "CI_COMMIT_SHA": HEAD})
    assert as_context(context) is context
    assert as_context({"GITLAB_CI": "true", "CI_COMMIT_SHA": HEAD}) == context


def test_the_context_is_frozen() -> None:
    context = CIContext()
    with pytest.raises(AttributeError):
        context.commit = HEAD  # type: ignore[misc]
