"""Where a run comes from (`RunReport.source`): commit, branch, pull request, CI job, gateway.

Read from the CI system's own variables (through the run's `CIContext`, clawspec/ci_context.py,
which reads them), else from the local git checkout:
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

from typing import Any

from clawspec.ci_context import CIContext
from clawspec.config.settings import Settings
from clawspec.history.git import Git
from clawspec.reports.model import RunSource


def ci_values(context: CIContext) -> dict[str, Any]:
    """Return what the CI system's variables say about this run (`ci: local` outside CI)."""
    found = {
        "ci": context.system,
        "event": context.event,
        "repository": context.repository,
        "job_url": context.job_url,
        "commit": context.commit,
        "branch": context.branch,
        "base_branch": context.base_branch,
        "pull_request": context.pull_request,
    }
    return {key: value for key, value in found.items() if value not in (None, "")}


def run_source(
    context: CIContext,
    settings: Settings | None = None,
    git: Git | None = None,
) -> RunSource:
    """Return the run's source: CI variables first, the local git checkout for what they lack.

    `context` is the run's CI context; `settings` adds the gateway (URL and mode); `git`
    defaults to the current folder's repo. Never raises: an unknown value stays None.
    """
    found = ci_values(context)
    if not found.get("commit") or not found.get("branch"):
        git = git or Git()
        found.setdefault("commit", git.head())
        if not found.get("branch"):
            found["branch"] = git.branch()
    if settings is not None:
        found["gateway_url"] = settings.gateway_base_url
        found["gateway_mode"] = settings.gateway.mode
        found["trace_backend"] = settings.trace_backend
    return RunSource.model_validate(found)


def is_pull_request(source: RunSource) -> bool:
    """True when the run is about a pull/merge request: it has a base branch to merge into."""
    return bool(source.base_branch)
