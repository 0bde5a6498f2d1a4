"""The GitHub REST client the PR comment, the check run and the `github` history store share.

REST API through `requests` at `GITHUB_API_URL`. Retries with backoff on 5xx, on 429 and on
GitHub's rate limits: a 403 or 429 carrying `Retry-After` waits that long, an exhausted primary
limit (`x-ratelimit-remaining: 0`) waits until `x-ratelimit-reset`, and a secondary limit without
either header backs off exponentially; a call with its retries and waits ends within CALL_S (a
limit that lifts later is said at once), and a create (POST) whose answer did not come in time is
not sent again (it may have been made). A 403 that is not a rate
limit means the token lacks a permission (pull requests from forks get a read-only token): that
is `GitHubForbiddenError`, which callers turn into a warning. The token is sent only in the
Authorization header and never appears in an error message. Each request has a deadline, not a
read timeout (`clawspec.net.deadline`): its whole answer must arrive within TIMEOUT_S's second
value, so a server that trickles its answer cannot hold the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import requests

from clawspec.net import deadline as net
from clawspec.net import sessions
from clawspec.text import one_line

PER_PAGE = 100  # the most items GitHub lists per page
MAX_ATTEMPTS = 4
BACKOFF_S = 1.0
TIMEOUT_S = (10, 60)  # (connect, the whole answer: a deadline, artifact downloads included)
# One call, its retries and their waits included, ends within this: a server that accepts and
# never answers costs the job this much per call, not four full timeouts and their waits.
CALL_S = 90.0


class GitHubApiError(Exception):
    """A call failed; the message is safe to print (method, URL without query, status, reason).
    `status`: the HTTP status GitHub answered (None: no answer)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class GitHubForbiddenError(GitHubApiError):
    """The token may not do this (403, or 404 on a write): a missing permission, a fork PR."""


class GitHubApi:
    """Send REST requests with retries; errors never contain the token."""

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
        self._http = http or sessions.session()
        self._sleep = sleep
        self._backoff_s = backoff_s

    def request(
        self, method: str, url: str, body: dict[str, Any] | None = None
    ) -> requests.Response:
        """Send one request, retrying 5xx, 429 and rate limits; raise on failure."""
        headers = {
            "Authorization": f"Bearer {self._token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "clawspec",
        }
        shown = url.split("?", 1)[0]
        limited = False
        ends = time.monotonic() + CALL_S
        for attempt in range(1, MAX_ATTEMPTS + 1):
            left = max(ends - time.monotonic(), 1.0)
            try:
                response = net.request(
                    self._http,
                    method,
                    url,
                    json=body,
                    headers=headers,
                    deadline=net.Deadline.after(min(TIMEOUT_S[1], left)),
                    connect_timeout_s=TIMEOUT_S[0],
                )
            except requests.RequestException as exc:
                backoff = self._backoff_s * 2 ** (attempt - 1)
                # A create whose answer did not come may have been made: sent again, it would
                # make a second comment or check run (the next run updates only one of them).
                maybe_done = method == "POST" and isinstance(exc, requests.Timeout)
                if attempt == MAX_ATTEMPTS or maybe_done or time.monotonic() + backoff >= ends:
                    cause = str(exc) if isinstance(exc, net.DeadlineExceeded) else ""
                    raise GitHubApiError(
                        f"{method} {shown} failed: {type(exc).__name__}"
                        + (f" ({cause})" if cause else "")
                    ) from None
                self._sleep(backoff)
                continue
            wait = self._retry_wait(response, attempt)
            limited = wait is not None and response.status_code in (403, 429)
            if wait is None or attempt == MAX_ATTEMPTS or time.monotonic() + wait >= ends:
                break  # a limit that lifts only after the call's time: said now, not waited for
            self._sleep(wait)
        if response.status_code >= 400:
            text = f"{method} {shown} → {response.status_code}: {_error_message(response)}"
            forbidden = response.status_code == 403 or (
                response.status_code == 404 and method != "GET"
            )
            if forbidden and not limited:  # a rate limit that never lifted is not a permission
                raise GitHubForbiddenError(text, response.status_code)
            raise GitHubApiError(text, response.status_code)
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
            # The wait GitHub asks for, whole: one that ends past the call's time (CALL_S) is
            # not waited for at all (a primary limit reset in an hour cannot lift in time).
            if retry_after and retry_after.strip().isdigit():
                return float(retry_after)
            reset = response.headers.get("x-ratelimit-reset")
            if exhausted and reset and reset.isdigit():
                return max(0.0, float(reset) - time.time())
            return self._backoff_s * 2 ** (attempt - 1)
        return None


def _error_message(response: requests.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return one_line(response.text, 160)
    if isinstance(data, dict) and data.get("message"):
        return one_line(str(data["message"]), 160)
    return one_line(response.text, 160)
