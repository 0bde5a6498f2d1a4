"""Merge goes through the regression comparison of `api.finish`, like a run.

A baseline saved by one run; then the suite changes, runs as three shards and is merged with
`--baseline --fail-on regression`: the merged comparison equals the unsharded run's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clawspec.cli import main
from tests.sharding.conftest import RunShards, read_report, write_suite

STORE = ("--baseline", "dir:history")


def _changes(report: dict) -> list[tuple[str, str]]:
    return [(c["id"], c["change"]) for c in report["comparison"]["scenarios"]]


def test_merged_shards_are_compared_with_the_baseline_like_one_run(
    workspace: Path, run_shards: RunShards, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITLAB_CI", "true")
    monkeypatch.setenv("CI_COMMIT_BRANCH", "main")
    monkeypatch.setenv("CI_COMMIT_SHA", "a" * 40)
    files = write_suite(workspace, failing=False)
    args = ["run", ".", "--exclude-tag", "manual", *STORE]
    assert main([*args, "--save-baseline", "--report-json", "base.json"]) == 0
    # The next commit breaks one scenario.
    broken = files[2]
    text = broken.read_text()
    start = text.index("  - name: case-2-3\n")
    end = text.index("  - name: case-2-4\n")
    part = text[start:end].replace("path: out/case-2-3-{{run_id}}.md", "path: out/nowhere.md")
    broken.write_text(text[:start] + part + text[end:])
    monkeypatch.setenv("CI_COMMIT_SHA", "b" * 40)

    assert main([*args, "--fail-on", "regression", "--report-json", "whole.json"]) == 1
    whole = read_report(workspace / "whole.json")
    regressed = [i for i, change in _changes(whole) if change == "regressed"]
    assert regressed == ["skills/skill-2/tests/scenarios.yaml::case-2-3"]

    shards = [read_report(p) for p in run_shards(3, *STORE, "--fail-on", "regression")]
    for shard in shards:  # a shard is compared on its own scenarios: nothing "removed"
        assert {c for _, c in _changes(shard)} <= {"unchanged", "regressed"}
        assert len(_changes(shard)) == len(shard["scenarios"])
    merge = ["merge", "reports/shards", *STORE, "--fail-on", "regression"]
    code = main([*merge, "--report-json", "m.json"])
    assert code == 1
    merged = read_report(workspace / "m.json")
    assert _changes(merged) == _changes(whole)
    assert merged["comparison"]["counts"] == whole["comparison"]["counts"]
    assert merged["baseline"]["run_id"] == whole["baseline"]["run_id"]
    # With the regression policy, the merge passes when nothing regressed.
    broken.write_text(text)
    monkeypatch.setenv("CI_COMMIT_SHA", "c" * 40)
    run_shards(3, *STORE, folder="reports/fixed")
    assert main(["merge", "reports/fixed", *STORE, "--fail-on", "regression"]) == 0
