"""`clawspec run` saving to and comparing with each store, end to end through the CLI."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from clawspec.cli import main
from clawspec.reports.json_report import render_json
from clawspec.reports.model import RunReport
from tests.history.factory import git
from tests.support.github_api import GitHubApiServer

HEADER = """version: "1.0"
target: {type: skill, path: skills/news}
defaults: {timeout: 3, poll_interval: 0.05}
scenarios:
"""
WRITES = '"[write:out/{{run_id}}.md]"'
SILENT = '"nothing written"'
GITHUB_TOKEN = "ghs_historyclitoken0123"


def _contract(write_contract: Any, **invokes: str) -> None:
    write_contract(
        HEADER
        + "".join(
            f"  - name: {name}\n    when: {{invoke: {invoke}}}\n"
            '    then: [{type: artifact_exists, path: "out/{{run_id}}.md"}]\n'
            for name, invoke in invokes.items()
        )
    )


def _report(workspace: Path) -> dict[str, Any]:
    return json.loads((workspace / "reports/clawspec-report.json").read_text("utf-8"))


def _changes(report: dict[str, Any]) -> dict[str, str]:
    return {c["id"].split("::")[1]: c["change"] for c in report["comparison"]["scenarios"]}


@pytest.fixture
def checkout(workspace: Path) -> str:
    """Make the workspace a git checkout on `main` (where a local run's branch comes from)."""
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "commit", "-q", "--allow-empty", "-m", "base")
    return git(workspace, "rev-parse", "HEAD")


@pytest.mark.usefixtures("hooks")
def test_save_then_compare_through_the_dir_store(
    workspace: Path, write_contract: Any, checkout: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _contract(write_contract, steady=WRITES, breaks=WRITES)
    assert main(["run", ".", "--baseline", "dir:hist", "--save-baseline"]) == 0
    out, err = capsys.readouterr()
    # Said once, by the terminal's headline (not also as a note).
    assert "No baseline found: no stored run of 'main' in dir:" in out
    assert "no baseline found" not in err.lower()
    saved = list((workspace / "hist/main").glob(f"*-{checkout[:12]}-*/clawspec-report.json"))
    assert len(saved) == 1 and f"baseline saved: {saved[0]}" in err
    first = _report(workspace)
    assert first["source"]["branch"] == "main" and first["source"]["commit"] == checkout

    _contract(write_contract, steady=WRITES, breaks=SILENT)
    assert main(["run", ".", "--baseline", "dir:hist", "--fail-on", "regression"]) == 1
    second = _report(workspace)
    assert second["baseline"]["source"] == "dir:hist"
    assert second["baseline"]["run_id"] == first["run_id"]
    assert second["baseline"]["location"] == str(saved[0])
    assert _changes(second) == {"steady": "unchanged", "breaks": "regressed"}
    capsys.readouterr()
    assert main(["history", "--baseline", "dir:hist"]) == 0  # not saved: still one run
    assert capsys.readouterr().out.startswith("1 run of 'main' in dir:hist, newest first:")


@pytest.mark.usefixtures("hooks", "aws_env")
def test_save_then_compare_through_the_s3_store(
    workspace: Path,
    write_contract: Any,
    checkout: str,
    s3_endpoint: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import boto3

    bucket = f"cli-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=bucket)
    monkeypatch.setenv("CLAWSPEC_HISTORY__S3_ENDPOINT_URL", s3_endpoint)
    monkeypatch.setenv("CLAWSPEC_BASELINE", f"s3://{bucket}/agents")
    _contract(write_contract, steady=WRITES, heals=SILENT)
    assert main(["run", ".", "--save-baseline"]) == 1
    first = _report(workspace)
    _contract(write_contract, steady=WRITES, heals=WRITES)
    assert main(["run", ".", "--fail-on", "regression"]) == 0
    second = _report(workspace)
    assert second["baseline"]["source"] == f"s3://{bucket}/agents"
    assert second["baseline"]["run_id"] == first["run_id"]
    assert second["baseline"]["location"].startswith(f"s3://{bucket}/agents/main/")
    assert _changes(second) == {"steady": "unchanged", "heals": "fixed"}


def _github_env(monkeypatch: pytest.MonkeyPatch, api: GitHubApiServer, tmp: Path) -> None:
    values = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": api.url,
        "GITHUB_REPOSITORY": "octo/agents",
        "GITHUB_WORKFLOW": "ClawSpec nightly",
        "GITHUB_WORKFLOW_REF": "octo/agents/.github/workflows/nightly.yml@refs/heads/main",
        "GITHUB_RUN_ID": "99",
        "GITHUB_EVENT_NAME": "schedule",
        "GITHUB_SHA": "b" * 40,
        "GITHUB_REF_NAME": "main",
        "GITHUB_TOKEN": GITHUB_TOKEN,
        "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
        "GITHUB_OUTPUT": str(tmp / "output.txt"),
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)


@pytest.mark.usefixtures("hooks")
def test_github_baseline_through_the_cli(
    workspace: Path, write_contract: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _contract(write_contract, steady=WRITES, breaks=WRITES)
    assert main(["run", "."]) == 0
    earlier = RunReport.model_validate(_report(workspace))
    with GitHubApiServer(GITHUB_TOKEN) as api:
        run = api.add_run(
            branch="main",
            head_sha="a" * 40,
            created_at="2026-11-22T03:17:00Z",
            files={"clawspec-report.json": render_json(earlier).encode()},
        )
        _github_env(monkeypatch, api, tmp_path)
        _contract(write_contract, steady=WRITES, breaks=SILENT)
        assert main(["run", ".", "--baseline", "github", "--fail-on", "regression"]) == 1
    report = _report(workspace)
    assert report["baseline"]["source"] == "github"
    assert (
        report["baseline"]["location"] == f"https://github.invalid/octo/agents/actions/runs/{run}"
    )
    assert report["source"]["commit"] == "b" * 40
    assert _changes(report) == {"steady": "unchanged", "breaks": "regressed"}
    assert "Regressions since" in (tmp_path / "summary.md").read_text("utf-8")


@pytest.mark.usefixtures("hooks")
def test_github_403_without_actions_read_is_a_warning_not_a_crash(
    workspace: Path,
    write_contract: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with GitHubApiServer(GITHUB_TOKEN) as api:
        api.forbid_actions()
        _github_env(monkeypatch, api, tmp_path)
        _contract(write_contract, steady=WRITES, known_bad=SILENT)
        # No baseline: `fail_on: regression` falls back to the normal policy (a failure → 1).
        assert main(["run", ".", "--baseline", "github", "--fail-on", "regression"]) == 1
        out, err = capsys.readouterr()
        _contract(write_contract, steady=WRITES)
        assert main(["run", ".", "--baseline", "github", "--save-baseline"]) == 0
        second = capsys.readouterr().err
    # The terminal's headline says why there is no baseline.
    assert "No baseline found: baseline 'github' unavailable: GET " in out
    assert "→ 403: Resource not accessible by integration" in out
    assert "grant the job 'permissions: actions: read'" in out
    assert GITHUB_TOKEN not in err
    assert "baseline: the github store keeps this run once the workflow uploads" in second
    report = _report(workspace)
    assert report["baseline"] is None
    assert report["totals"]["passed"] == 1
