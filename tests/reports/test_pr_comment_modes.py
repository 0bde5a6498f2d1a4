"""PR comment modes against a local GitHub REST API: always, changes, failures, off."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from clawspec.ci_context import CIContext
from clawspec.config.settings import Settings
from clawspec.reports.github.pr_comment import (
    decide,
    fingerprint_of,
    publish_pr_comment,
    render_pr_comment,
    render_stopped_comment,
    verdict_fingerprint,
)
from clawspec.reports.model import Comparison, RunReport, ScenarioChange
from clawspec.reports.publish import publish
from tests.reports.factory import assertion, report, scenario
from tests.support.github_api import GitHubApiServer, pull_request_environ

TOKEN = "ghs_comment_modes_token_42"
MARKER = "<!-- clawspec:CI:test -->"


@pytest.fixture
def api() -> Iterator[GitHubApiServer]:
    with GitHubApiServer(TOKEN) as server:
        yield server


@pytest.fixture
def environ(api: GitHubApiServer, tmp_path: Path) -> dict[str, str]:
    return pull_request_environ(api.url, tmp_path)


def _green() -> RunReport:
    return report(
        scenario("a", "pass", assertion("pass")), scenario("b", "pass", assertion("pass"))
    )


def _red() -> RunReport:
    return report(
        scenario("a", "pass", assertion("pass")), scenario("b", "fail", assertion("fail"))
    )


def _against_baseline(data: RunReport, baseline_statuses: dict[str, str]) -> RunReport:
    changes = [
        ScenarioChange(
            id=s.id,
            change="unchanged",
            status=s.status,
            baseline_status=baseline_statuses[s.name],  # type: ignore[arg-type]
        )
        for s in data.scenarios
    ]
    return data.model_copy(update={"comparison": Comparison(scenarios=changes)})


def _comment(api: GitHubApiServer, data: RunReport) -> int:
    """Seed this job's comment as an earlier run left it."""
    return api.add_comment(7, render_pr_comment(data, MARKER))


def _publish(environ: dict[str, str], data: RunReport, mode: str) -> str | None:
    result = publish_pr_comment(
        data, CIContext.from_environ(environ), TOKEN, mode=mode, sleep=lambda _s: None
    )
    assert result is not None
    return result.action


def _writes(api: GitHubApiServer) -> list[str]:
    return [r.method for r in api.requests if r.method != "GET"]


# ---------------------------------------------------------------- the fingerprint


def test_fingerprint_is_in_the_body_and_ignores_durations_and_messages() -> None:
    body = render_pr_comment(_red(), MARKER)
    assert fingerprint_of(body) == verdict_fingerprint(_red())
    assert body.rstrip().endswith(f"<!-- clawspec-verdicts:{verdict_fingerprint(_red())} -->")
    slower = report(
        scenario("a", "pass", assertion("pass", "other words"), duration_ms=9000),
        scenario("b", "fail", assertion("fail", "another reason"), duration_ms=1),
    )
    assert verdict_fingerprint(slower) == verdict_fingerprint(_red())
    assert verdict_fingerprint(_green()) != verdict_fingerprint(_red())
    # an assertion's own status counts, even when the scenario's stays the same
    two = report(scenario("a", "fail", assertion("fail"), assertion("pass", index=1)))
    other = report(scenario("a", "fail", assertion("pass"), assertion("fail", index=1)))
    assert verdict_fingerprint(two) != verdict_fingerprint(other)
    assert fingerprint_of("<!-- clawspec:CI:test -->\nold comment") is None


@pytest.mark.parametrize(
    ("mode", "data", "existing", "expected"),
    [
        ("always", "red", None, "create"),
        ("always", "green", "red", "update"),
        ("off", "red", "red", "skip"),
        ("failures", "red", None, "create"),
        ("failures", "green", None, "skip"),
        ("failures", "green", "red", "update"),  # a fixed PR's comment turns green
        ("changes", "red", "red", "update"),
        ("changes", "green", "red", "create"),
        ("changes", "red", "old", "update"),  # a comment without a fingerprint
        ("changes", "red", "nothing ran", "create"),  # the first verdicts since it
        ("changes", "green", "nothing ran", "create"),
        ("changes", "red", None, "create"),  # no baseline: the first results
        ("changes", "red vs red baseline", None, "skip"),
        ("changes", "red vs green baseline", None, "create"),
    ],
)
def test_what_each_mode_does(mode: str, data: str, existing: str | None, expected: str) -> None:
    reports = {
        "red": _red(),
        "green": _green(),
        "red vs red baseline": _against_baseline(_red(), {"a": "pass", "b": "fail"}),
        "red vs green baseline": _against_baseline(_red(), {"a": "pass", "b": "pass"}),
    }
    bodies = {
        None: None,
        "old": f"{MARKER}\nold results",
        "nothing ran": render_stopped_comment(MARKER, ["a.yaml:1:1: bad"]),
    }
    body = bodies[existing] if existing in bodies else render_pr_comment(reports[existing], MARKER)
    assert decide(mode, reports[data], body)[0] == expected


# ---------------------------------------------------------------- against the REST API


def test_always_creates_then_updates(api: GitHubApiServer, environ: dict[str, str]) -> None:
    assert _publish(environ, _red(), "always") == "created"
    assert _publish(environ, _red(), "always") == "updated"
    assert _writes(api) == ["POST", "PATCH"]
    assert len(api.comments(7)) == 1


def test_a_persons_comment_quoting_the_marker_is_never_updated(
    api: GitHubApiServer, environ: dict[str, str]
) -> None:
    """Someone quotes ClawSpec's comment (its hidden marker included) to ask about it: the
    next run updates ClawSpec's own comment, not theirs."""
    ours = _comment(api, _green())
    question = f"> {MARKER}\n> ## ClawSpec results\nWhy does b fail? @alice"
    theirs = api.add_comment(7, question)
    assert _publish(environ, _red(), "always") == "updated"
    bodies = {c["id"]: c["body"] for c in api.comments(7)}
    assert bodies[theirs] == question
    assert bodies[ours].startswith(MARKER) and bodies[ours] != render_pr_comment(_green(), MARKER)


def test_changes_without_changed_verdicts_updates_in_place(
    api: GitHubApiServer, environ: dict[str, str]
) -> None:
    existing = _comment(api, _red())
    slower = report(
        scenario("a", "pass", assertion("pass"), duration_ms=7000),
        scenario("b", "fail", assertion("fail", "same failure, other words")),
    )
    assert _publish(environ, slower, "changes") == "updated"
    (comment,) = api.comments(7)
    assert comment["id"] == existing
    assert "same failure, other words" in comment["body"]


def test_changes_with_changed_verdicts_creates_a_new_comment(
    api: GitHubApiServer, environ: dict[str, str]
) -> None:
    old = _comment(api, _red())
    assert _publish(environ, _green(), "changes") == "created"  # a new comment notifies
    first, second = api.comments(7)
    assert first["id"] == old
    assert fingerprint_of(second["body"]) == verdict_fingerprint(_green())
    # the next run with the same verdicts updates the newest comment, not the old one
    assert _publish(environ, _green(), "changes") == "updated"
    assert api.requests[-1].path == f"/repos/octo/repo/issues/comments/{second['id']}"


def test_changes_without_a_comment_asks_the_baseline(
    api: GitHubApiServer, environ: dict[str, str]
) -> None:
    same = _against_baseline(_red(), {"a": "pass", "b": "fail"})
    result = publish_pr_comment(same, CIContext.from_environ(environ), TOKEN, mode="changes")
    assert result is not None
    assert (result.action, result.reason) == ("skipped", "the verdicts are those of the baseline")
    assert _writes(api) == []
    regressed = _against_baseline(_red(), {"a": "pass", "b": "pass"})
    assert _publish(environ, regressed, "changes") == "created"
    assert _writes(api) == ["POST"]


def test_failures_creates_only_when_something_failed(
    api: GitHubApiServer, environ: dict[str, str]
) -> None:
    assert _publish(environ, _green(), "failures") == "skipped"
    errored = report(scenario("a", "error", message="gateway unreachable"))
    assert _publish(environ, errored, "failures") == "created"
    assert _publish(environ, _green(), "failures") == "updated"  # the fix turns it green
    (comment,) = api.comments(7)
    assert "✅ passed 2" in comment["body"]
    assert _writes(api) == ["POST", "PATCH"]


def test_off_writes_nothing_and_publish_notes_a_skip(
    api: GitHubApiServer, environ: dict[str, str], tmp_path: Path
) -> None:
    settings = Settings(report_dir=str(tmp_path / "r"), github_token=TOKEN, check_run=False)
    err = io.StringIO()
    publish(_red(), settings, environ, stdout=io.StringIO(), stderr=err)  # pr_comment: off
    assert api.requests == []
    failures = settings.model_copy(update={"pr_comment": "failures"})
    publish(_green(), failures, environ, stdout=io.StringIO(), stderr=err)
    assert "note: PR comment skipped (failures): nothing failed or errored" in err.getvalue()
    assert _writes(api) == []
    always = Settings(report_dir=str(tmp_path / "r"), github_token=TOKEN, pr_comment=True)
    publish(_green(), always, environ, stdout=io.StringIO(), stderr=err)
    assert len(api.comments(7)) == 1


def test_the_verdict_fingerprint_tells_which_turn_failed() -> None:
    from clawspec.status import Status
    from tests.reports.conversation_report import conversation_report

    data = conversation_report()
    talk = data.scenarios[0]
    turns = list(talk.turns or [])
    # The same check index failing in turn 3 instead of turn 2: other verdicts.
    moved = [
        turns[0],
        turns[1].model_copy(
            update={
                "assertions": [
                    a.model_copy(update={"status": Status.PASS}) for a in turns[1].assertions
                ]
            }
        ),
        turns[2].model_copy(
            update={
                "assertions": [
                    a.model_copy(update={"status": Status.FAIL}) for a in turns[2].assertions
                ]
            }
        ),
    ]
    other = data.model_copy(
        update={"scenarios": [talk.model_copy(update={"turns": moved}), *data.scenarios[1:]]}
    )
    assert verdict_fingerprint(other) != verdict_fingerprint(data)
    assert verdict_fingerprint(conversation_report()) == verdict_fingerprint(data)


def test_the_verdict_fingerprint_tells_which_turn_got_no_reply() -> None:
    from clawspec.status import Status
    from tests.reports.conversation_report import conversation_report

    data = conversation_report()
    stopped = data.scenarios[1]
    first, second = stopped.turns or []
    # The conversation stopped at turn 1 instead of turn 2: the same scenario status.
    earlier = [first.model_copy(update={"status": Status.ERROR, "reply": None}), second]
    other = data.model_copy(
        update={"scenarios": [data.scenarios[0], stopped.model_copy(update={"turns": earlier})]}
    )
    assert verdict_fingerprint(other) != verdict_fingerprint(data)
