"""The pull-request comment: one per workflow and job, created once and then updated in place.

The comment carries a hidden marker (`<!-- clawspec:{workflow}:{job} -->`); a later run finds it
by paging through the PR's comments and PATCHes it instead of adding a new one. It also carries a
hidden fingerprint of the verdicts (`<!-- clawspec-verdicts:<hash> -->`), which the `changes`
mode compares. The mode decides when a comment is worth a notification (GitHub notifies on a new
comment, not on an edit): `always` creates or updates; `failures` creates only when something
failed or errored; `changes` creates only when the verdicts differ from the last comment's (or,
without one, from the baseline's) and otherwise updates the last comment in place. Every mode
updates an existing comment, so a fixed PR's comment turns green.
REST calls go through `GitHubApi` (retries, rate limits). A token that may not comment (pull
requests from forks get a read-only token) is a warning, never a failed run.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import requests

from clawspec.ci_context import CIContext
from clawspec.reports.github.api import (
    BACKOFF_S,
    PER_PAGE,
    GitHubApi,
    GitHubApiError,
    GitHubForbiddenError,
)
from clawspec.reports.github.markdown import code_span
from clawspec.reports.github.summary import render_summary
from clawspec.reports.model import RunReport
from clawspec.reports.outcome import RunOutcome
from clawspec.reports.turns import check_label, turn_label
from clawspec.secrets import mask, register, scope
from clawspec.text import clean, cut, one_line

# GitHub refuses comment bodies over 65,536 characters; stay well below (bytes >= characters).
MAX_BODY_CHARS = 65_536
BODY_BUDGET_BYTES = 60_000
MAX_PAGES = 50

CommentMode = Literal["always", "changes", "failures", "off"]
COMMENT_MODES: tuple[str, ...] = ("always", "changes", "failures", "off")
_FINGERPRINT = re.compile(r"<!-- clawspec-verdicts:([0-9a-f]{16}) -->")

FORK_HINT = (
    "the token may not write to this pull request (pull requests from forks get a read-only "
    "GITHUB_TOKEN); the job summary and annotations still carry the results. Grant "
    "'permissions: pull-requests: write', or run the comment from a 'workflow_run' workflow"
)


# The same, for a run that ran nothing: no summary holds results then, the log and the
# annotations hold the problems.
STOPPED_FORK_HINT = (
    "the token may not write to this pull request (pull requests from forks get a read-only "
    "GITHUB_TOKEN); the job's log and annotations carry the problems. Grant 'permissions: "
    "pull-requests: write', or run the comment from a 'workflow_run' workflow"
)


# The comment's errors are the client's (the names stay for the callers that catch them).
PrCommentError = GitHubApiError
PrCommentForbiddenError = GitHubForbiddenError


@dataclass(frozen=True)
class PrTarget:
    """Where the comment goes."""

    api_url: str
    repository: str  # owner/name
    number: int
    marker: str


@dataclass(frozen=True)
class CommentResult:
    """What happened: `created`, `updated` or `skipped` (and why), the comment id and URL."""

    action: str
    comment_id: int | None = None
    url: str | None = None
    reason: str = ""


def comment_marker(context: CIContext) -> str:
    """Return the hidden marker naming this workflow and job."""
    workflow = context.github.workflow or "workflow"
    job = context.github.job or "job"
    safe = [part.replace("--", "-").replace(">", "").replace(":", "_") for part in (workflow, job)]
    return f"<!-- clawspec:{safe[0]}:{safe[1]} -->"


def pull_request_number(context: CIContext) -> int | None:
    """The PR number the event payload names (`pull_request`, else `issue` of an issue_comment
    event); None: not a PR, or the payload could not be read (`github.event_error`)."""
    return context.github.issue_number


def find_target(context: CIContext) -> PrTarget | None:
    """Return where to comment, or None when this run is not about a pull request."""
    number = pull_request_number(context)
    repository = context.github.repository
    if number is None or not repository:
        return None
    return PrTarget(context.github.api_url, repository, number, comment_marker(context))


def verdict_fingerprint(report: RunReport) -> str:
    """Return a short hash of the verdicts: each scenario's status and each assertion's (and
    a conversation's turns', each named with its turn).

    Only (scenario, assertion, status) enter it, never durations, messages or measured
    values, so a re-run that ends the same way has the same fingerprint. The scenario is its
    identity's label: its id, with the variant when there is one.
    """
    items: list[tuple[str, str, str]] = []
    for scenario in report.scenarios:
        label = scenario.identity.label
        items.append((label, "scenario", scenario.status.value))
        # A turn's check is named with its turn: two turns' then[0] are two checks.
        items += [(label, check_label(a), a.status.value) for a in scenario.checks()]
        items += [(label, turn_label(t.index), t.status.value) for t in scenario.turns or ()]
    return hashlib.sha256(json.dumps(sorted(items)).encode()).hexdigest()[:16]


def fingerprint_of(body: str) -> str | None:
    """Return the verdict fingerprint a comment body carries (None: none, e.g. an older one)."""
    match = _FINGERPRINT.search(body)
    return match.group(1) if match else None


def has_failures(report: RunReport) -> bool:
    """True when a scenario failed or errored, or a shard of a merged run is missing."""
    totals = report.totals
    return bool(totals.failed or totals.errored or (report.merged and report.merged.missing))


def changed_against_baseline(report: RunReport) -> bool | None:
    """True when a scenario's verdict differs from the baseline's (None: not compared)."""
    comparison = report.comparison
    if comparison is None or comparison.baseline_missing is not None:
        return None
    return any(c.status != c.baseline_status for c in comparison.scenarios)


def decide(mode: str, report: RunReport, existing: str | None) -> tuple[str, str]:
    """Return what a comment mode does: ("create" | "update" | "skip", why).

    `existing` is the body of this job's latest comment on the PR (None: there is none).
    """
    if mode == "off":
        return "skip", "pr_comment is off"
    if mode == "changes":
        if existing is not None:
            before = fingerprint_of(existing)
            if STOPPED_MARK in existing:  # "nothing ran": these are the first verdicts since
                return "create", "the last comment said nothing ran"
            if before is not None and before != verdict_fingerprint(report):
                return "create", "the verdicts changed since the last comment"
            return "update", "the verdicts are those of the last comment"
        against = changed_against_baseline(report)
        if against is None:
            return "create", "first results, and no baseline to compare with"
        if not against:
            return "skip", "the verdicts are those of the baseline"
        return "create", "the verdicts changed against the baseline"
    if existing is not None:
        return "update", ""
    if mode == "failures" and not has_failures(report):
        return "skip", "nothing failed or errored"
    return "create", ""


def render_pr_comment(
    report: RunReport,
    marker: str,
    outcome: RunOutcome | None = None,
) -> str:
    """Return the comment body: the marker, the summary within the comment size limit, and the
    verdict fingerprint."""
    fingerprint = f"<!-- clawspec-verdicts:{verdict_fingerprint(report)} -->"
    budget = BODY_BUDGET_BYTES - len(marker.encode()) - len(fingerprint) - 2
    summary = render_summary(
        report,
        budget,
        limit_name="GitHub's 65,536-character comment limit",
        outcome=outcome,
    )
    body = f"{marker}\n{summary}{fingerprint}\n"
    return cut(body, MAX_BODY_CHARS, mark="")


def comments(api: GitHubApi, target: PrTarget) -> Iterable[dict[str, Any]]:
    """Yield every comment of the PR, following the `Link: rel="next"` pages."""
    url: str | None = (
        f"{api.api_url}/repos/{target.repository}/issues/{target.number}/comments"
        f"?per_page={PER_PAGE}"
    )
    for _ in range(MAX_PAGES):
        if not url:
            return
        response = api.request("GET", url)
        items = response.json()
        if not isinstance(items, list):
            raise GitHubApiError(f"GET {url.split('?', 1)[0]}: expected a list of comments")
        yield from (item for item in items if isinstance(item, dict))
        url = response.links.get("next", {}).get("url")


def latest_comment(api: GitHubApi, target: PrTarget) -> dict[str, Any] | None:
    """Return this job's newest comment (GitHub lists the oldest first), or None. Its body
    starts with the marker: a person's comment that quotes or mentions it is never taken
    (updating it would replace what they wrote)."""
    found = None
    for comment in comments(api, target):
        if str(comment.get("body")).startswith(target.marker):
            found = comment
    return found


def write_comment(
    api: GitHubApi, target: PrTarget, report: RunReport, body: str, mode: str = "always"
) -> CommentResult:
    """Create, update or skip the comment as `mode` decides."""
    existing = latest_comment(api, target)
    action, why = decide(mode, report, None if existing is None else str(existing.get("body")))
    if action == "skip":
        return CommentResult("skipped", reason=why)
    return _put(api, target, existing if action == "update" else None, body, why)


def _put(
    api: GitHubApi, target: PrTarget, existing: dict[str, Any] | None, body: str, why: str
) -> CommentResult:
    """Update `existing`, else (none, or deleted since it was listed) create the comment."""
    if existing is not None:
        url = f"{api.api_url}/repos/{target.repository}/issues/comments/{existing['id']}"
        try:
            data = api.request("PATCH", url, {"body": body}).json()
        except GitHubApiError as exc:
            if exc.status != 404:
                raise
            # Deleted since it was listed (by a person, or another job): a new one. Should the
            # token be unable to write after all, creating it says so.
        else:
            comment_id = int(data.get("id", existing["id"]))
            return CommentResult("updated", comment_id, data.get("html_url"), why)
    url = f"{api.api_url}/repos/{target.repository}/issues/{target.number}/comments"
    data = api.request("POST", url, {"body": body}).json()
    return CommentResult("created", int(data["id"]), data.get("html_url"), why)


# In the body of a comment that says nothing ran: the `changes` mode's next results are new.
STOPPED_MARK = "<!-- clawspec-nothing-ran -->"
# How many of the problems that stopped a run the comment lists (the log and annotations have
# them all).
STOPPED_LISTED = 20


def render_stopped_comment(marker: str, problems: Sequence[str], merge: bool = False) -> str:
    """The comment of a run that invalid contracts stopped before anything ran, or of a merge
    that found no report to merge: the problems, and no verdicts (an earlier run's would be
    read as this push's)."""
    listed = "\n".join(f"- {code_span(one_line(p))}" for p in problems[:STOPPED_LISTED])
    more = len(problems) - STOPPED_LISTED
    more_line = f"\n- … and {more} more in the job's log" if more > 0 else ""
    said = (
        "The merge found no report to merge (exit 2): the shard or variant jobs may have "
        "stopped before writing theirs (invalid contracts?), and their logs say why"
        if merge
        else f"{len(problems)} problem(s) in the contracts stopped the run before any scenario "
        "ran (exit 2)"
    )
    return cut(
        f"{marker}\n### ClawSpec: nothing ran\n\n{said}:\n\n{listed}{more_line}\n\n"
        f"Fix them and push again: the results will replace this comment.\n{STOPPED_MARK}\n",
        MAX_BODY_CHARS,
        mark="",
    )


def publish_stopped_comment(
    context: CIContext,
    token: str | None,
    problems: Sequence[str],
    *,
    merge: bool = False,
    http: requests.Session | None = None,
    sleep: Callable[[float], None] = time.sleep,
    backoff_s: float = BACKOFF_S,
) -> CommentResult | None:
    """Say on the pull request that invalid contracts stopped the run: this job's comment is
    updated (it held an earlier push's results), or created. None: not about a pull request."""

    def write(api: GitHubApi, target: PrTarget) -> CommentResult:
        body = mask(render_stopped_comment(target.marker, problems, merge))
        return _put(api, target, latest_comment(api, target), body, "nothing ran")

    return _with_api(context, token, write, STOPPED_FORK_HINT, http, sleep, backoff_s)


def _with_api(
    context: CIContext,
    token: str | None,
    write: Callable[[GitHubApi, PrTarget], CommentResult],
    fork_hint: str,
    http: requests.Session | None,
    sleep: Callable[[float], None],
    backoff_s: float,
) -> CommentResult | None:
    """`write` the comment of the run's pull request (None: not about one) with the token
    masked whoever passed it (an error body may echo it) and errors said in a printable way."""
    target = find_target(context)
    if target is None:
        return None
    if not token:
        raise PrCommentError(
            "no GitHub token: set GITHUB_TOKEN (the action passes its github_token input)"
        )
    with scope():  # the command's registry, or one for this call
        register(token)
        api = GitHubApi(target.api_url, token, http, sleep, backoff_s)
        try:
            return write(api, target)
        except PrCommentForbiddenError as exc:
            raise PrCommentForbiddenError(clean(f"{exc}; {fork_hint}")) from None
        except PrCommentError as exc:
            raise PrCommentError(clean(str(exc))) from None


def publish_pr_comment(
    report: RunReport,
    context: CIContext,
    token: str | None,
    *,
    mode: str = "always",
    outcome: RunOutcome | None = None,
    http: requests.Session | None = None,
    sleep: Callable[[float], None] = time.sleep,
    backoff_s: float = BACKOFF_S,
) -> CommentResult | None:
    """Create, update or skip the PR comment as `mode` decides; None when the run is not about
    a pull request.

    Raises PrCommentError (or PrCommentForbiddenError) with a printable message on failure.
    """

    def write(api: GitHubApi, target: PrTarget) -> CommentResult:
        body = render_pr_comment(report, target.marker, outcome)
        return write_comment(api, target, report, body, mode)

    return _with_api(context, token, write, FORK_HINT, http, sleep, backoff_s)
