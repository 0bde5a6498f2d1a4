"""On GitHub: shards stay quiet, the merge job publishes once for the whole matrix.

Against the local GitHub REST server (127.0.0.1): the job summary, the annotations and the PR
comment come from the merge job only, with the totals of every shard; `--shard-publish` gives a
shard its own summary, annotations and a PR comment with its own marker.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from clawspec.cli import main
from tests.reports.test_github_commands import parse_command, parse_outputs
from tests.sharding.conftest import RunShards, read_report, write_suite
from tests.support.github_api import GitHubApiServer, pull_request_env

GITHUB_TOKEN = "ghs_shardMergeToken77"
PR = 12


@pytest.fixture
def github(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[GitHubApiServer]:
    with GitHubApiServer(GITHUB_TOKEN) as server:
        env = pull_request_env(
            server, workspace, tmp_path, PR, GITHUB_TOKEN,
            GITHUB_WORKFLOW="ClawSpec", GITHUB_SHA="d" * 40,
        )  # fmt: skip
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        yield server


def _job(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, job: str) -> dict[str, Path]:
    """A fresh step: its own summary and output files, as the runner gives each job."""
    files = {"summary": tmp_path / f"{name}.summary.md", "output": tmp_path / f"{name}.output"}
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(files["summary"]))
    monkeypatch.setenv("GITHUB_OUTPUT", str(files["output"]))
    monkeypatch.setenv("GITHUB_JOB", job)
    return files


def _annotations(stdout: str) -> list[tuple[str, dict[str, str], str]]:
    return [
        parse_command(line)
        for line in stdout.splitlines()
        if re.match(r"::(error|warning|notice)", line)
    ]


def test_shards_publish_nothing_of_the_whole_and_the_merge_publishes_it_once(
    workspace: Path,
    tmp_path: Path,
    github: GitHubApiServer,
    run_shards: RunShards,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_suite(workspace)
    shard_files = []
    for index in (1, 2, 3):
        files = _job(monkeypatch, tmp_path, f"shard-{index}", "clawspec")
        run_shards(3, "--pr-comment", "--junit", f"reports/junit-{index}.xml", only=(index,))
        out = capsys.readouterr().out
        assert _annotations(out) == []
        assert not files["summary"].exists()
        outputs = parse_outputs(files["output"].read_text())
        assert outputs["report_path"] == f"reports/shards/shard-{index}.json"
        assert f"(shard {index}/3); " in outputs["summary"]
        shard_files.append(files)
    assert github.comments() == []  # --pr-comment on a shard waits for the merge
    assert github.check_runs() == []  # so does the check run

    files = _job(monkeypatch, tmp_path, "merge", "merge")
    assert main(["merge", "reports/shards", "--pr-comment", "--junit", "reports/junit.xml"]) == 1
    captured = capsys.readouterr()
    report = read_report(workspace / "reports" / "clawspec-report.json")
    totals = report["totals"]
    assert totals["scenarios"] == 44
    summary = files["summary"].read_text()
    assert summary.count("## ClawSpec results") == 1
    assert "**44 scenarios**" in summary
    assert "Merged from 3 shards." in summary
    row = (
        f"| {totals['scenarios']} | {totals['passed']} | {totals['failed']} "
        f"| {totals['errored']} | 0 | 0 |"
    )
    assert row in summary
    # Annotations: every failing scenario of every shard competes for GitHub's 10 per step.
    annotations = _annotations(captured.out)
    errors = [a for a in annotations if a[0] == "error"]
    failing = totals["failed"] + totals["errored"]
    assert failing > 10
    assert len(errors) == 10
    assert annotations[-1][0] == "notice"
    assert f"{failing - 10} more annotations not shown" in annotations[-1][2]
    files_annotated = {a[1]["file"] for a in errors}
    assert files_annotated <= {f"skills/skill-{i}/tests/scenarios.yaml" for i in range(6)}
    outputs = parse_outputs(files["output"].read_text())
    assert outputs["total"] == "44"
    assert outputs["summary"] == (
        f"44 scenarios: {totals['passed']} passed, {totals['failed']} failed, "
        f"{totals['errored']} errored; failed"
    )
    (comment,) = github.comments(PR)
    assert "<!-- clawspec:ClawSpec:merge -->" in comment["body"]
    assert "**44 scenarios**" in comment["body"]
    # One check run for the matrix, with every failing assertion past the 10 of the step.
    (check,) = github.check_runs()
    assert (check["name"], check["conclusion"]) == ("ClawSpec: merge", "failure")
    failures = [a for a in check["output"]["annotations"] if a["annotation_level"] == "failure"]
    assert len(failures) >= failing > 10
    assert {a["path"] for a in failures} > files_annotated  # files the 10 never reached
    assert row in comment["body"]
    # A re-run of the merge job updates the one comment.
    _job(monkeypatch, tmp_path, "merge-again", "merge")
    assert main(["merge", "reports/shards", "--pr-comment"]) == 1
    assert len(github.comments(PR)) == 1
    assert "PR comment updated" in capsys.readouterr().err
    assert all(r.headers["Authorization"] == f"Bearer {GITHUB_TOKEN}" for r in github.requests)


def test_a_missing_shard_is_an_error_annotation_a_warning_in_summary_and_comment(
    workspace: Path,
    tmp_path: Path,
    github: GitHubApiServer,
    run_shards: RunShards,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_suite(workspace, failing=False)
    _job(monkeypatch, tmp_path, "shards", "clawspec")
    run_shards(3, only=(1, 3))
    files = _job(monkeypatch, tmp_path, "merge", "merge")
    capsys.readouterr()
    assert main(["merge", "reports/shards", "--pr-comment"]) == 1
    out = capsys.readouterr().out
    first = _annotations(out)[0]
    assert first[0] == "error"
    assert first[1]["title"] == "ClawSpec: shard report missing"
    assert "shard 2/3 missing: 15 of 44 scenarios have no result" in first[2]
    summary = files["summary"].read_text()
    assert "> [!CAUTION]" in summary
    assert "Incomplete: shard 2/3 missing: 15 of 44 scenarios have no result" in summary
    assert "Incomplete: shard 2/3 missing" in github.comments(PR)[0]["body"]
    outputs = parse_outputs(files["output"].read_text())
    missing = "shard 2/3 missing: 15 of 44 scenarios have no result"
    assert outputs["summary"] == f"29 scenarios: 29 passed; failed: {missing}"
    # One verdict everywhere: every scenario that reported passed, yet the job fails (exit 1
    # above), the check run fails and the summary's headline says why.
    assert summary.startswith(f"## ClawSpec results\n\n❌ **Failed**: {missing}\n")
    assert f"❌ **Failed**: {missing}" in github.comments(PR)[0]["body"]
    (check,) = github.check_runs()
    assert check["conclusion"] == "failure"
    assert check["output"]["title"] == outputs["summary"]
    assert check["output"]["summary"].startswith(f"❌ **Failed**: {missing}\n")


def test_shard_publish_gives_each_shard_its_own_summary_annotations_and_comment(
    workspace: Path,
    tmp_path: Path,
    github: GitHubApiServer,
    run_shards: RunShards,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_suite(workspace)
    for index in (1, 2):
        files = _job(monkeypatch, tmp_path, f"shard-{index}", "clawspec")
        run_shards(2, "--shard-publish", "--pr-comment", only=(index,))
        shard = read_report(workspace / "reports" / "shards" / f"shard-{index}.json")
        summary = files["summary"].read_text()
        assert f"> Shard {index}/2: {len(shard['scenarios'])} of the 44 selected" in summary
        assert any(a[0] == "error" for a in _annotations(capsys.readouterr().out))
    markers = sorted(c["body"].splitlines()[0] for c in github.comments(PR))
    assert markers == [
        "<!-- clawspec:ClawSpec:clawspec-shard-1 -->",
        "<!-- clawspec:ClawSpec:clawspec-shard-2 -->",
    ]
    _job(monkeypatch, tmp_path, "merge", "merge")
    assert main(["merge", "reports/shards", "--pr-comment"]) == 1
    assert len(github.comments(PR)) == 3  # the merged comment is its own, not a shard's
