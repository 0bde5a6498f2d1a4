"""The pull-request comment: one per workflow and job, created once and then updated in place.

The comment carries a hidden marker (`<!-- clawspec:{workflow}:{job} -->`); a later run finds it
by paging through the PR's comments and PATCHes it instead of adding a new one. REST API through
`requests` at `GITHUB_API_URL`; retries with backoff on 5xx and on secondary rate limits.
A token that may not comment (pull requests from forks get a read-only token) is a warning,
never a failed run. The token is sent only in the Authorization header and never printed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from clawspec.reports.github.summary import render_summary
from clawspec.reports.model import RunReport
from clawspec.text import clean, one_line

DEFAULT_API_URL = "https://api.github.com"
# GitHub refuses comment bodies over 65,536 characters; stay well below (bytes >= characters).
MAX_BODY_CHARS = 65_536
BODY_BUDGET_BYTES = 60_000
MAX_ATTEMPTS = 4
BACKOFF_S = 1.0
MAX_WAIT_S = 60.0
TIMEOUT_S = (10, 30)
PER_PAGE = 100
MAX_PAGES = 50

FORK_HINT = (
    "the token may not write to this pull request (pull requests from forks get a read-only "
    "GITHUB_TOKEN); the job summary and annotations still carry the results. Grant "
    "'permissions: pull-requests: write', or run the comment from a 'workflow_run' workflow"
)


class PrCommentError(Exception):
    """The comment could not be written; the message is safe to print (no token, no body)."""


class PrCommentForbiddenError(PrCommentError):
    """The token may not comment (403), e.g. on a pull request from a fork."""


@dataclass(frozen=True)
class PrTarget:
    """Where the comment goes."""

    api_url: str
    repository: str  # owner/name
    number: int
    marker: str


@dataclass(frozen=True)
class CommentResult:
    """What happened: `created` or `updated`, the comment id and its web URL."""

    action: str
    comment_id: int
    url: str | None = None


def comment_marker(environ: Mapping[str, str]) -> str:
    """Return the hidden marker naming this workflow and job."""
    workflow = environ.get("GITHUB_WORKFLOW") or "workflow"
    job = environ.get("GITHUB_JOB") or "job"
    safe = [part.replace("--", "-").replace(">", "").replace(":", "_") for part in (workflow, job)]
    return f"<!-- clawspec:{safe[0]}:{safe[1]} -->"


def pull_request_number(environ: Mapping[str, str]) -> int | None:
    """Read the PR number from the event payload at `GITHUB_EVENT_PATH` (None: not a PR)."""
    path = environ.get("GITHUB_EVENT_PATH")
    if not path:
        return None
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for key in ("pull_request", "issue"):
        item = event.get(key) if isinstance(event, dict) else None
        if isinstance(item, dict) and isinstance(item.get("number"), int):
            return int(item["number"])
    return None


def find_target(environ: Mapping[str, str]) -> PrTarget | None:
    """Return where to comment, or None when this run is not about a pull request."""
    number = pull_request_number(environ)
    repository = environ.get("GITHUB_REPOSITORY")
    if number is None or not repository:
        return None
    api_url = (environ.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")
    return PrTarget(api_url, repository, number, comment_marker(environ))


def render_pr_comment(report: RunReport, marker: str, secrets: Iterable[str] = ()) -> str:
    """Return the comment body: the marker, then the summary within the comment size limit."""
    budget = BODY_BUDGET_BYTES - len(marker.encode()) - 1
    summary = render_summary(
        report, budget, secrets, limit_name="GitHub's 65,536-character comment limit"
    )
    body = f"{marker}\n{summary}"
    return body[:MAX_BODY_CHARS]


class GitHubApi:
    """The few REST calls the comment needs, with retries; errors never contain the token."""

    def __init__(
        self,
        api_url: str,
        token: str,
        http: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
        backoff_s: float = BACKOFF_S,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self._token = token
        self._http = http or requests.Session()
        self._sleep = sleep
        self._backoff_s = backoff_s

    def request(
        self, method: str, url: str, body: dict[str, Any] | None = None
    ) -> requests.Response:
        """Send one request, retrying 5xx, 429 and secondary rate limits; raise on failure."""
        headers = {
            "Authorization": f"Bearer {self._token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "clawspec",
        }
        shown = url.split("?", 1)[0]
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                response = self._http.request(
                    method, url, json=body, headers=headers, timeout=TIMEOUT_S
                )
            except requests.RequestException as exc:
                if attempt == MAX_ATTEMPTS:
                    raise PrCommentError(f"{method} {shown} failed: {type(exc).__name__}") from None
                self._sleep(self._backoff_s * 2 ** (attempt - 1))
                continue
            wait = self._retry_wait(response, attempt)
            if wait is None or attempt == MAX_ATTEMPTS:
                break
            self._sleep(wait)
        if response.status_code >= 400:
            message = _error_message(response)
            text = f"{method} {shown} → {response.status_code}: {message}"
            if response.status_code == 403 or (response.status_code == 404 and method != "GET"):
                raise PrCommentForbiddenError(text)
            raise PrCommentError(text)
        return response

    def _retry_wait(self, response: requests.Response, attempt: int) -> float | None:
        status = response.status_code
        retry_after = response.headers.get("retry-after")
        exhausted = response.headers.get("x-ratelimit-remaining") == "0"
        secondary = "secondary rate limit" in response.text.lower()
        if (
            status >= 500
            or status == 429
            or (status == 403 and (retry_after or exhausted or secondary))
        ):
            if retry_after and retry_after.strip().isdigit():
                return min(float(retry_after), MAX_WAIT_S)
            reset = response.headers.get("x-ratelimit-reset")
            if exhausted and reset and reset.isdigit():
                return min(max(0.0, float(reset) - time.time()), MAX_WAIT_S)
            return self._backoff_s * 2 ** (attempt - 1)
        return None

    def comments(self, target: PrTarget) -> Iterable[dict[str, Any]]:
        """Yield every comment of the PR, following the `Link: rel="next"` pages."""
        url: str | None = (
            f"{self.api_url}/repos/{target.repository}/issues/{target.number}/comments"
            f"?per_page={PER_PAGE}"
        )
        for _ in range(MAX_PAGES):
            if not url:
                return
            response = self.request("GET", url)
            items = response.json()
            if not isinstance(items, list):
                raise PrCommentError(f"GET {url.split('?', 1)[0]}: expected a list of comments")
            yield from (item for item in items if isinstance(item, dict))
            url = response.links.get("next", {}).get("url")

    def upsert(self, target: PrTarget, body: str) -> CommentResult:
        """PATCH the comment that carries the marker, else POST a new one."""
        existing = next(
            (c for c in self.comments(target) if target.marker in str(c.get("body"))), None
        )
        if existing is not None:
            url = f"{self.api_url}/repos/{target.repository}/issues/comments/{existing['id']}"
            data = self.request("PATCH", url, {"body": body}).json()
            return CommentResult(
                "updated", int(data.get("id", existing["id"])), data.get("html_url")
            )
        url = f"{self.api_url}/repos/{target.repository}/issues/{target.number}/comments"
        data = self.request("POST", url, {"body": body}).json()
        return CommentResult("created", int(data["id"]), data.get("html_url"))


def _error_message(response: requests.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return one_line(response.text, 160)
    if isinstance(data, dict) and data.get("message"):
        return one_line(str(data["message"]), 160)
    return one_line(response.text, 160)


def publish_pr_comment(
    report: RunReport,
    environ: Mapping[str, str],
    token: str | None,
    secrets: Iterable[str] = (),
    *,
    http: requests.Session | None = None,
    sleep: Callable[[float], None] = time.sleep,
    backoff_s: float = BACKOFF_S,
) -> CommentResult | None:
    """Create or update the PR comment; None when the run is not about a pull request.

    Raises PrCommentError (or PrCommentForbiddenError) with a printable message on failure.
    """
    target = find_target(environ)
    if target is None:
        return None
    if not token:
        raise PrCommentError(
            "no GitHub token: set GITHUB_TOKEN (the action passes its github_token input)"
        )
    secrets = [*secrets, token]
    body = render_pr_comment(report, target.marker, secrets)
    api = GitHubApi(target.api_url, token, http, sleep, backoff_s)
    try:
        return api.upsert(target, body)
    except PrCommentForbiddenError as exc:
        raise PrCommentForbiddenError(clean(f"{exc}; {FORK_HINT}", secrets)) from None
    except PrCommentError as exc:
        raise PrCommentError(clean(str(exc), secrets)) from None
