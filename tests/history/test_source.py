"""RunReport.source from GitHub, GitLab and Jenkins variables, else from local git."""

from __future__ import annotations

import json
from pathlib import Path

from clawspec.ci_context import CIContext
from clawspec.config.settings import Settings
from clawspec.history.git import Git
from clawspec.history.source import run_source
from clawspec.reports.model import RunSource
from tests.history.factory import pr_repo

HEAD = "1" * 40
MERGE = "9" * 40


def test_github_pull_request_uses_the_head_commit_and_the_event(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            {
                "pull_request": {
                    "number": 42,
                    "head": {"sha": HEAD, "ref": "feature/x"},
                    "base": {"sha": "2" * 40, "ref": "main"},
                }
            }
        ),
        encoding="utf-8",
    )
    environ = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_SHA": MERGE,  # the temporary merge commit GitHub checks out
        "GITHUB_REF_NAME": "42/merge",
        "GITHUB_HEAD_REF": "feature/x",
        "GITHUB_BASE_REF": "main",
        "GITHUB_REPOSITORY": "octo/agents",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_RUN_ID": "777",
    }
    settings = Settings(gateway_base_url="http://127.0.0.1:9999")
    assert run_source(CIContext.from_environ(environ), settings, Git(tmp_path)) == RunSource(
        commit=HEAD,
        branch="feature/x",
        base_branch="main",
        pull_request=42,
        event="pull_request",
        ci="github",
        repository="octo/agents",
        job_url="https://github.com/octo/agents/actions/runs/777",
        gateway_url="http://127.0.0.1:9999",
        gateway_mode="target",
        trace_backend="none",
    )


def test_github_schedule_is_the_branch_itself(tmp_path: Path) -> None:
    environ = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "schedule",
        "GITHUB_SHA": HEAD,
        "GITHUB_REF_NAME": "main",
        "GITHUB_REPOSITORY": "octo/agents",
    }
    assert run_source(CIContext.from_environ(environ), git=Git(tmp_path)) == RunSource(
        commit=HEAD, branch="main", event="schedule", ci="github", repository="octo/agents"
    )


def test_gitlab_merge_request(tmp_path: Path) -> None:
    environ = {
        "GITLAB_CI": "true",
        "CI_COMMIT_SHA": HEAD,
        "CI_COMMIT_REF_NAME": "feature/x",
        "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature/x",
        "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
        "CI_MERGE_REQUEST_IID": "7",
        "CI_PIPELINE_SOURCE": "merge_request_event",
        "CI_PROJECT_PATH": "group/agents",
        "CI_JOB_URL": "https://gitlab.example/group/agents/-/jobs/5",
    }
    assert run_source(CIContext.from_environ(environ), git=Git(tmp_path)) == RunSource(
        commit=HEAD,
        branch="feature/x",
        base_branch="main",
        pull_request=7,
        event="merge_request_event",
        ci="gitlab",
        repository="group/agents",
        job_url="https://gitlab.example/group/agents/-/jobs/5",
    )


def test_jenkins_change_request_drops_credentials_from_the_repository_url(tmp_path: Path) -> None:
    environ = {
        "JENKINS_URL": "https://ci.example/",
        "GIT_COMMIT": HEAD,
        "BRANCH_NAME": "PR-12",
        "CHANGE_ID": "12",
        "CHANGE_BRANCH": "feature/x",
        "CHANGE_TARGET": "main",
        "GIT_URL": "https://bot:hunter22@git.example/agents.git",
        "BUILD_URL": "https://ci.example/job/agents/PR-12/3/",
    }
    assert run_source(CIContext.from_environ(environ), git=Git(tmp_path)) == RunSource(
        commit=HEAD,
        branch="feature/x",
        base_branch="main",
        pull_request=12,
        event="pull_request",
        ci="jenkins",
        repository="https://git.example/agents.git",
        job_url="https://ci.example/job/agents/PR-12/3/",
    )
    nightly = {"JENKINS_HOME": "/var/jenkins", "GIT_COMMIT": HEAD, "GIT_BRANCH": "origin/main"}
    assert run_source(CIContext.from_environ(nightly), git=Git(tmp_path)) == RunSource(
        commit=HEAD, branch="main", ci="jenkins"
    )


def test_local_runs_read_git_and_survive_a_folder_that_is_no_repository(tmp_path: Path) -> None:
    repo = pr_repo(tmp_path / "repo")
    assert run_source(CIContext.from_environ({}), git=Git(repo.path)) == RunSource(
        commit=repo.f2, branch="feature", ci="local"
    )
    outside = tmp_path / "plain"
    outside.mkdir()
    assert run_source(CIContext.from_environ({}), git=Git(outside)) == RunSource(ci="local")
    # A CI system that lacks the commit (a Jenkins freestyle job) gets it from git.
    jenkins = {"JENKINS_URL": "https://ci.example/", "BRANCH_NAME": "feature"}
    assert run_source(CIContext.from_environ(jenkins), git=Git(repo.path)).commit == repo.f2


def test_git_answers_none_instead_of_failing(tmp_path: Path) -> None:
    git = Git(tmp_path / "nowhere")
    assert git.head() is None
    assert git.branch() is None
    assert git.is_shallow() is None
    assert git.ancestors("HEAD") is None
    assert git.existing(["0" * 40]) == set()
    assert git.commit_time("HEAD") is None
