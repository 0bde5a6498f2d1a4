"""The CI context of a run: what the CI system's variables say, read once (`CIContext`).

`CIContext.from_environ(environ)` reads the variables (and GitHub's event payload file, once) and
every module that publishes a report, chooses a baseline or opens a history store takes the
context instead of the raw environment. Credentials are not context: tokens stay settings and the
secrets registry's (`clawspec/secrets.py`), the AWS SDK reads its own variables.

Two kinds of fields:
- the run's origin (`system`, `event`, `repository`, `job_url`, `commit`, `branch`,
  `base_branch`, `pull_request`: what `RunReport.source` records) come from the CI system that
  runs the job, detected as GitHub Actions (`GITHUB_ACTIONS=true`), GitLab CI (`GITLAB_CI=true`),
  Jenkins (`JENKINS_URL` or `JENKINS_HOME`), else `local` (then they are all None);
- `github` and `gitlab` hold each system's own variables, read whenever they are set, whatever
  `system` says: the `github` history store also works from a laptop with `GITHUB_REPOSITORY`
  set, and `--shard auto` reads `CI_NODE_INDEX`/`CI_NODE_TOTAL` wherever they are.
An empty variable counts as unset. A missing or unreadable event payload is no error: the values
it would give fall back to the variables (`GITHUB_SHA`, `GITHUB_HEAD_REF`, ...), the PR number is
unknown, and `github.event_error` says why.

A leaf module: the standard library only, nothing of clawspec.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

CISystem = Literal["github", "gitlab", "jenkins", "local"]
DEFAULT_SERVER_URL = "https://github.com"
DEFAULT_API_URL = "https://api.github.com"


def ci_system(environ: Mapping[str, str]) -> CISystem:
    """Which CI system runs this process (`local` for none we know)."""
    if environ.get("GITHUB_ACTIONS") == "true":
        return "github"
    if environ.get("GITLAB_CI") == "true":
        return "gitlab"
    if environ.get("JENKINS_URL") or environ.get("JENKINS_HOME"):
        return "jenkins"
    return "local"


@dataclass(frozen=True)
class GitHubActions:
    """GitHub Actions' variables and what the event payload (`GITHUB_EVENT_PATH`) adds."""

    repository: str | None = None  # GITHUB_REPOSITORY: owner/name
    server_url: str = DEFAULT_SERVER_URL  # GITHUB_SERVER_URL, without a trailing slash
    api_url: str = DEFAULT_API_URL  # GITHUB_API_URL, without a trailing slash
    run_id: str | None = None  # GITHUB_RUN_ID
    workflow: str | None = None  # GITHUB_WORKFLOW: the workflow's name
    workflow_ref: str | None = None  # GITHUB_WORKFLOW_REF: owner/repo/.github/workflows/f.yml@ref
    job: str | None = None  # GITHUB_JOB: the job's id
    event_name: str | None = None  # GITHUB_EVENT_NAME
    sha: str | None = None  # GITHUB_SHA: a pull_request run's merge commit
    head_sha: str | None = None  # the PR's head commit (payload), else GITHUB_SHA
    base_sha: str | None = None  # the PR's base commit (payload `pull_request.base.sha`)
    issue_number: int | None = None  # the PR (or issue_comment's issue) the payload names
    fork: bool = False  # a `pull_request` event from a fork: its GITHUB_TOKEN is read-only
    workspace: str | None = None  # GITHUB_WORKSPACE: the checkout
    step_summary: str | None = None  # GITHUB_STEP_SUMMARY: the job summary file
    output: str | None = None  # GITHUB_OUTPUT: the step outputs file
    event_error: str | None = None  # why the event payload could not be read (None: it was)

    @property
    def workflow_file(self) -> str | None:
        """The current workflow's file name (`ci.yml`) from GITHUB_WORKFLOW_REF."""
        name = PurePosixPath((self.workflow_ref or "").split("@", 1)[0]).name
        return name if name.endswith((".yml", ".yaml")) else None


@dataclass(frozen=True)
class GitLabCI:
    """GitLab CI's variables beyond the run's origin."""

    project_dir: str | None = None  # CI_PROJECT_DIR: the checkout
    node_index: str | None = None  # CI_NODE_INDEX (`parallel:` jobs), as given
    node_total: str | None = None  # CI_NODE_TOTAL, as given
    merge_base: str | None = None  # CI_MERGE_REQUEST_DIFF_BASE_SHA: the MR's merge-base
    commit_time: str | None = None  # CI_COMMIT_TIMESTAMP: the head commit's time


@dataclass(frozen=True)
class CIContext:
    """The CI context of one run, read once from the environment (`from_environ`).

    The origin fields are None outside CI (`system == "local"`): `run_source` asks git then.
    """

    system: CISystem = "local"
    event: str | None = None  # push, pull_request, merge_request_event, schedule, ...
    repository: str | None = None  # owner/name, group/project, Jenkins' GIT_URL (no credentials)
    job_url: str | None = None  # the CI job's (or workflow run's) web page
    commit: str | None = None  # the commit tested: a PR's head, not GitHub's merge commit
    branch: str | None = None  # the branch tested (a PR's source branch)
    base_branch: str | None = None  # set only for pull/merge requests: the branch merged into
    pull_request: int | None = None  # the PR/MR number (GitLab's IID, Jenkins' CHANGE_ID)
    repository_root: str | None = None  # CI_PROJECT_DIR, else GITHUB_WORKSPACE
    github: GitHubActions = field(default_factory=GitHubActions)
    gitlab: GitLabCI = field(default_factory=GitLabCI)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> CIContext:
        """Read the context from an environment; never raises (see the module's docstring)."""
        env = _Env(environ)
        github, origin = _github(env)
        gitlab = GitLabCI(
            project_dir=env("CI_PROJECT_DIR"),
            node_index=env("CI_NODE_INDEX"),
            node_total=env("CI_NODE_TOTAL"),
            merge_base=env("CI_MERGE_REQUEST_DIFF_BASE_SHA"),
            commit_time=env("CI_COMMIT_TIMESTAMP"),
        )
        system = ci_system(environ)
        if system == "gitlab":
            origin = _gitlab(env)
        elif system == "jenkins":
            origin = _jenkins(env)
        elif system == "local":
            origin = {}
        return cls(
            system=system,
            **origin,
            repository_root=gitlab.project_dir or github.workspace,
            github=github,
            gitlab=gitlab,
        )

    @property
    def is_pull_request(self) -> bool:
        """True when the run is about a pull/merge request: it has a base branch."""
        return bool(self.base_branch)


def as_context(value: CIContext | Mapping[str, str]) -> CIContext:
    """`value` itself, or the context read from a raw environment.

    Only for a public entry point that still accepts either (`clawspec.api.shard_plans`, i.e.
    `clawspec.selection.steps.shard_plans`): everything below it takes a `CIContext`."""
    return value if isinstance(value, CIContext) else CIContext.from_environ(value)


class _Env:
    """Read variables; an empty value is None."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ

    def __call__(self, name: str) -> str | None:
        return self.environ.get(name) or None


def _dig(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _number(value: Any) -> int | None:
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, str) and value.strip().isdigit() else None


def _read_event(path: str | None) -> tuple[dict[str, Any], str | None]:
    """The event payload and, when it cannot be had, why (the payload is then empty)."""
    if not path:
        return {}, None
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        return {}, f"cannot read the event payload {path}: {exc.strerror or type(exc).__name__}"
    except ValueError as exc:
        return {}, f"the event payload {path} is not JSON: {exc}"
    if not isinstance(data, dict):
        return {}, f"the event payload {path} is not a JSON object"
    return data, None


def _github(env: _Env) -> tuple[GitHubActions, dict[str, Any]]:
    """GitHub's own fields, and the run's origin as GitHub gives it."""
    event, error = _read_event(env("GITHUB_EVENT_PATH"))
    pull = event.get("pull_request") if isinstance(event.get("pull_request"), dict) else None
    issue = event.get("issue") if isinstance(event.get("issue"), dict) else None
    sha = env("GITHUB_SHA")
    names = [_dig(pull, side, "repo", "full_name") for side in ("head", "base")]
    github = GitHubActions(
        repository=env("GITHUB_REPOSITORY"),
        server_url=(env("GITHUB_SERVER_URL") or DEFAULT_SERVER_URL).rstrip("/"),
        api_url=(env("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
        run_id=env("GITHUB_RUN_ID"),
        workflow=env("GITHUB_WORKFLOW"),
        workflow_ref=env("GITHUB_WORKFLOW_REF"),
        job=env("GITHUB_JOB"),
        event_name=env("GITHUB_EVENT_NAME"),
        sha=sha,
        head_sha=_text(_dig(pull, "head", "sha")) or sha,
        base_sha=_text(_dig(pull, "base", "sha")),
        issue_number=_issue_number(pull, issue),
        fork=env("GITHUB_EVENT_NAME") == "pull_request"
        and bool(names[0] and names[1] and names[0] != names[1]),
        workspace=env("GITHUB_WORKSPACE"),
        step_summary=env("GITHUB_STEP_SUMMARY"),
        output=env("GITHUB_OUTPUT"),
        event_error=error,
    )
    repository, run_id = github.repository, github.run_id
    origin: dict[str, Any] = {
        "event": github.event_name,
        "repository": repository,
        "job_url": f"{github.server_url}/{repository}/actions/runs/{run_id}"
        if repository and run_id
        else None,
        "commit": sha,
        "branch": env("GITHUB_REF_NAME"),
    }
    if pull is not None or env("GITHUB_HEAD_REF"):
        # The PR's head commit, not the merge commit GitHub checks out: it matches what people
        # see on the PR and what git knows.
        origin["commit"] = github.head_sha
        origin["branch"] = env("GITHUB_HEAD_REF") or _text(_dig(pull, "head", "ref"))
        origin["base_branch"] = env("GITHUB_BASE_REF") or _text(_dig(pull, "base", "ref"))
        origin["pull_request"] = _number(_dig(pull, "number"))
    return github, origin


def _issue_number(pull: dict[str, Any] | None, issue: dict[str, Any] | None) -> int | None:
    for item in (pull, issue):
        number = item.get("number") if item is not None else None
        if isinstance(number, int) and not isinstance(number, bool):
            return number
    return None


def _gitlab(env: _Env) -> dict[str, Any]:
    return {
        "event": env("CI_PIPELINE_SOURCE"),
        "repository": env("CI_PROJECT_PATH"),
        "job_url": env("CI_JOB_URL"),
        "commit": env("CI_COMMIT_SHA"),
        "branch": env("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME")
        or env("CI_COMMIT_BRANCH")
        or env("CI_COMMIT_REF_NAME"),
        "base_branch": env("CI_MERGE_REQUEST_TARGET_BRANCH_NAME"),
        "pull_request": _number(env("CI_MERGE_REQUEST_IID")),
    }


def _jenkins(env: _Env) -> dict[str, Any]:
    change = _number(env("CHANGE_ID"))
    branch = env("CHANGE_BRANCH") or env("BRANCH_NAME") or env("GIT_BRANCH")
    if branch and branch.startswith("origin/"):
        branch = branch.removeprefix("origin/") or None
    return {
        "event": "pull_request" if change is not None else None,
        "repository": _without_credentials(env("GIT_URL")),
        "job_url": env("BUILD_URL"),
        "commit": env("GIT_COMMIT"),
        "branch": branch,
        "base_branch": env("CHANGE_TARGET"),
        "pull_request": change,
    }


def _without_credentials(url: str | None) -> str | None:
    """Drop `user:password@` from a repository URL (Jenkins' GIT_URL may carry them)."""
    if not url or "@" not in url:
        return url or None
    parts = urlsplit(url)
    if not parts.scheme or not parts.hostname:
        return url.split("@", 1)[1] or None  # scp-like git@host:owner/repo
    host = parts.hostname + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
