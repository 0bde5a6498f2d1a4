"""Two runs through the real CLI, the second compared with the first (`--baseline FILE`)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from clawspec.cli import main
from clawspec.reports.json_report import schema_path
from tests.support.hooks_api import HooksServer

HEADER = """version: "1.0"
target: {type: skill, path: skills/news}
defaults: {timeout: 5, poll_interval: 0.05}
scenarios:
"""
WRITES = '"[write:out/{{run_id}}.md]"'
SILENT = '"nothing written"'


def _contract(**invokes: str) -> str:
    """One scenario per keyword: its invoke either writes the file the assertion wants or not."""
    body = "".join(
        f"  - name: {name}\n    when: {{invoke: {invoke}}}\n"
        '    then: [{type: artifact_exists, path: "out/{{run_id}}.md"}]\n'
        for name, invoke in invokes.items()
    )
    return HEADER + body


def _report(path: Path) -> dict:
    data = json.loads(path.read_text("utf-8"))
    jsonschema.validate(data, json.loads(schema_path().read_text("utf-8")))
    return data


def _baseline_run(workspace: Path, write_contract) -> Path:
    write_contract(
        _contract(breaks=WRITES, heals=SILENT, known_bad=SILENT, dropped=WRITES, steady=WRITES)
    )
    baseline = workspace / "baseline.json"
    assert main(["run", ".", "--report-json", str(baseline)]) == 1
    return baseline


def test_comparison_names_each_change_and_only_the_regression_fails_the_run(
    workspace: Path, write_contract, server: HooksServer, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = _baseline_run(workspace, write_contract)
    write_contract(
        _contract(breaks=SILENT, heals=WRITES, known_bad=SILENT, steady=WRITES, added=WRITES)
    )
    capsys.readouterr()
    code = main(["run", ".", "--baseline", str(baseline), "--fail-on", "regression"])
    assert code == 1
    report = _report(workspace / "reports" / "clawspec-report.json")
    changes = {c["id"].split("::")[1]: c["change"] for c in report["comparison"]["scenarios"]}
    assert changes == {
        "breaks": "regressed",
        "heals": "fixed",
        "known_bad": "still_failing",
        "steady": "unchanged",
        "added": "new",
        "dropped": "removed",
    }
    assert report["comparison"]["regressions"] == ["case.clawspec.yaml::breaks: pass → fail"]
    assert report["baseline"]["location"] == str(baseline)
    out = capsys.readouterr().out
    assert "Regressions since" in out
    assert out.index("REGRESSED case.clawspec.yaml::breaks: pass → fail") < out.index("Fixed:")
    assert "FIXED     case.clawspec.yaml::heals: fail → pass" in out


def test_only_the_known_failure_left_exits_0_with_fail_on_regression(
    workspace: Path, write_contract, server: HooksServer
) -> None:
    baseline = _baseline_run(workspace, write_contract)
    write_contract(
        _contract(breaks=WRITES, heals=WRITES, known_bad=SILENT, steady=WRITES, added=WRITES)
    )
    assert main(["run", ".", "--baseline", str(baseline), "--fail-on", "regression"]) == 0
    report = _report(workspace / "reports" / "clawspec-report.json")
    assert report["totals"]["failed"] == 1  # known_bad still fails ...
    assert report["comparison"]["counts"]["still_failing"] == 1
    assert report["comparison"]["regressions"] == []  # ... and does not fail the job
    assert main(["run", ".", "--baseline", str(baseline)]) == 1  # the normal policy does


def test_no_baseline_found_says_so_and_falls_back_to_the_normal_policy(
    workspace: Path, write_contract, server: HooksServer, capsys: pytest.CaptureFixture[str]
) -> None:
    write_contract(_contract(fine=WRITES, broken=SILENT))
    missing = workspace / "nowhere.json"
    assert main(["run", ".", "--baseline", str(missing), "--fail-on", "regression"]) == 1
    out, err = capsys.readouterr()
    # Said once, by the terminal's headline, with how the run was judged.
    assert "No baseline found: " in out and "; judged by the normal exit policy" in out
    assert "no baseline" not in err.lower()
    report = _report(workspace / "reports" / "clawspec-report.json")
    assert report["baseline"] is None
    assert report["comparison"]["baseline_missing"]
    assert report["comparison"]["scenarios"] == []
    write_contract(_contract(fine=WRITES))
    assert main(["run", ".", "--fail-on", "regression"]) == 0  # no --baseline at all: same rule
    out = capsys.readouterr().out
    assert "No baseline configured (set --baseline); judged by the normal exit policy" in out


def test_nightly_runs_saved_in_a_folder_store_give_trends_and_compare_with_the_previous_run(
    workspace: Path,
    write_contract,
    server: HooksServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("JENKINS_URL", "http://127.0.0.1:8080/")
    monkeypatch.setenv("BRANCH_NAME", "main")
    write_contract(
        HEADER + "  - name: wobbly\n    repeat: 3\n    min_pass_rate: 0.6\n"
        '    when: {invoke: "[write:out/{{run_id}}.md][nth:w:ok,quiet,ok]"}\n'
        '    then: [{type: artifact_exists, path: "out/{{run_id}}.md"}]\n'
    )
    args = ["run", ".", "--baseline", "dir:history", "--save-baseline", "--fail-on", "regression"]
    for night, commit in enumerate(["a" * 40, "b" * 40, "c" * 40], 1):
        monkeypatch.setenv("GIT_COMMIT", commit)
        assert main(args) == 0
        report = _report(workspace / "reports" / "clawspec-report.json")
        if night == 1:  # nothing stored yet: no baseline, no trend
            assert (
                report["comparison"]["baseline_missing"] == "no stored run of 'main' in dir:history"
            )
            assert report["trends"] == []
            continue
        (trend,) = report["trends"]
        assert trend["pass_rates"] == [0.6667] * night
        assert trend["runs"][-1] == "this run"
        assert report["baseline"]["commit"] == ("a" if night == 2 else "b") * 40
        assert report["baseline"]["branch"] == "main"
        assert report["comparison"]["scenarios"][0]["change"] == "flaky"
    out = capsys.readouterr().out
    assert "No regressions since main @ bbbbbbb" in out


def test_shards_compare_their_own_part_and_the_merge_compares_the_whole_run(
    workspace: Path, write_contract, server: HooksServer
) -> None:
    baseline = _baseline_run(workspace, write_contract)
    write_contract(
        _contract(breaks=SILENT, heals=WRITES, known_bad=SILENT, steady=WRITES, added=WRITES)
    )
    compare = ["--baseline", str(baseline), "--fail-on", "regression"]
    shard_changes: dict[str, str] = {}
    for index in (1, 2):
        path = workspace / "shards" / f"shard-{index}.json"
        main(["run", ".", "--shard", f"{index}/2", "--report-json", str(path), *compare])
        for change in _report(path)["comparison"]["scenarios"]:
            shard_changes[change["id"].split("::")[1]] = change["change"]
    # Each shard saw only its own scenarios: `dropped` is nobody's, so no shard calls it removed.
    assert shard_changes == {
        "breaks": "regressed",
        "heals": "fixed",
        "known_bad": "still_failing",
        "steady": "unchanged",
        "added": "new",
    }
    merged = workspace / "merged.json"
    assert main(["merge", "shards", "--report-json", str(merged), *compare]) == 1
    comparison = _report(merged)["comparison"]
    changes = {c["id"].split("::")[1]: c["change"] for c in comparison["scenarios"]}
    assert changes["dropped"] == "removed" and changes["breaks"] == "regressed"
    assert comparison["regressions"] == ["case.clawspec.yaml::breaks: pass → fail"]
