"""The GitHub check run against a local Checks API: batches of 50, head SHA, levels, limits."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from clawspec import secrets as registry
from clawspec.api import finish
from clawspec.ci_context import CIContext
from clawspec.config.settings import Settings
from clawspec.errors import ExitCode
from clawspec.reports.github.api import GitHubApiError, GitHubForbiddenError
from clawspec.reports.github.check_run import (
    check_annotations,
    head_sha,
    is_fork_pull_request,
    publish_check_run,
)
from clawspec.reports.model import AttemptStats, Comparison, RunReport, ScenarioChange
from clawspec.reports.outcome import Policy, RunOutcome, decide
from tests.reports.factory import CONTRACT, assertion, mixed_report, report, scenario
from tests.support.github_api import FORK_MESSAGE, GitHubApiServer

FAILED = RunOutcome(ExitCode.FAILED, "failure", ("1 failed",))
PASSED = RunOutcome(ExitCode.OK, "success")
TOKEN = "ghs_check_run_token_0123456789"
HEAD = "a" * 40
MERGE = "b" * 40


@pytest.fixture
def api() -> Iterator[GitHubApiServer]:
    with GitHubApiServer(TOKEN) as server:
        yield server


def _event(tmp_path: Path, payload: dict[str, object]) -> str:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload))
    return str(path)


@pytest.fixture
def environ(api: GitHubApiServer, tmp_path: Path) -> dict[str, str]:
    pull = {
        "number": 7,
        "head": {"sha": HEAD, "repo": {"full_name": "octo/repo"}},
        "base": {"sha": "c" * 40, "repo": {"full_name": "octo/repo"}},
    }
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": api.url,
        "GITHUB_REPOSITORY": "octo/repo",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": _event(tmp_path, {"action": "synchronize", "pull_request": pull}),
        "GITHUB_SHA": MERGE,  # a pull_request run checks out the merge commit
        "GITHUB_WORKSPACE": str(tmp_path),
        "GITHUB_WORKFLOW": "CI",
        "GITHUB_JOB": "test",
    }


def _no_sleep(seconds: float) -> None:
    return None


def _failing(count: int) -> RunReport:
    """`count` failing assertions, 30 per scenario, over two contracts."""
    scenarios = []
    for number in range(count // 30):
        contract = CONTRACT if number % 2 == 0 else "agents/router/tests/scenarios.yaml"
        scenarios.append(
            scenario(
                f"s{number}",
                "fail",
                *(
                    assertion("fail", f"reason {number}-{i}", index=i, line=100 * number + i + 1)
                    for i in range(30)
                ),
                contract=contract,
                id=f"{contract}::s{number}",
            )
        )
    return report(*scenarios)


def test_120_failing_assertions_are_one_create_and_two_updates_with_every_annotation(
    api: GitHubApiServer, environ: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "project").mkdir()
    failing = _failing(120)
    result = publish_check_run(
        failing,
        CIContext.from_environ(environ),
        TOKEN,
        decide(failing, Policy()),
        workspace=tmp_path / "project",
        sleep=_no_sleep,
    )
    assert result is not None
    assert (result.conclusion, result.annotations, result.requests) == ("failure", 120, 3)
    sent = [(r.method, r.path) for r in api.requests]
    check_id = result.check_run_id
    assert sent == [
        ("POST", "/repos/octo/repo/check-runs"),
        ("PATCH", f"/repos/octo/repo/check-runs/{check_id}"),
        ("PATCH", f"/repos/octo/repo/check-runs/{check_id}"),
    ]
    create, first, last = (r.body or {} for r in api.requests)
    assert create["name"] == "ClawSpec: test"
    assert create["head_sha"] == HEAD  # the PR's head commit, not GITHUB_SHA's merge commit
    assert (create["status"], create["conclusion"]) == ("completed", "failure")
    assert create["output"]["title"] == "4 scenarios: 4 failed; failed"
    assert "120 annotations on the contract lines (120 failures)" in create["output"]["summary"]
    assert create["output"]["text"].startswith("## ClawSpec results")
    assert [len(b["output"]["annotations"]) for b in (create, first, last)] == [50, 50, 20]
    assert "text" not in first["output"]
    assert last["output"]["text"] == create["output"]["text"]
    assert all(b["output"]["title"] == create["output"]["title"] for b in (first, last))
    (stored,) = api.check_runs()
    annotations = stored["output"]["annotations"]
    assert len(annotations) == 120
    expected = [
        (
            f"project/{CONTRACT if n % 2 == 0 else 'agents/router/tests/scenarios.yaml'}",
            100 * n + i + 1,
        )
        for n in range(4)
        for i in range(30)
    ]
    assert [(a["path"], a["start_line"]) for a in annotations] == expected
    assert all(a["end_line"] == a["start_line"] for a in annotations)
    assert {a["annotation_level"] for a in annotations} == {"failure"}
    assert annotations[31]["message"] == (
        "then[1] artifact_exists: reason 1-1\nscenario 's1' (agents/router/tests/scenarios.yaml:5)"
    )
    assert annotations[31]["title"] == "ClawSpec FAIL: s1 / artifact_exists"
    assert all(r.headers["Authorization"] == f"Bearer {TOKEN}" for r in api.requests)


def test_fifty_or_fewer_annotations_take_one_request(
    api: GitHubApiServer, environ: dict[str, str]
) -> None:
    result = publish_check_run(
        mixed_report(), CIContext.from_environ(environ), TOKEN, FAILED, sleep=_no_sleep
    )
    assert result is not None
    assert [r.method for r in api.requests] == ["POST"]
    (stored,) = api.check_runs()
    levels = [(a["annotation_level"], a["start_line"]) for a in stored["output"]["annotations"]]
    assert levels == [("failure", 22), ("failure", 30), ("notice", 40), ("warning", 52)]


def _compared(data: RunReport, change: str) -> RunReport:
    comparison = Comparison(
        scenarios=[ScenarioChange(id=s.id, change=change) for s in data.scenarios]  # type: ignore[arg-type]
    )
    return data.model_copy(update={"comparison": comparison})


def test_regressed_is_failure_and_flaky_is_warning() -> None:
    failing = report(scenario("a", "fail", assertion("fail"), assertion("warn", index=1)))
    regressed = check_annotations(_compared(failing, "regressed"))
    assert [(a["annotation_level"], a["title"]) for a in regressed] == [
        ("failure", "ClawSpec REGRESSED: a / artifact_exists"),
        ("warning", "ClawSpec REGRESSED: a / artifact_exists"),
    ]
    stats = AttemptStats(attempts=3, passes=2, pass_rate=0.667, ci_low=0.21, ci_high=0.94)
    flaky = report(scenario("f", "pass", assertion("error"), flaky=True, attempts=stats))
    (item,) = check_annotations(flaky)
    assert (item["annotation_level"], item["title"]) == (
        "warning",
        "ClawSpec FLAKY: f / artifact_exists",
    )
    errored = report(scenario("e", "error", assertion("error")))
    assert [a["annotation_level"] for a in check_annotations(errored)] == ["failure"]


def test_texts_are_masked_before_they_are_cut_to_githubs_limits() -> None:
    secret = "hunter2-secret-value"
    long_name = "n" * 300
    data = report(
        scenario(long_name, "fail", assertion("fail", f"leaked {secret} " + "x" * 100_000)),
        scenario("short", "fail", assertion("fail", f"token {secret} here"), id="c::short"),
    )
    with registry.scope() as active:
        active.add(secret)
        first, second = check_annotations(data)
    assert len(first["title"]) == 255
    assert len(first["message"].encode()) <= 64_000
    assert first["message"].startswith("then[0] artifact_exists: leaked *** x")
    assert second["message"].startswith("then[0] artifact_exists: token *** here")
    assert all(secret not in json.dumps(item) for item in (first, second))


def test_the_server_accepts_what_was_cut(api: GitHubApiServer, environ: dict[str, str]) -> None:
    data = report(scenario("n" * 300, "fail", assertion("fail", "é" * 80_000)))
    result = publish_check_run(
        data, CIContext.from_environ(environ), TOKEN, FAILED, sleep=_no_sleep
    )
    assert result is not None  # a 422 would have raised
    assert TOKEN not in json.dumps([r.body for r in api.requests])


@pytest.mark.parametrize(
    ("statuses", "interrupted", "policy", "expected"),
    [
        (["pass"], False, Policy(), "success"),
        (["pass", "fail"], False, Policy(), "failure"),
        (["pass", "fail"], False, Policy("never"), "neutral"),
        (["pass", "fail"], False, Policy("regression"), "failure"),  # nothing to compare with
        (["error"], False, Policy("never"), "neutral"),
        ([], False, Policy(), "neutral"),  # nothing ran
        (["pass", "skip"], False, Policy(max_skipped="0"), "failure"),
        (["pass"], True, Policy(), "cancelled"),
        (["warn", "skip"], False, Policy(), "success"),
    ],
)
def test_conclusion_follows_the_exit_policy(
    statuses: list[str], interrupted: bool, policy: Policy, expected: str
) -> None:
    data = report(
        *(scenario(f"s{i}", s, id=f"c::s{i}") for i, s in enumerate(statuses)),
        interrupted=interrupted,
    )
    assert decide(data, policy).conclusion == expected


def test_head_sha_is_the_pull_requests_head_else_github_sha(tmp_path: Path) -> None:
    pull = {"pull_request": {"head": {"sha": HEAD}}}
    environ = {"GITHUB_SHA": MERGE, "GITHUB_EVENT_PATH": _event(tmp_path, pull)}
    assert head_sha(CIContext.from_environ(environ)) == HEAD
    environ["GITHUB_EVENT_PATH"] = _event(tmp_path, {"ref": "refs/heads/main"})
    assert head_sha(CIContext.from_environ(environ)) == MERGE
    assert head_sha(CIContext.from_environ({})) is None


def test_no_commit_means_no_check_run(api: GitHubApiServer, environ: dict[str, str]) -> None:
    environ = {k: v for k, v in environ.items() if k not in ("GITHUB_SHA", "GITHUB_EVENT_PATH")}
    assert publish_check_run(mixed_report(), CIContext.from_environ(environ), TOKEN, FAILED) is None
    assert api.requests == []


def test_check_name_and_shard_suffix(api: GitHubApiServer, environ: dict[str, str]) -> None:
    publish_check_run(mixed_report(), CIContext.from_environ(environ), TOKEN, FAILED, name="Agents")
    from clawspec.reports.model import ShardInfo

    shard = ShardInfo(index=2, total=4, fingerprint="f", selected=9)
    sharded = mixed_report().model_copy(update={"shard": shard})
    publish_check_run(sharded, CIContext.from_environ(environ), TOKEN, FAILED)
    assert [run["name"] for run in api.check_runs()] == ["Agents", "ClawSpec: test (shard 2/4)"]


def test_a_fork_pull_request_is_recognised(tmp_path: Path) -> None:
    pull = {"head": {"repo": {"full_name": "fork/repo"}}, "base": {"repo": {"full_name": "o/r"}}}
    environ = {"GITHUB_EVENT_NAME": "pull_request"}
    environ["GITHUB_EVENT_PATH"] = _event(tmp_path, {"pull_request": pull})
    assert is_fork_pull_request(CIContext.from_environ(environ))
    assert not is_fork_pull_request(
        CIContext.from_environ({**environ, "GITHUB_EVENT_NAME": "pull_request_target"})
    )
    pull["head"] = pull["base"]
    environ["GITHUB_EVENT_PATH"] = _event(tmp_path, {"pull_request": pull})
    assert not is_fork_pull_request(CIContext.from_environ(environ))


# ---------------------------------------------------------------- rate limits


def test_a_429_then_success_is_retried_after_retry_after(
    api: GitHubApiServer, environ: dict[str, str]
) -> None:
    api.fail_next(429, "Too Many Requests", {"Retry-After": "2"}, methods=("POST",))
    waits: list[float] = []
    result = publish_check_run(
        _failing(60), CIContext.from_environ(environ), TOKEN, FAILED, sleep=waits.append
    )
    assert result is not None
    assert waits == [2.0]
    assert [r.method for r in api.requests] == ["POST", "POST", "PATCH"]
    assert len(api.check_runs()[0]["output"]["annotations"]) == 60


def test_a_secondary_limit_on_an_update_is_retried(
    api: GitHubApiServer, environ: dict[str, str]
) -> None:
    api.fail_next(403, "You have exceeded a secondary rate limit", methods=("PATCH",))
    waits: list[float] = []
    result = publish_check_run(
        _failing(60),
        CIContext.from_environ(environ),
        TOKEN,
        FAILED,
        sleep=waits.append,
        backoff_s=0.5,
    )
    assert result is not None
    assert waits == [0.5]  # no Retry-After: exponential backoff
    assert [r.method for r in api.requests] == ["POST", "PATCH", "PATCH"]
    assert len(api.check_runs()[0]["output"]["annotations"]) == 60


def test_an_exhausted_primary_limit_waits_for_its_reset(
    api: GitHubApiServer, environ: dict[str, str]
) -> None:
    reset = str(int(time.time()) + 30)
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset}
    api.fail_next(403, "API rate limit exceeded", headers, methods=("POST",))
    waits: list[float] = []
    assert publish_check_run(
        mixed_report(), CIContext.from_environ(environ), TOKEN, PASSED, sleep=waits.append
    )
    (wait,) = waits
    assert 25 <= wait <= 31


def test_a_primary_limit_reset_later_than_the_call_can_wait_is_said_at_once(
    api: GitHubApiServer, environ: dict[str, str]
) -> None:
    """Reset in an hour: waiting cannot help (it waited 60 s three times, then failed)."""
    reset = str(int(time.time()) + 3600)
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset}
    api.fail_next(403, "API rate limit exceeded", headers, methods=("POST",))
    waits: list[float] = []
    with pytest.raises(GitHubApiError) as caught:
        publish_check_run(
            mixed_report(), CIContext.from_environ(environ), TOKEN, PASSED, sleep=waits.append
        )
    assert waits == []
    assert not isinstance(caught.value, GitHubForbiddenError)
    assert "→ 403: API rate limit exceeded" in str(caught.value)


def test_a_rate_limit_that_never_lifts_is_an_error_not_a_permission(
    api: GitHubApiServer, environ: dict[str, str]
) -> None:
    for _ in range(4):
        api.fail_next(403, "You have exceeded a secondary rate limit", methods=("POST",))
    with pytest.raises(GitHubApiError) as caught:
        publish_check_run(
            mixed_report(), CIContext.from_environ(environ), TOKEN, PASSED, sleep=_no_sleep
        )
    assert not isinstance(caught.value, GitHubForbiddenError)
    assert "→ 403: You have exceeded a secondary rate limit" in str(caught.value)


def test_a_failed_update_says_how_many_annotations_were_added(
    api: GitHubApiServer, environ: dict[str, str]
) -> None:
    for _ in range(4):
        api.fail_next(502, "Bad Gateway", methods=("PATCH",))
    with pytest.raises(GitHubApiError, match=r"only 50 of 120 annotations were added: PATCH"):
        publish_check_run(
            _failing(120), CIContext.from_environ(environ), TOKEN, FAILED, sleep=_no_sleep
        )
    # The check run itself says so too: its summary counted all 120.
    (run,) = api.check_runs()
    assert len(run["output"]["annotations"]) == 50
    assert "**Only 50 of the 120 annotations could be added**" in run["output"]["summary"]


# ---------------------------------------------------------------- publish: permissions


def _settings(tmp_path: Path, **kw: object) -> Settings:
    return Settings(report_dir=str(tmp_path / "reports"), github_token=TOKEN, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("failing", [True, False])
def test_without_checks_write_a_warning_and_the_exit_code_unchanged(
    api: GitHubApiServer,
    environ: dict[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    failing: bool,
) -> None:
    api.forbid_checks()
    environ |= {
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
    }
    data = mixed_report() if failing else report(scenario("ok", "pass", assertion("pass")))
    result = finish(data, _settings(tmp_path, check_run=True), environ)
    assert result.exit_code == (ExitCode.FAILED if failing else ExitCode.OK)
    captured = capsys.readouterr()
    assert (
        f"warning: check run not written: POST {api.url}/repos/octo/repo/check-runs → 403: "
        f"{FORK_MESSAGE}; the token may not write checks" in captured.err
    )
    assert "permissions: checks: write" in captured.err
    assert "::warning title=ClawSpec%3A no check run::check run not written: POST" in captured.out
    assert (tmp_path / "summary.md").read_text().startswith("## ClawSpec results")
    assert "total=" in (tmp_path / "output").read_text()
    assert (tmp_path / "reports" / "clawspec-report.json").exists()
    assert TOKEN not in captured.err + captured.out.replace(f"::add-mask::{TOKEN}", "")


def test_auto_mode_skips_a_fork_pull_request_and_is_quiet_about_a_403(
    api: GitHubApiServer, environ: dict[str, str], tmp_path: Path
) -> None:
    err, out = io.StringIO(), io.StringIO()
    from clawspec.reports.publish import publish

    api.forbid_checks()
    publish(mixed_report(), _settings(tmp_path), environ, stdout=out, stderr=err)
    assert "warning: check run not written" in err.getvalue()
    assert "no check run" not in out.getvalue()  # auto: the log says it, no annotation
    fork = {
        "number": 7,
        "head": {"sha": HEAD, "repo": {"full_name": "fork/repo"}},
        "base": {"repo": {"full_name": "octo/repo"}},
    }
    environ["GITHUB_EVENT_PATH"] = _event(tmp_path, {"pull_request": fork})
    before = len(api.requests)
    err = io.StringIO()
    publish(mixed_report(), _settings(tmp_path), environ, stdout=io.StringIO(), stderr=err)
    assert len(api.requests) == before
    assert "note: check run skipped: a pull request from a fork gets a read-only token" in (
        err.getvalue()
    )


def test_publish_writes_one_check_run_and_none_when_switched_off(
    api: GitHubApiServer, environ: dict[str, str], tmp_path: Path
) -> None:
    from clawspec.reports.publish import publish

    err = io.StringIO()
    publish(mixed_report(), _settings(tmp_path), environ, stdout=io.StringIO(), stderr=err)
    (run,) = api.check_runs()
    assert (run["name"], run["head_sha"], run["conclusion"]) == ("ClawSpec: test", HEAD, "failure")
    assert "check run failure: https://github.invalid/octo/repo/runs/" in err.getvalue()
    assert "(4 annotations in 1 request)" in err.getvalue()
    publish(
        mixed_report(),
        _settings(tmp_path, check_run=False),
        environ,
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    assert len(api.check_runs()) == 1


def test_fail_on_never_gives_a_neutral_check(
    api: GitHubApiServer, environ: dict[str, str], tmp_path: Path
) -> None:
    finish(mixed_report(), _settings(tmp_path, fail_on="never"), environ)
    assert api.check_runs()[0]["conclusion"] == "neutral"


def test_a_failing_turn_is_a_check_run_annotation_at_its_line_and_named_in_the_text() -> None:
    from clawspec.reports.github.check_run import render_output
    from tests.reports.conversation_report import (
        assert_inert,
        conversation_report,
        secret_registered,
    )

    data = conversation_report()
    with secret_registered():
        annotations = check_annotations(data)
        output = render_output(data, annotations)
    assert [(a["start_line"], a["annotation_level"]) for a in annotations] == [
        (14, "failure"),
        (34, "failure"),
    ]
    assert annotations[0]["message"].startswith("turn 2, then[0] (reply_contains): ")
    assert "`turn 2, then[0]` reply_contains" in output["text"]
    for text in [*output.values(), *(a["message"] for a in annotations)]:
        assert_inert(text)
    assert "<script>" not in output["text"]
