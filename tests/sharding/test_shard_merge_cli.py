"""Shards and merge through the real CLI, against the local hooks server (127.0.0.1)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from clawspec.cli import main
from tests.sharding.conftest import (
    CONTRACTS,
    PER_CONTRACT,
    RunShards,
    read_report,
    verdicts,
    write_suite,
)
from tests.support.hooks_api import HooksServer


def test_three_shards_cover_the_selection_once_and_merge_into_the_unsharded_verdicts(
    workspace: Path,
    hooks: HooksServer,
    run_shards: RunShards,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_suite(workspace)
    whole = workspace / "reports" / "whole.json"
    assert main(["run", ".", "--exclude-tag", "manual", "--report-json", str(whole)]) == 1
    unsharded = read_report(whole)
    selected = [s["id"] for s in unsharded["scenarios"]]
    assert len(selected) == CONTRACTS * PER_CONTRACT - 4  # the `manual` ones filtered out
    assert {s["status"] for s in unsharded["scenarios"]} == {"pass", "fail", "error"}
    assert len(hooks.requests) == len(selected)

    shards = [read_report(path) for path in run_shards(3)]
    ids = [s["id"] for shard in shards for s in shard["scenarios"]]
    assert len(ids) == len(set(ids)), "a scenario ran in two shards"
    assert set(ids) == set(selected)
    assert len(hooks.requests) == 2 * len(selected)  # each scenario invoked once more, not twice
    for index, shard in enumerate(shards, start=1):
        block = shard["shard"]
        assert (block["index"], block["total"], block["selected"]) == (index, 3, len(selected))
        assert block["balanced_by"] == "count"
        assert 13 <= len(shard["scenarios"]) <= 15
        # Each shard keeps the contract order of its part.
        assert [s["id"] for s in shard["scenarios"]] == [selected[p] for p in block["positions"]]
    assert len({s["shard"]["fingerprint"] for s in shards}) == 1
    assert "shard 3/3: " in capsys.readouterr().out

    merged_json = workspace / "reports" / "merged.json"
    merged_xml = workspace / "reports" / "merged.xml"
    code = main(
        ["merge", "reports/shards", "--report-json", str(merged_json), "--junit", str(merged_xml)]
    )
    assert code == 1  # the suite has failures: the same exit policy as the unsharded run
    merged = read_report(merged_json)
    assert verdicts(merged) == verdicts(unsharded)
    assert merged["totals"] == unsharded["totals"]
    assert merged["shard"] is None
    assert merged["merged"]["present"] == [1, 2, 3]
    assert merged["merged"]["missing"] == []
    assert merged["merged"]["fingerprint"] == shards[0]["shard"]["fingerprint"]
    junit = ET.parse(merged_xml).getroot()
    assert junit.get("tests") == str(len(selected))
    assert [s.get("name") for s in junit.iter("testsuite")] == [
        f"skills/skill-{i}/tests/scenarios.yaml" for i in range(CONTRACTS)
    ]
    out = capsys.readouterr().out
    assert f"{len(selected)} scenarios: " in out
    assert "merged 3 of 3 shard report(s)" in out


def test_durations_of_an_earlier_report_balance_the_shards(
    workspace: Path, hooks: HooksServer, run_shards: RunShards
) -> None:
    write_suite(workspace, failing=False)
    earlier = workspace / "earlier.json"
    assert main(["run", ".", "--exclude-tag", "manual", "--report-json", str(earlier)]) == 0
    data = json.loads(earlier.read_text())
    for rank, scenario in enumerate(data["scenarios"]):  # make the durations very uneven
        scenario["duration_ms"] = 60_000 if rank < 4 else 1_000 + rank
    earlier.write_text(json.dumps(data))
    durations = {s["id"]: s["duration_ms"] for s in data["scenarios"]}
    shards = [read_report(p) for p in run_shards(4, "--durations", str(earlier))]
    sums = [sum(durations[s["id"]] for s in shard["scenarios"]) for shard in shards]
    assert all(shard["shard"]["balanced_by"] == "duration" for shard in shards)
    assert max(sums) - min(sums) <= max(durations.values())
    # Each of the four slow scenarios went to its own shard.
    slow = [sum(durations[s["id"]] == 60_000 for s in shard["scenarios"]) for shard in shards]
    assert slow == [1, 1, 1, 1]
    assert main(["merge", "reports/shards/*.json", "--report-json", "reports/m.json"]) == 0


def test_missing_durations_report_warns_and_balances_by_count(
    workspace: Path, run_shards: RunShards, capsys: pytest.CaptureFixture[str]
) -> None:
    write_suite(workspace, failing=False)
    (shard,) = run_shards(2, "--durations", "no-such-report.json", only=(1,))
    assert read_report(shard)["shard"]["balanced_by"] == "count"
    assert "warning: --durations: no-such-report.json: no such file or folder" in (
        capsys.readouterr().err
    )


def test_a_broken_contract_fails_every_shard_with_exit_2(
    workspace: Path, hooks: HooksServer, capsys: pytest.CaptureFixture[str]
) -> None:
    write_suite(workspace)
    broken = workspace / "skills" / "skill-5" / "tests" / "scenarios.yaml"
    broken.write_text(broken.read_text().replace("type: artifact_exists", "type: no_such", 1))
    for index in (1, 2, 3):
        assert main(["run", ".", "--shard", f"{index}/3"]) == 2
        err = capsys.readouterr().err
        assert "skills/skill-5/tests/scenarios.yaml:" in err
        assert "nothing was run" in err
    assert hooks.requests == []


def test_a_missing_shard_fails_the_merge_and_the_report_says_which(
    workspace: Path, run_shards: RunShards, capsys: pytest.CaptureFixture[str]
) -> None:
    write_suite(workspace, failing=False)  # everything passes: only the gap can fail it
    run_shards(4, only=(1, 2, 4))
    code = main(
        [
            *("merge", "reports/shards", "--fail-on", "never"),
            *("--report-json", "m.json", "--junit", "m.xml", "--report-html", "m.html"),
            *("--codequality", "cq.json"),
        ]
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "error: shard 3/4 missing: 11 of 44 scenarios have no result" in err
    # GitLab's merge request shows the gap too, not only fewer findings.
    (gap,) = json.loads((workspace / "cq.json").read_text("utf-8"))
    assert gap["check_name"] == "clawspec/merge" and gap["severity"] == "critical"
    assert gap["description"].startswith("shard 3/4 missing: 11 of 44 scenarios have no result")
    merged = read_report(workspace / "m.json")
    assert merged["merged"]["missing"] == [3]
    assert merged["merged"]["present"] == [1, 2, 4]
    assert merged["merged"]["unreported"] == 11
    assert merged["totals"]["scenarios"] == merged["totals"]["passed"] == 33
    # The JUnit file shows the gap as an errored test case, not as a smaller green run.
    junit = ET.parse(workspace / "m.xml").getroot()
    assert (junit.get("tests"), junit.get("errors")) == ("34", "1")
    (gap,) = [s for s in junit.iter("testsuite") if s.get("name") == "clawspec merge"]
    case = gap.find("testcase")
    assert case is not None and case.get("name") == "shard 3/4"
    error = case.find("error")
    assert error is not None
    assert "shard 3/4 missing: 11 of 44 scenarios have no result" in (error.get("message") or "")
    # the merge writes the HTML report from the same merged model
    html = (workspace / "m.html").read_text("utf-8")
    assert '"missing":[3]' in html and '"passed":33' in html


def test_a_shard_of_another_selection_is_refused(
    workspace: Path, run_shards: RunShards, capsys: pytest.CaptureFixture[str]
) -> None:
    write_suite(workspace, failing=False)
    run_shards(3, only=(1, 3))
    run_shards(3, "--tag", "smoke", folder="reports/other", only=(2,))
    capsys.readouterr()
    code = main(["merge", "reports/shards", "reports/other/shard-2.json"])
    assert code == 2
    err = capsys.readouterr().err
    assert "reports/other/shard-2.json (shard 2/3) is a shard of another selection than" in err
    assert "merge only the shards of one run" in err
    assert not (workspace / "reports" / "clawspec-report.json").exists()


def test_a_shard_of_an_earlier_build_on_another_commit_is_refused(
    workspace: Path,
    run_shards: RunShards,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Jenkins workspace keeps files between builds: the shard report an earlier build
    left must not stand in for this build's shard that died before writing one (the
    selection alone is the same on both commits)."""
    write_suite(workspace, failing=False)
    monkeypatch.setenv("JENKINS_URL", "http://jenkins.invalid/")
    monkeypatch.setenv("GIT_COMMIT", "1" * 40)
    run_shards(3)
    monkeypatch.setenv("GIT_COMMIT", "2" * 40)
    run_shards(3, only=(1, 3))  # shard 2 of this build died: build 1's file is still there
    capsys.readouterr()
    assert main(["merge", "reports/shards"]) == 2
    err = capsys.readouterr().err
    assert "(shard 2/3) ran on commit 111111111111 and " in err, err
    assert "on 222222222222: an earlier build's report?" in err


def test_shards_split_differently_or_twice_or_not_shards_are_refused(
    workspace: Path, run_shards: RunShards, capsys: pytest.CaptureFixture[str]
) -> None:
    write_suite(workspace, failing=False)
    run_shards(2)
    whole = workspace / "whole.json"
    assert main(["run", ".", "--exclude-tag", "manual", "--report-json", str(whole)]) == 0
    run_shards(2, "--durations", str(whole), folder="reports/timed", only=(2,))
    run_shards(2, folder="reports/again", only=(2,))
    capsys.readouterr()
    cases = {
        "split the selection differently": ["reports/shards/shard-1.json", "reports/timed"],
        "shard 2/2 appears twice": ["reports/shards", "reports/again"],
        "whole.json: not a shard report (no 'shard' block)": ["reports/shards", "whole.json"],
        "no shard reports found in empty": ["empty"],
        "nothing*.json: matches no file": ["nothing*.json"],
    }
    (workspace / "empty").mkdir()
    for message, args in cases.items():
        assert main(["merge", *args]) == 2, message
        assert message in capsys.readouterr().err
    # The same report found twice (a folder and the file in it) is one report, not a duplicate.
    assert main(["merge", "reports/shards", "reports/shards/shard-1.json"]) == 0


def test_shard_auto_reads_gitlab_node_variables_and_empty_shards_merge(
    workspace: Path,
    hooks: HooksServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (workspace / "two.clawspec.yaml").write_text(
        'version: "1.0"\ntarget: {type: skill, path: skills/x}\nscenarios:\n'
        '  - name: a\n    when: {invoke: "[write:a.md]"}\n'
        "    then: [{type: artifact_exists, path: a.md}]\n"
        '  - name: b\n    when: {invoke: "[write:b.md]"}\n'
        "    then: [{type: artifact_exists, path: b.md}]\n"
    )
    for index in (1, 2, 3):
        monkeypatch.setenv("CI_NODE_INDEX", str(index))
        monkeypatch.setenv("CI_NODE_TOTAL", "3")
        out = f"reports/auto-{index}.json"
        assert main(["run", ".", "--shard", "auto", "--report-json", out]) == 0
    third = read_report(workspace / "reports" / "auto-3.json")
    assert third["shard"]["index"] == 3
    assert third["scenarios"] == []  # two scenarios, three shards: the third has none
    assert len(hooks.requests) == 2
    assert main(["merge", "reports/auto-*.json", "--report-json", "m.json"]) == 0
    assert [s["name"] for s in read_report(workspace / "m.json")["scenarios"]] == ["a", "b"]
    # Outside a parallel job `auto` runs the whole selection.
    monkeypatch.delenv("CI_NODE_INDEX")
    monkeypatch.delenv("CI_NODE_TOTAL")
    capsys.readouterr()
    assert main(["run", ".", "--shard", "auto", "--report-json", "whole.json"]) == 0
    assert read_report(workspace / "whole.json")["shard"] is None
    assert "CI_NODE_INDEX/CI_NODE_TOTAL are not set" in capsys.readouterr().err


def test_shard_from_config_and_environment_and_dry_run(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_suite(workspace)
    (workspace / "clawspec.yaml").write_text("report_dir: reports\nshard: 2/3\n")
    assert main(["run", ".", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "shard 2/3: 16 of the 48 selected scenarios (balanced by count)" in out
    assert out.count("::case-") == 16
    monkeypatch.setenv("CLAWSPEC_SHARD", "7/3")
    assert main(["run", ".", "--dry-run"]) == 2
    assert "environment CLAWSPEC_SHARD: shard: index must be between 1 and 3" in (
        capsys.readouterr().err
    )


def test_without_durations_the_baseline_store_balances_the_next_pipelines_shards(
    workspace: Path,
    run_shards: RunShards,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """GitLab, twice: the first merge saves the baseline, the next shards balance by it."""
    write_suite(workspace, failing=False)
    monkeypatch.setenv("GITLAB_CI", "true")
    monkeypatch.setenv("CI_COMMIT_BRANCH", "main")
    monkeypatch.setenv("CI_COMMIT_SHA", "a" * 40)
    store = ["--baseline", "dir:history"]
    first = [read_report(p) for p in run_shards(2, *store, "--save-baseline")]
    assert [s["shard"]["balanced_by"] for s in first] == ["count", "count"]
    assert not (workspace / "history").exists()  # a shard alone is never stored
    assert main(["merge", "reports/shards", *store, "--save-baseline"]) == 0
    assert list((workspace / "history").rglob("*.json"))
    monkeypatch.setenv("CI_COMMIT_SHA", "b" * 40)
    capsys.readouterr()
    second = [read_report(p) for p in run_shards(2, *store, folder="reports/next")]
    assert [s["shard"]["balanced_by"] for s in second] == ["duration", "duration"]
    ids = sorted(s["id"] for shard in second for s in shard["scenarios"])
    assert ids == sorted(s["id"] for shard in first for s in shard["scenarios"])
    assert main(["merge", "reports/next", "--report-json", "next.json"]) == 0


def test_an_interrupted_shard_fails_the_merge_with_1_not_130(
    workspace: Path, run_shards: RunShards, capsys: pytest.CaptureFixture[str]
) -> None:
    write_suite(workspace, failing=False)
    paths = run_shards(2)
    data = json.loads(paths[1].read_text())
    data["interrupted"] = True
    paths[1].write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["merge", "reports/shards", "--report-json", "m.json"]) == 1
    err = capsys.readouterr().err
    assert "error: interrupted shard 2/2: the merged report is incomplete" in err
    assert read_report(workspace / "m.json")["interrupted"] is True
