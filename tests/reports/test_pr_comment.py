"""PR comment against a local GitHub REST API: create, update in place, retries, fork 403."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from clawspec.ci_context import CIContext
from clawspec.config.settings import Settings
from clawspec.reports.github.pr_comment import (
    MAX_BODY_CHARS,
    PrCommentError,
    PrCommentForbiddenError,
    comment_marker,
    publish_pr_comment,
    render_pr_comment,
)
from clawspec.reports.publish import publish
from tests.reports.factory import assertion, mixed_report, report, scenario
from tests.support.github_api import FORK_MESSAGE, GitHubApiServer, pull_request_environ

TOKEN = "ghs_test_token_0123456789"
MARKER = "<!-- clawspec:CI:test -->"


@pytest.fixture
def api() -> Iterator[GitHubApiServer]:
    with GitHubApiServer(TOKEN) as server:
        yield server


@pytest.fixture
def environ(api: GitHubApiServer, tmp_path: Path) -> dict[str, str]:
    return pull_request_environ(api.url, tmp_path)


def _no_sleep(seconds: float) -> None:
    return None


def test_first_run_creates_and_second_run_updates_the_same_comment(
    api: GitHubApiServer, environ: dict[str, str]
) -> None:
    api.add_comment(7, "an unrelated review comment")
    first = publish_pr_comment(
        mixed_report(), CIContext.from_environ(environ), TOKEN, sleep=_no_sleep
    )
    assert first is not None
    assert first.action == "created"
    second = publish_pr_comment(
        report(scenario("only", "pass")), CIContext.from_environ(environ), TOKEN, sleep=_no_sleep
    )
    assert second is not None
    assert (second.action, second.comment_id) == ("updated", first.comment_id)
    ours = [c for c in api.comments(7) if MARKER in c["body"]]
    assert len(ours) == 1
    assert ours[0]["id"] == first.comment_id
    assert "**1 scenario**" in ours[0]["body"]
    assert len(api.comments(7)) == 2  # the unrelated comment is untouched
    assert all(r.headers.get("Authorization") == f"Bearer {TOKEN}" for r in api.requests)
    assert all(TOKEN not in json.dumps(r.body or {}) for r in api.requests)


def test_the_marker_is_found_on_a_later_page(api: GitHubApiServer, environ: dict[str, str]) -> None:
    for i in range(230):
        api.add_comment(7, f"comment {i}")
    existing = api.add_comment(7, f"{MARKER}\nold results")
    result = publish_pr_comment(
        mixed_report(), CIContext.from_environ(environ), TOKEN, sleep=_no_sleep
    )
    assert result is not None
    assert (result.action, result.comment_id) == ("updated", existing)
    pages = [r.path for r in api.requests if r.method == "GET"]
    assert len(pages) == 3
    assert "page=3" in pages[-1]


def test_a_comment_deleted_after_it_was_found_is_written_again(
    api: GitHubApiServer, environ: dict[str, str]
) -> None:
    """Deleted between the listing and the update (a person, another job): the update's 404 is
    no missing permission; a new comment is made."""
    api.add_comment(7, f"{MARKER}\nold results")
    api.fail_next(404, "Not Found", methods=("PATCH",))
    result = publish_pr_comment(
        mixed_report(), CIContext.from_environ(environ), TOKEN, sleep=_no_sleep
    )
    assert result is not None and result.action == "created"
    assert [r.method for r in api.requests] == ["GET", "PATCH", "POST"]


def test_a_502_is_retried(api: GitHubApiServer, environ: dict[str, str]) -> None:
    api.fail_next(502, "Bad Gateway", methods=("POST",))
    waits: list[float] = []
    result = publish_pr_comment(
        mixed_report(), CIContext.from_environ(environ), TOKEN, sleep=waits.append
    )
    assert result is not None
    assert result.action == "created"
    assert len(waits) == 1
    assert [r.method for r in api.requests] == ["GET", "POST", "POST"]


def test_a_secondary_rate_limit_waits_for_retry_after(
    api: GitHubApiServer, environ: dict[str, str]
) -> None:
    api.fail_next(
        403, "You have exceeded a secondary rate limit", {"Retry-After": "3"}, methods=("GET",)
    )
    waits: list[float] = []
    result = publish_pr_comment(
        mixed_report(), CIContext.from_environ(environ), TOKEN, sleep=waits.append
    )
    assert result is not None
    assert waits == [3.0]


def test_a_fork_403_raises_a_printable_forbidden_error(
    api: GitHubApiServer, environ: dict[str, str]
) -> None:
    api.forbid_writes()
    with pytest.raises(PrCommentForbiddenError) as caught:
        publish_pr_comment(mixed_report(), CIContext.from_environ(environ), TOKEN, sleep=_no_sleep)
    text = str(caught.value)
    assert f"POST {api.url}/repos/octo/repo/issues/7/comments → 403: {FORK_MESSAGE}" in text
    assert "forks" in text
    assert TOKEN not in text
    assert api.comments(7) == []


def test_persistent_5xx_gives_up_with_an_error(
    api: GitHubApiServer, environ: dict[str, str]
) -> None:
    for _ in range(4):
        api.fail_next(503, "unavailable", methods=("GET",))
    with pytest.raises(PrCommentError, match=r"GET .* → 503: unavailable"):
        publish_pr_comment(mixed_report(), CIContext.from_environ(environ), TOKEN, sleep=_no_sleep)


def test_no_pull_request_in_the_event_means_no_comment(
    api: GitHubApiServer, environ: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "event.json").write_text(json.dumps({"ref": "refs/heads/main"}))
    assert publish_pr_comment(mixed_report(), CIContext.from_environ(environ), TOKEN) is None
    assert api.requests == []


def test_issue_comment_events_use_the_issue_number(
    api: GitHubApiServer, environ: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "event.json").write_text(json.dumps({"issue": {"number": 12}}))
    publish_pr_comment(mixed_report(), CIContext.from_environ(environ), TOKEN, sleep=_no_sleep)
    assert len(api.comments(12)) == 1


def test_marker_names_workflow_and_job() -> None:
    assert (
        comment_marker(CIContext.from_environ({"GITHUB_WORKFLOW": "CI", "GITHUB_JOB": "test"}))
        == MARKER
    )
    assert (
        comment_marker(CIContext.from_environ({"GITHUB_WORKFLOW": "a-->b:c"}))
        == "<!-- clawspec:a-b_c:job -->"
    )


def test_body_stays_under_the_comment_limit() -> None:
    big = [scenario(f"s{i}", "fail", assertion("fail", "long reason " * 40)) for i in range(3000)]
    body = render_pr_comment(report(*big), MARKER)
    assert len(body) < MAX_BODY_CHARS
    assert body.startswith(MARKER + "\n## ClawSpec results")
    assert "GitHub's 65,536-character comment limit" in body


def test_publish_turns_a_fork_403_into_a_warning_and_writes_the_rest(
    api: GitHubApiServer, environ: dict[str, str], tmp_path: Path
) -> None:
    api.forbid_writes()
    environ = {
        **environ,
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
    }
    settings = Settings(
        report_dir=str(tmp_path / "reports"),
        junit=str(tmp_path / "reports" / "junit.xml"),
        pr_comment=True,
        github_token=TOKEN,
    )
    out, err = io.StringIO(), io.StringIO()
    written = publish(mixed_report(), settings, environ, stdout=out, stderr=err)
    assert [p.name for p in written] == ["clawspec-report.json", "junit.xml"]
    assert f"warning: PR comment not written: POST {api.url}" in err.getvalue()
    assert FORK_MESSAGE in err.getvalue()
    assert (tmp_path / "summary.md").exists()
    assert "total=6" in (tmp_path / "output").read_text()
    assert out.getvalue().startswith(f"::add-mask::{TOKEN}\n")
    for text in (err.getvalue(), (tmp_path / "summary.md").read_text()):
        assert TOKEN not in text


def test_the_comment_of_a_failing_conversation_names_the_turn_and_keeps_the_reply_inert() -> None:
    from tests.reports.conversation_report import (
        assert_inert,
        conversation_report,
        secret_registered,
    )

    marker = "<!-- clawspec:CI:tests -->"
    with secret_registered():
        body = render_pr_comment(conversation_report(), marker)
    assert_inert(body)
    assert body.startswith(marker)
    assert "`turn 2, then[0]` reply_contains: the reply does not contain 'Zed'" in body
    assert "💬 **turn 2**" in body and "&lt;script&gt;" in body
    assert "<script>" not in body and "**x**" not in body
