"""The GitHub check run: one per run, with every non-passing assertion on its contract line.

Workflow-command annotations stop at 10 errors and 10 warnings per step (50 per job); the Checks
API takes 50 annotations per request and any number of requests, so the check run carries all of
them. It is created completed, with the first 50 (`POST /repos/{o}/{r}/check-runs`); each further
50 are appended by `PATCH /repos/{o}/{r}/check-runs/{id}` (GitHub appends the annotations of an
update to those already there). Its title is the run's one-line summary, its summary the
headline, its text the job summary (within the 65,535-character limit), and its conclusion is the
run's outcome (reports/outcome.py), as the exit code is.

The commit is the PR's head for `pull_request` events (the event payload's
`pull_request.head.sha`: `GITHUB_SHA` is then the merge commit, which the PR does not show),
else `GITHUB_SHA`: the run's CI context (clawspec/ci_context.py) reads both. Texts are cleaned
and masked before they are cut to GitHub's field limits; in the Markdown of the summary and
text, what comes from outside shows as data (`markdown`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import requests

from clawspec.ci_context import CIContext
from clawspec.reports.changes import change_headline
from clawspec.reports.github.annotations import candidate_annotations
from clawspec.reports.github.api import (
    BACKOFF_S,
    GitHubApi,
    GitHubApiError,
    GitHubForbiddenError,
)
from clawspec.reports.github.markdown import inline
from clawspec.reports.github.outputs import one_line_summary
from clawspec.reports.github.summary import headline, render_summary
from clawspec.reports.model import RunReport
from clawspec.reports.outcome import Policy, RunOutcome, decide
from clawspec.secrets import register, scope
from clawspec.text import clean, cut, cut_bytes, pluralize

PER_REQUEST = 50  # annotations per create/update request (Checks API)
# Field limits of the Checks API: annotation title 255 characters, message 64 KB, output summary
# and text 65,535 characters. Bytes are counted where GitHub counts KB (bytes >= characters).
TITLE_CHARS = 255
MESSAGE_BYTES = 64_000
TEXT_CHARS = 65_535
TEXT_BUDGET_BYTES = 65_000
_LEVEL = {"error": "failure", "warning": "warning", "notice": "notice"}

FORBIDDEN_HINT = (
    "the token may not write checks (pull requests from forks get a read-only GITHUB_TOKEN); "
    "the job summary, annotations and reports still carry the results. Grant "
    "'permissions: checks: write', or set check_run: false"
)


@dataclass(frozen=True)
class CheckTarget:
    """Where the check run goes."""

    api_url: str
    repository: str  # owner/name
    head_sha: str
    name: str


@dataclass(frozen=True)
class CheckRunResult:
    """The check run written: its id, web URL, conclusion and how many annotations it has."""

    check_run_id: int
    url: str | None
    conclusion: str
    annotations: int
    requests: int


def head_sha(context: CIContext) -> str | None:
    """Return the commit to attach the check run to: the PR's head, else GITHUB_SHA."""
    return context.github.head_sha


def is_fork_pull_request(context: CIContext) -> bool:
    """True for a `pull_request` event from a fork: its GITHUB_TOKEN is read-only."""
    return context.github.fork


def check_name(context: CIContext, override: str | None, report: RunReport) -> str:
    """Return the check run's name: `override`, else 'ClawSpec: <job>' (GITHUB_JOB).

    Not the bare job name: the job has a check of that name already, which branch protection
    may require, and two checks of one name on a commit would race for it.
    """
    job = context.github.job
    name = override or (f"ClawSpec: {job}" if job else "ClawSpec")
    if report.shard is not None:  # only with shard_publish: each shard its own check
        name += f" (shard {report.shard.index}/{report.shard.total})"
    return name


def find_check_target(
    context: CIContext, report: RunReport, name: str | None = None
) -> CheckTarget | None:
    """Return where the check run goes, or None without a repository or a commit."""
    repository, sha = context.github.repository, head_sha(context)
    if not repository or not sha:
        return None
    return CheckTarget(context.github.api_url, repository, sha, check_name(context, name, report))


def _cut_bytes(text: str, limit: int) -> str:
    return cut_bytes(text, limit)  # masks first: a cut could split a secret


def _cut_chars(text: str, limit: int) -> str:
    return cut(text, limit)


def check_annotations(
    report: RunReport,
    repo_root: str | Path | None = None,
    workspace: Path | None = None,
) -> list[dict[str, Any]]:
    """Return every annotation the report calls for, as Checks API annotation objects.

    The same selection as the workflow commands (regressed → failure, flaky → warning, failed
    or errored → failure, warned → warning, skipped scenario → notice), uncapped. One without a
    file and line (a missing shard) has no place in a check run: the title and summary say it.
    """
    found = []
    for item in candidate_annotations(report, repo_root, workspace):
        if not item.file or not item.line:
            continue
        found.append(
            {
                "path": item.file,
                "start_line": item.line,
                "end_line": item.line,
                "annotation_level": _LEVEL[item.level],
                "title": _cut_chars(clean(item.title), TITLE_CHARS),
                "message": _cut_bytes(clean(item.message), MESSAGE_BYTES),
            }
        )
    return found


def render_output(
    report: RunReport,
    annotations: list[dict[str, Any]],
    outcome: RunOutcome | None = None,
) -> dict[str, str]:
    """Return the check run's title, short summary and text (the job summary), each headed by
    the run's verdict (`outcome`; without one, the default exit policy's)."""
    outcome = outcome or decide(report, Policy())
    counts: dict[str, int] = {}
    for item in annotations:
        counts[item["annotation_level"]] = counts.get(item["annotation_level"], 0) + 1
    lines = [headline(report, outcome), ""]
    if change := change_headline(report):  # names a branch: data
        lines += [inline(change), ""]
    if annotations:
        parts = [pluralize(n, level) for level, n in counts.items()]
        lines.append(
            f"{pluralize(len(annotations), 'annotation')} on the contract lines "
            f"({', '.join(parts)}); the details below."
        )
    else:
        lines.append("No assertion to annotate.")
    text = render_summary(
        report,
        TEXT_BUDGET_BYTES,
        limit_name="GitHub's 65,535-character check run limit",
        outcome=outcome,
    )
    return {
        "title": _cut_chars(clean(one_line_summary(report, outcome)), TITLE_CHARS),
        "summary": _cut_chars(clean("\n".join(lines) + "\n"), TEXT_CHARS),
        "text": _cut_chars(text, TEXT_CHARS),
    }


def _timestamps(report: RunReport) -> dict[str, str]:
    try:
        started = datetime.fromisoformat(report.started_at)
    except ValueError:
        return {}
    if started.tzinfo is None:
        started = started.replace(tzinfo=UTC)
    completed = started + timedelta(milliseconds=report.duration_ms)
    fmt = "%Y-%m-%dT%H:%M:%SZ"
    return {
        "started_at": started.astimezone(UTC).strftime(fmt),
        "completed_at": completed.astimezone(UTC).strftime(fmt),
    }


def _send(
    api: GitHubApi,
    target: CheckTarget,
    report: RunReport,
    outcome: RunOutcome,
    annotations: list[dict[str, Any]],
) -> CheckRunResult:
    """Create the check run with the first 50 annotations, then append the rest 50 at a time.

    `output.text` goes with the first and the last request only: it is large, and should an
    update without it clear it, the last one puts it back.
    """
    output = render_output(report, annotations, outcome)
    batches = [annotations[i : i + PER_REQUEST] for i in range(0, len(annotations), PER_REQUEST)]
    first, rest = (batches[0] if batches else []), batches[1:]
    verdict = outcome.conclusion
    body: dict[str, Any] = {
        "name": target.name,
        "head_sha": target.head_sha,
        "status": "completed",
        "conclusion": verdict,
        "external_id": report.run_id,
        **_timestamps(report),
        "output": {**output, "annotations": first},
    }
    url = f"{api.api_url}/repos/{target.repository}/check-runs"
    data = api.request("POST", url, body).json()
    check_id = int(data["id"])
    sent = 1
    for number, batch in enumerate(rest, start=1):
        update = {"title": output["title"], "summary": output["summary"], "annotations": batch}
        if number == len(rest):
            update["text"] = output["text"]
        try:
            api.request("PATCH", f"{url}/{check_id}", {"output": update})
        except GitHubApiError as exc:
            added = len(first) + PER_REQUEST * (number - 1)
            # Its summary counts every annotation: say on the check run itself that some are
            # missing (best effort: GitHub just failed a call).
            note = (
                f"\n\n> **Only {added:,} of the {len(annotations):,} annotations could be "
                "added** (GitHub refused the rest); every failure is in the job summary and "
                "the JSON report."
            )
            with contextlib.suppress(GitHubApiError):
                fixed = {"title": output["title"], "summary": output["summary"] + note}
                api.request("PATCH", f"{url}/{check_id}", {"output": fixed})
            raise type(exc)(
                f"check run {check_id} created, but only {added} of {len(annotations)} "
                f"annotations were added: {exc}",
                exc.status,
            ) from None
        sent += 1
    return CheckRunResult(check_id, data.get("html_url"), verdict, len(annotations), sent)


def publish_check_run(
    report: RunReport,
    context: CIContext,
    token: str | None,
    outcome: RunOutcome,
    *,
    name: str | None = None,
    workspace: Path | None = None,
    http: requests.Session | None = None,
    sleep: Callable[[float], None] = time.sleep,
    backoff_s: float = BACKOFF_S,
) -> CheckRunResult | None:
    """Write the run's check run; None without a repository or commit to attach it to.

    Its conclusion is `outcome`'s: `failure` when the step fails, `cancelled` for an
    interrupted run, `neutral` when the step passes but nothing ran or a failure was let
    through, else `success`. Raises GitHubApiError (GitHubForbiddenError without
    `checks: write`) with a printable
    message; the caller turns it into a warning.
    """
    target = find_check_target(context, report, name)
    if target is None:
        return None
    if not token:
        raise GitHubApiError(
            "no GitHub token: set GITHUB_TOKEN (the action passes its github_token input)"
        )
    # The command's registry, or one for this call: the token is masked whoever passed it (an
    # error body may echo it).
    with scope():
        register(token)
        annotations = check_annotations(report, context.github.workspace, workspace)
        api = GitHubApi(target.api_url, token, http, sleep, backoff_s)
        try:
            return _send(api, target, report, outcome, annotations)
        except GitHubForbiddenError as exc:
            raise GitHubForbiddenError(clean(f"{exc}; {FORBIDDEN_HINT}")) from None
        except GitHubApiError as exc:
            raise GitHubApiError(clean(str(exc))) from None
