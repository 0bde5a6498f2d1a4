"""The github store against a local server speaking GitHub's Actions REST endpoints."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from clawspec import cli
from clawspec.ci_context import CIContext
from clawspec.config.settings import HistorySettings, Settings
from clawspec.history.baseline import Baseline, NoBaseline, find_baseline, recent_runs
from clawspec.history.git import Git
from clawspec.history.stores import save_report
from clawspec.reports.json_report import render_json
from clawspec.reports.model import RunReport, RunSource
from tests.history.factory import past_run, pr_repo
from tests.support.github_api import GitHubApiServer

TOKEN = "ghs_exampletoken0123456789"
SCHEDULE = RunSource(branch="main", event="schedule", ci="github")


@pytest.fixture
def api() -> Iterator[GitHubApiServer]:
    with GitHubApiServer(TOKEN) as server:
        yield server


def _environ(api: GitHubApiServer, workflow: str | None = "nightly.yml") -> dict[str, str]:
    environ = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": api.url,
        "GITHUB_REPOSITORY": "octo/agents",
        "GITHUB_WORKFLOW": "ClawSpec nightly",
        "GITHUB_RUN_ID": "1",
    }
    if workflow:
        environ["GITHUB_WORKFLOW_REF"] = f"octo/agents/.github/workflows/{workflow}@refs/heads/main"
    return environ


def _files(report: RunReport) -> dict[str, bytes]:
    """The report folder as the workflow uploads it."""
    return {"clawspec-report.json": render_json(report).encode(), "junit.xml": b"<testsuites/>"}


def _settings(**history: str) -> Settings:
    return Settings(baseline="github", github_token=TOKEN, history=HistorySettings(**history))


def test_schedule_uses_the_latest_completed_run_of_the_branch(api: GitHubApiServer) -> None:
    older = past_run("main", "a" * 40, "2026-11-20T03:17:00+00:00", "run-a")
    newer = past_run("main", "b" * 40, "2026-11-21T03:17:00+00:00", "run-b")
    api.add_run(
        branch="main", head_sha="a" * 40, created_at="2026-11-20T03:17:00Z", files=_files(older)
    )
    chosen = api.add_run(
        branch="main",
        head_sha="b" * 40,
        created_at="2026-11-21T03:17:00Z",
        files={"nested/clawspec-report.json": b"{}", **_files(newer)},
    )
    # None of these is a baseline for main's nightly: still running, a fork's PR whose branch
    # is also called main, another workflow, another branch.
    api.add_run(
        branch="main",
        head_sha="c" * 40,
        created_at="2026-11-22T03:17:00Z",
        status="in_progress",
        files=_files(newer),
    )
    api.add_run(
        branch="main",
        head_sha="d" * 40,
        created_at="2026-11-22T04:00:00Z",
        event="pull_request",
        files=_files(newer),
    )
    api.add_run(
        branch="main",
        head_sha="e" * 40,
        created_at="2026-11-22T05:00:00Z",
        workflow="other.yml",
        files=_files(newer),
    )
    api.add_run(
        branch="dev", head_sha="f" * 40, created_at="2026-11-22T06:00:00Z", files=_files(newer)
    )

    found = find_baseline("github", SCHEDULE, _settings(), CIContext.from_environ(_environ(api)))
    assert isinstance(found, Baseline)
    assert found.report == newer
    assert found.ref.source == "github"
    assert (found.ref.branch, found.ref.commit) == ("main", "b" * 40)
    assert found.ref.run_id == "run-b"
    assert found.ref.created_at == "2026-11-21T03:17:00Z"
    assert found.ref.location == f"https://github.invalid/octo/agents/actions/runs/{chosen}"
    paths = [request.path.split("?")[0] for request in api.requests]
    assert paths == [
        "/repos/octo/agents/actions/workflows/nightly.yml/runs",
        f"/repos/octo/agents/actions/runs/{chosen}/artifacts",
        f"/repos/octo/agents/actions/artifacts/{chosen + 1}/zip",
    ]
    assert all(r.headers["Authorization"] == f"Bearer {TOKEN}" for r in api.requests)
    assert "branch=main&status=completed&per_page=100" in api.requests[0].path
    # The redirect to the download host is followed without the token.
    [download] = api.state.blob_requests
    assert download.path == f"/blob/{chosen + 1}?sig=signed-{chosen + 1}"
    assert "Authorization" not in download.headers


def test_pr_uses_the_base_branch_run_at_or_before_the_merge_base(
    api: GitHubApiServer, tmp_path: Path
) -> None:
    repo = pr_repo(tmp_path / "repo")
    for hour, commit in enumerate((repo.m1, repo.m2, repo.m3, repo.m4), start=1):
        report = past_run("main", commit, f"2026-11-21T0{hour}:00:00+00:00", f"run-{hour}")
        api.add_run(
            branch="main",
            head_sha=commit,
            created_at=f"2026-11-21T0{hour}:00:00Z",
            event="push",
            files=_files(report),
        )
    api.add_run(
        branch="feature",
        head_sha=repo.f1,
        created_at="2026-11-21T09:00:00Z",
        event="push",
        files=_files(past_run("feature", repo.f1, "2026-11-21T09:00:00Z")),
    )
    source = RunSource(commit=repo.f2, branch="feature", base_branch="main", pull_request=3)
    settings = _settings(github_workflow="nightly.yml")  # the PR workflow reads the nightly's
    found = find_baseline(
        "github",
        source,
        settings,
        CIContext.from_environ(_environ(api, "pr.yml")),
        git=Git(repo.path),
    )
    assert isinstance(found, Baseline)
    assert found.report.run_id == "run-2" and found.ref.commit == repo.m2


def test_no_earlier_run_is_a_reason(api: GitHubApiServer) -> None:
    found = find_baseline("github", SCHEDULE, _settings(), CIContext.from_environ(_environ(api)))
    assert isinstance(found, NoBaseline)
    assert found.reason == "no stored run of 'main' in github"


def test_an_expired_artifact_is_skipped_for_the_next_older_run(api: GitHubApiServer) -> None:
    older = past_run("main", "a" * 40, "2026-11-20T03:17:00+00:00", "run-a")
    api.add_run(
        branch="main", head_sha="a" * 40, created_at="2026-11-20T03:17:00Z", files=_files(older)
    )
    expired = api.add_run(
        branch="main",
        head_sha="b" * 40,
        created_at="2026-11-21T03:17:00Z",
        files=_files(older),
        expired=True,
    )
    found = find_baseline("github", SCHEDULE, _settings(), CIContext.from_environ(_environ(api)))
    assert isinstance(found, Baseline) and found.report.run_id == "run-a"
    assert found.notes[0] == (
        "skipped main @ bbbbbbbbbbbb, 2026-11-21 03:17 UTC: artifact 'clawspec-report' of "
        f"workflow run {expired} (https://github.invalid/octo/agents/actions/runs/{expired}) "
        "expired on 2026-08-01T00:00:00Z (raise 'retention-days' of actions/upload-artifact, "
        "or use an s3:// or dir: store)"
    )


def test_only_expired_or_missing_artifacts_mean_no_baseline(api: GitHubApiServer) -> None:
    api.add_run(branch="main", head_sha="a" * 40, created_at="2026-11-20T03:17:00Z")
    api.add_run(
        branch="main",
        head_sha="b" * 40,
        created_at="2026-11-21T03:17:00Z",
        files={"junit.xml": b"<testsuites/>"},
        expired=True,
    )
    found = find_baseline("github", SCHEDULE, _settings(), CIContext.from_environ(_environ(api)))
    assert isinstance(found, NoBaseline)
    assert found.reason == "no readable report among the newest 2 candidate run(s) in github"
    assert "expired on 2026-08-01T00:00:00Z" in found.notes[0]
    assert "has no artifact 'clawspec-report': upload the report folder" in found.notes[1]


def test_an_artifact_without_the_report_says_so(api: GitHubApiServer) -> None:
    run = api.add_run(
        branch="main",
        head_sha="a" * 40,
        created_at="2026-11-20T03:17:00Z",
        files={"junit.xml": b"<testsuites/>"},
    )
    found = find_baseline("github", SCHEDULE, _settings(), CIContext.from_environ(_environ(api)))
    assert isinstance(found, NoBaseline)
    assert found.notes[0].endswith(
        f"workflow run {run} (https://github.invalid/octo/agents/actions/runs/{run}): the "
        "artifact holds no clawspec-report.json"
    )


def test_a_token_without_actions_read_is_a_clear_warning(api: GitHubApiServer) -> None:
    api.forbid_actions()
    found = find_baseline("github", SCHEDULE, _settings(), CIContext.from_environ(_environ(api)))
    assert isinstance(found, NoBaseline)
    assert found.reason == (
        "baseline 'github' unavailable: GET "
        f"{api.url}/repos/octo/agents/actions/workflows/nightly.yml/runs → 403: Resource not "
        "accessible by integration; the token cannot read this repository's Actions runs and "
        "artifacts: grant the job 'permissions: actions: read' (and 'contents: read')"
    )
    assert TOKEN not in found.reason


def test_no_token_or_no_repository_is_a_reason(api: GitHubApiServer) -> None:
    tokenless = find_baseline(
        "github", SCHEDULE, Settings(baseline="github"), CIContext.from_environ(_environ(api))
    )
    assert isinstance(tokenless, NoBaseline)
    assert "the github store needs a token: set GITHUB_TOKEN" in tokenless.reason
    outside = find_baseline("github", SCHEDULE, _settings(), CIContext.from_environ({}))
    assert isinstance(outside, NoBaseline)
    assert "GITHUB_REPOSITORY unset" in outside.reason
    assert api.requests == []


def test_without_a_workflow_file_runs_are_matched_by_workflow_name(api: GitHubApiServer) -> None:
    mine = past_run("main", "a" * 40, "2026-11-20T03:17:00+00:00", "mine")
    api.add_run(
        branch="main", head_sha="a" * 40, created_at="2026-11-20T03:17:00Z", files=_files(mine)
    )
    api.add_run(
        branch="main",
        head_sha="b" * 40,
        created_at="2026-11-21T03:17:00Z",
        workflow="other.yml",
        name="Other",
        files=_files(past_run("main", "b", "x")),
    )
    found = find_baseline(
        "github", SCHEDULE, _settings(), CIContext.from_environ(_environ(api, workflow=None))
    )
    assert isinstance(found, Baseline) and found.report.run_id == "mine"
    assert api.requests[0].path.startswith("/repos/octo/agents/actions/runs?branch=main")


def test_recent_runs_download_the_last_n_artifacts(api: GitHubApiServer) -> None:
    for day in (18, 19, 20, 21):
        report = past_run("main", f"{day:040d}", f"2026-11-{day}T03:17:00+00:00", f"run-{day}")
        api.add_run(
            branch="main",
            head_sha=f"{day:040d}",
            created_at=f"2026-11-{day}T03:17:00Z",
            files=_files(report),
            expired=day == 20,
        )
    recent = recent_runs("github", "main", 3, _settings(), CIContext.from_environ(_environ(api)))
    assert [report.run_id for _, report in recent.runs] == ["run-19", "run-21"]
    assert len(recent.notes) == 1 and "expired" in recent.notes[0]


def test_saving_to_github_is_the_workflows_job(api: GitHubApiServer) -> None:
    message = save_report(
        past_run("main", "a" * 40, "2026-11-20T03:17:00+00:00"), _settings(), CIContext()
    )
    assert message == (
        "baseline: the github store keeps this run once the workflow uploads the report folder "
        "as artifact 'clawspec-report'"
    )


def test_history_command_lists_workflow_runs_and_explains_a_403(
    api: GitHubApiServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    api.add_run(branch="main", head_sha="a" * 40, created_at="2026-11-20T03:17:00Z")
    for key, value in _environ(api).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    assert cli.main(["history", "--baseline", "github", "--branch", "main"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"::add-mask::{TOKEN}"  # on GitHub, masks come first (clawspec/secrets.py)
    lines = lines[1:]
    assert lines[0] == "1 run of 'main' in github, newest first:"
    assert lines[1].startswith("  2026-11-20 03:17 UTC  aaaaaaaaaaaa  schedule      -  https://")
    api.forbid_actions()
    assert cli.main(["history", "--baseline", "github", "--branch", "main"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: GET ") and "'permissions: actions: read'" in err
