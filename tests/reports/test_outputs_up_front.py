"""A report that could not be written is said before anything runs (exit 2): a run whose JUnit
file or JSON report is lost would be paid for, and read as green by CI. Through the CLI, against
a hook endpoint on 127.0.0.1 that counts what reaches it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from clawspec.cli import main
from clawspec.reports.atomic import write_atomic
from tests.support.hooks_api import HooksServer

TOKEN = "hooks-outputs-token-9876"
CONTRACT = """version: "1.0"
target: {type: skill, path: skills/x}
scenarios:
  - name: writes
    when: {invoke: "go [write:out/a.md]"}
    then: [{type: artifact_exists, path: out/a.md}]
"""


@pytest.fixture
def hooks(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HooksServer]:
    with HooksServer(TOKEN, workspace) as server:
        monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", TOKEN)
        monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", server.base_url)
        yield server


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--junit", "reports/j.xml"], "JUnit XML 'reports/j.xml' is a folder: give a file name"),
        (
            ["--report-json", "reports/clawspec-report.json"],
            "JSON report 'reports/clawspec-report.json' is a folder: give a file name",
        ),
        (
            ["--junit", "blocker/j.xml"],
            "JUnit XML 'blocker/j.xml': 'blocker' is a file, not a folder",
        ),
        (["--junit", "x" * 252 + ".xml"], "the file name is longer than 255 bytes"),
    ],
    ids=["junit-folder", "json-folder", "under-a-file", "name-too-long"],
)
def test_an_output_that_cannot_be_written_stops_the_run_before_it_starts(
    workspace: Path,
    write_contract,
    hooks: HooksServer,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    said: str,
) -> None:
    write_contract(CONTRACT)
    (workspace / "reports" / "j.xml").mkdir(parents=True)
    (workspace / "reports" / "clawspec-report.json").mkdir()
    (workspace / "blocker").write_text("a file", encoding="utf-8")
    assert main(["run", ".", *flags]) == 2
    err = capsys.readouterr().err
    assert said in err and "nothing was run" in err
    assert hooks.requests == []


def test_a_report_name_near_the_limit_is_written_and_writes_do_not_share_a_partial_file(
    tmp_path: Path,
) -> None:
    long_name = tmp_path / ("x" * 250 + ".xml")  # 254 bytes: legal, with no room for a suffix
    assert write_atomic(long_name, b"<a/>").read_bytes() == b"<a/>"
    first = write_atomic(tmp_path / "r.json", b"1")
    assert first.read_bytes() == b"1" and not list(tmp_path.glob("*.partial"))


EARLIER = {
    "reports/clawspec-report.json": '{"earlier": "run", "totals": {"failed": 0}}',
    "reports/junit.xml": '<testsuites tests="1" failures="0"/>',
    "reports/report.html": "<html>earlier</html>",
    "reports/cq.json": "[]",
    "reports/summary.md": "## ClawSpec: passed",
}
OUTPUT_FLAGS = [
    "--junit", "reports/junit.xml", "--report-html", "reports/report.html",
    "--codequality", "reports/cq.json", "--summary", "reports/summary.md",
]  # fmt: skip


def _earlier_reports(workspace: Path) -> None:
    for name, text in EARLIER.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text, encoding="utf-8")
    (workspace / "reports" / "notes.txt").write_text("the user's own file", encoding="utf-8")


def test_a_run_stopped_by_an_invalid_contract_leaves_no_earlier_report_behind(
    workspace: Path, write_contract, hooks: HooksServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A CI workspace that outlives a build (Jenkins, a self-hosted runner) would read the last
    build's green JUnit file as this build's."""
    _earlier_reports(workspace)
    write_contract(CONTRACT.replace("artifact_exists", "artifact_exist"))
    assert main(["run", ".", *OUTPUT_FLAGS]) == 2
    assert "unknown assertion type 'artifact_exist'" in capsys.readouterr().err
    assert [p for p in EARLIER if (workspace / p).exists()] == []
    notes = (workspace / "reports" / "notes.txt").read_text(encoding="utf-8")
    assert notes == "the user's own file"
    assert hooks.requests == []


def test_a_run_against_an_unreachable_gateway_leaves_no_earlier_report_behind(
    workspace: Path, write_contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    _earlier_reports(workspace)
    write_contract(CONTRACT)
    monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", TOKEN)
    monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", "http://127.0.0.1:9")  # nothing listens
    assert main(["run", ".", *OUTPUT_FLAGS]) == 3
    left = {p: (workspace / p).read_text("utf-8") for p in EARLIER if (workspace / p).exists()}
    assert [p for p, text in left.items() if text == EARLIER[p]] == [], left


def test_a_run_that_runs_writes_its_own_reports_in_place_of_the_earlier_ones(
    workspace: Path, write_contract, hooks: HooksServer
) -> None:
    _earlier_reports(workspace)
    write_contract(CONTRACT)
    assert main(["run", ".", *OUTPUT_FLAGS]) == 0
    assert len(hooks.requests) == 1
    for name, earlier in EARLIER.items():
        assert (workspace / name).read_text(encoding="utf-8") != earlier, name
    assert '"passed": 1' in (workspace / "reports/clawspec-report.json").read_text("utf-8")


def test_a_report_the_run_reads_as_its_baseline_or_durations_is_never_removed(
    workspace: Path, write_contract, hooks: HooksServer
) -> None:
    """Comparing with the last local run (`--baseline` its report, where this run writes its
    own) or balancing shards by it: a stopped run must not delete what the next one reads."""
    write_contract(CONTRACT)
    assert main(["run", "."]) == 0
    report = workspace / "reports" / "clawspec-report.json"
    earlier = report.read_text("utf-8")
    write_contract(CONTRACT.replace("artifact_exists", "artifact_exist"))
    for flags in (["--baseline", str(report)], ["--durations", "reports"]):
        assert main(["run", ".", *flags]) == 2
        assert report.read_text("utf-8") == earlier, flags
    write_contract(CONTRACT)
    assert main(["run", ".", "--baseline", str(report)]) == 0
    compared = json.loads(report.read_text("utf-8"))["comparison"]
    assert [(c["id"], c["change"]) for c in compared["scenarios"]] == [
        ("case.clawspec.yaml::writes", "unchanged")
    ]


def test_a_merge_keeps_the_report_it_compares_with_and_removes_its_own_earlier_outputs(
    workspace: Path, write_contract, hooks: HooksServer
) -> None:
    write_contract(CONTRACT)
    for index in (1, 2):
        assert main(["run", ".", "--shard", f"{index}/2", "--report-json", f"s/{index}.json"]) == 0
    merged = workspace / "reports" / "merged.json"
    assert main(["merge", "s/*.json", "--report-json", str(merged), "--junit", "m.xml"]) == 0
    earlier = merged.read_text("utf-8")
    # Nothing to merge: its earlier JUnit goes; the report named as its baseline stays.
    flags = ["--report-json", str(merged), "--junit", "m.xml", "--baseline", str(merged)]
    assert main(["merge", "none/*.json", *flags]) == 2
    assert merged.read_text("utf-8") == earlier
    assert not (workspace / "m.xml").exists()
