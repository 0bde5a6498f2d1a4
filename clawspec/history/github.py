"""`github`: earlier runs are the report artifacts of earlier workflow runs (no set-up).

Saving is the workflow's job: it uploads the report folder with `actions/upload-artifact`
under the name `clawspec-report` (config `history: {github_artifact: ...}` to change it). Reading
goes through the REST API at `GITHUB_API_URL` with `GITHUB_TOKEN`, which needs `actions: read`:

  GET /repos/{repo}/actions/workflows/{workflow}/runs?branch=B&status=completed  (list runs)
  GET /repos/{repo}/actions/runs/{run_id}/artifacts?name=clawspec-report        (its artifact)
  GET /repos/{repo}/actions/artifacts/{artifact_id}/zip    (302 to a signed download URL)

The repository, API URL, workflow and run come from the run's CI context (clawspec/ci_context.py).
`{workflow}` is the current workflow's file (from `GITHUB_WORKFLOW_REF`), or the one named by
config `history: {github_workflow: nightly.yml}` when the baselines come from another workflow.
Only runs of the branch itself count (push, schedule, workflow_dispatch, ...): a pull request
from a fork whose branch is also called `main` is not a run of `main`. The newest 100 completed
runs of the branch are considered. The zip is read in memory; `clawspec-report.json` may sit at
any depth in it (the shallowest one wins).
"""

from __future__ import annotations

import io
import zipfile
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from clawspec.ci_context import CIContext
from clawspec.history.store import REPORT_NAME, HistoryError, StoredRun, parse_report
from clawspec.reports.github.api import PER_PAGE
from clawspec.reports.model import RunReport

DEFAULT_ARTIFACT = "clawspec-report"
MAX_REPORT_BYTES = 200 * 1024 * 1024
PR_EVENTS = frozenset({"pull_request", "pull_request_target"})
PERMISSION_HINT = (
    "the token cannot read this repository's Actions runs and artifacts: grant the job "
    "'permissions: actions: read' (and 'contents: read')"
)


class GitHubStore:
    """Workflow runs of one repository and workflow, with their report artifacts."""

    label = "github"

    def __init__(
        self,
        context: CIContext,
        token: str | None,
        *,
        artifact: str = DEFAULT_ARTIFACT,
        workflow: str | None = None,
        http: Any = None,
    ) -> None:
        github = context.github
        self.repository = github.repository or ""
        self.api_url = github.api_url
        self.artifact = artifact
        self.workflow = workflow or github.workflow_file
        self.workflow_name = github.workflow
        self.current_run = github.run_id
        self._token = token
        self._http = http
        self._api: Any = None

    def _client(self) -> Any:
        if not self.repository:
            raise HistoryError("the github store works on GitHub Actions: GITHUB_REPOSITORY unset")
        if not self._token:
            raise HistoryError(
                "the github store needs a token: set GITHUB_TOKEN (the action passes its "
                "github_token input) with 'permissions: actions: read'"
            )
        if self._api is None:
            from clawspec.reports.github.api import GitHubApi

            self._api = GitHubApi(self.api_url, self._token, self._http)
        return self._api

    def _get(self, url: str) -> Any:
        from clawspec.reports.github.api import GitHubApiError, GitHubForbiddenError

        try:
            return self._client().request("GET", url)
        except GitHubForbiddenError as exc:
            raise HistoryError(f"{exc}; {PERMISSION_HINT}") from None
        except GitHubApiError as exc:
            raise HistoryError(str(exc)) from None

    def branches(self) -> list[str]:
        return []  # the API cannot list "branches with runs" cheaply: name one with --branch

    def runs(self, branch: str) -> list[StoredRun]:
        repo = f"{self.api_url}/repos/{self.repository}/actions"
        query = f"branch={quote(branch, safe='')}&status=completed&per_page={PER_PAGE}"
        if self.workflow:
            url = f"{repo}/workflows/{quote(self.workflow, safe='')}/runs?{query}"
        else:
            url = f"{repo}/runs?{query}"
        data = self._get(url).json()
        items = data.get("workflow_runs") if isinstance(data, dict) else None
        runs = []
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict) or not self._counts(item, branch):
                continue
            head = item.get("head_commit") if isinstance(item.get("head_commit"), dict) else {}
            runs.append(
                StoredRun(
                    branch=branch,
                    key=str(item["id"]),
                    commit=item.get("head_sha"),
                    created_at=item.get("run_started_at") or item.get("created_at"),
                    committed_at=head.get("timestamp"),
                    event=item.get("event"),
                    location=str(item.get("html_url") or ""),
                )
            )
        return sorted(runs, key=lambda run: (run.created_at or "", int(run.key)))

    def _counts(self, item: dict[str, Any], branch: str) -> bool:
        if item.get("event") in PR_EVENTS or item.get("head_branch") != branch:
            return False
        if str(item.get("id")) == self.current_run:
            return False
        # Without a workflow file the repository-wide list is narrowed to this workflow's name.
        return bool(self.workflow) or item.get("name") == self.workflow_name

    def load(self, run: StoredRun) -> RunReport:
        base = f"{self.api_url}/repos/{self.repository}/actions"
        listing = self._get(f"{base}/runs/{run.key}/artifacts?name={quote(self.artifact)}")
        data = listing.json()
        found = [
            item
            for item in (data.get("artifacts") or [] if isinstance(data, dict) else [])
            if isinstance(item, dict) and item.get("name") == self.artifact
        ]
        where = f"workflow run {run.key} ({run.location or run.label()})"
        if not found:
            raise HistoryError(
                f"{where} has no artifact '{self.artifact}': upload the report folder with "
                f"actions/upload-artifact and 'name: {self.artifact}'"
            )
        artifact = max(found, key=lambda item: str(item.get("created_at") or ""))
        if artifact.get("expired"):
            raise HistoryError(
                f"artifact '{self.artifact}' of {where} expired on "
                f"{artifact.get('expires_at') or 'an earlier date'} (raise 'retention-days' "
                "of actions/upload-artifact, or use an s3:// or dir: store)"
            )
        # GitHub answers with a 302 to a signed URL; requests follows it and drops the
        # Authorization header because the host changes, as the download host requires.
        zipped = self._get(f"{base}/artifacts/{artifact['id']}/zip").content
        return parse_report(_report_from_zip(zipped, where), f"{where}, {REPORT_NAME}")

    def save(
        self,
        report: RunReport,
        *,
        committed_at: str | None = None,
    ) -> StoredRun:
        raise HistoryError(
            "the github store is written by the workflow: upload the report folder with "
            f"actions/upload-artifact and 'name: {self.artifact}'"
        )


def _report_from_zip(data: bytes, where: str) -> bytes:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise HistoryError(f"{where}: the artifact download is not a zip file") from None
    members = [
        info for info in archive.infolist() if PurePosixPath(info.filename).name == REPORT_NAME
    ]
    if not members:
        raise HistoryError(f"{where}: the artifact holds no {REPORT_NAME}")
    member = min(members, key=lambda info: (info.filename.count("/"), info.filename))
    if member.file_size > MAX_REPORT_BYTES:
        raise HistoryError(f"{where}: {member.filename} is larger than 200 MB")
    return archive.read(member)
