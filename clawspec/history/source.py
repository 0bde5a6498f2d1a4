"""Where a run comes from (`RunReport.source`): commit, branch, pull request, CI job, gateway.

Read from the CI system's own variables, else from the local git checkout:
- GitHub Actions (`GITHUB_ACTIONS=true`): `GITHUB_SHA`, `GITHUB_REF_NAME`, `GITHUB_HEAD_REF`,
  `GITHUB_BASE_REF`, `GITHUB_EVENT_NAME` and the event payload at `GITHUB_EVENT_PATH`. For a pull
  request the commit is the PR's head commit (`pull_request.head.sha`), not the temporary merge
  commit GitHub checks out, so it matches what people see on the PR and what git knows.
- GitLab CI (`GITLAB_CI=true`): `CI_COMMIT_SHA`, `CI_COMMIT_REF_NAME`,
  `CI_MERGE_REQUEST_SOURCE_BRANCH_NAME`, `CI_MERGE_REQUEST_TARGET_BRANCH_NAME`,
  `CI_MERGE_REQUEST_IID`, `CI_PIPELINE_SOURCE`, `CI_PROJECT_PATH`, `CI_JOB_URL`.
- Jenkins (`JENKINS_URL` or `JENKINS_HOME`): `GIT_COMMIT`, `BRANCH_NAME`/`GIT_BRANCH`,
  `CHANGE_ID`, `CHANGE_BRANCH`, `CHANGE_TARGET`, `GIT_URL` (credentials removed), `BUILD_URL`.
- Anywhere else (`ci: local`): `git` in the current folder; nothing when it is not a checkout.
A value the CI variables lack (a Jenkins freestyle job without `GIT_COMMIT`) also comes from git.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from clawspec.config import Settings
from clawspec.history.git import Git
from clawspec.reports.model import RunSource


def github_event(environ: Mapping[str, str]) -> dict[str, Any]:
    """Return the GitHub event payload (empty when absent or unreadable)."""
    path = environ.get("GITHUB_EVENT_PATH")
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _dig(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _number(value: Any) -> int | None:
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, str) and value.strip().isdigit() else None


def _without_credentials(url: str | None) -> str | None:
    """Drop `user:password@` from a repository URL (Jenkins' GIT_URL may carry them)."""
    if not url or "@" not in url:
        return url or None
    parts = urlsplit(url)
    if not parts.scheme or not parts.hostname:
        return url.split("@", 1)[1]  # scp-like git@host:owner/repo
    host = parts.hostname + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def _github(environ: Mapping[str, str]) -> dict[str, Any]:
    event = github_event(environ)
    pr = event.get("pull_request") if isinstance(event.get("pull_request"), dict) else None
    server = environ.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    repository = environ.get("GITHUB_REPOSITORY")
    run_id = environ.get("GITHUB_RUN_ID")
    found: dict[str, Any] = {
        "ci": "github",
        "event": environ.get("GITHUB_EVENT_NAME"),
        "repository": repository,
        "job_url": f"{server}/{repository}/actions/runs/{run_id}"
        if repository and run_id
        else None,
        "commit": environ.get("GITHUB_SHA"),
        "branch": environ.get("GITHUB_REF_NAME"),
    }
    if pr is not None or environ.get("GITHUB_HEAD_REF"):
        found["commit"] = _dig(pr, "head", "sha") or environ.get("GITHUB_SHA")
        found["branch"] = environ.get("GITHUB_HEAD_REF") or _dig(pr, "head", "ref")
        found["base_branch"] = environ.get("GITHUB_BASE_REF") or _dig(pr, "base", "ref")
        found["pull_request"] = _number(_dig(pr, "number"))
    return found


def _gitlab(environ: Mapping[str, str]) -> dict[str, Any]:
    return {
        "ci": "gitlab",
        "event": environ.get("CI_PIPELINE_SOURCE"),
        "repository": environ.get("CI_PROJECT_PATH"),
        "job_url": environ.get("CI_JOB_URL"),
        "commit": environ.get("CI_COMMIT_SHA"),
        "branch": environ.get("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME")
        or environ.get("CI_COMMIT_BRANCH")
        or environ.get("CI_COMMIT_REF_NAME"),
        "base_branch": environ.get("CI_MERGE_REQUEST_TARGET_BRANCH_NAME"),
        "pull_request": _number(environ.get("CI_MERGE_REQUEST_IID")),
    }


def _jenkins(environ: Mapping[str, str]) -> dict[str, Any]:
    change = _number(environ.get("CHANGE_ID"))
    branch = environ.get("CHANGE_BRANCH") or environ.get("BRANCH_NAME") or environ.get("GIT_BRANCH")
    if branch and branch.startswith("origin/"):
        branch = branch.removeprefix("origin/")
    return {
        "ci": "jenkins",
        "event": "pull_request" if change is not None else None,
        "repository": _without_credentials(environ.get("GIT_URL")),
        "job_url": environ.get("BUILD_URL"),
        "commit": environ.get("GIT_COMMIT"),
        "branch": branch,
        "base_branch": environ.get("CHANGE_TARGET"),
        "pull_request": change,
    }


def ci_values(environ: Mapping[str, str]) -> dict[str, Any]:
    """Return what the CI system's variables say about this run (`ci: local` outside CI)."""
    if environ.get("GITHUB_ACTIONS") == "true":
        found = _github(environ)
    elif environ.get("GITLAB_CI") == "true":
        found = _gitlab(environ)
    elif environ.get("JENKINS_URL") or environ.get("JENKINS_HOME"):
        found = _jenkins(environ)
    else:
        found = {"ci": "local"}
    return {key: value for key, value in found.items() if value not in (None, "")}


def run_source(
    environ: Mapping[str, str], settings: Settings | None = None, git: Git | None = None
) -> RunSource:
    """Return the run's source: CI variables first, the local git checkout for what they lack.

    `settings` adds the gateway (URL and mode); `git` defaults to the current folder's repo.
    Never raises: an unknown value stays None.
    """
    found = ci_values(environ)
    if not found.get("commit") or not found.get("branch"):
        git = git or Git()
        found.setdefault("commit", git.head())
        if not found.get("branch"):
            found["branch"] = git.branch()
    if settings is not None:
        found["gateway_url"] = settings.gateway_base_url
        found["gateway_mode"] = settings.gateway.mode
    return RunSource.model_validate(found)


def is_pull_request(source: RunSource) -> bool:
    """True when the run is about a pull/merge request: it has a base branch to merge into."""
    return bool(source.base_branch)
