"""The dir: store: layout, round trip, index repair, and baselines/trends read from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawspec import secrets as registry
from clawspec.ci_context import CIContext
from clawspec.config.settings import Settings
from clawspec.history.baseline import Baseline, NoBaseline, find_baseline, recent_runs
from clawspec.history.dirstore import dir_store
from clawspec.history.store import HistoryError
from clawspec.history.stores import save_report
from clawspec.reports.model import RunSource
from tests.history.factory import past_run

MAIN_A = "a" * 40
MAIN_B = "b" * 40
FEATURE = "f" * 40
NO_CI = CIContext.from_environ({})  # a run outside CI


def test_saved_runs_follow_the_layout_and_round_trip(tmp_path: Path) -> None:
    store = dir_store("hist", tmp_path)
    first = past_run("main", MAIN_A, "2026-11-20T03:00:00.000+00:00", "run-a")
    second = past_run("main", MAIN_B, "2026-11-21T03:00:00.000+00:00", "run-b", failing=True)
    branch = past_run("feature/x", FEATURE, "2026-11-21T05:00:00.000+00:00", "run-f")
    for item in (second, first, branch):  # saved out of order: listing still sorts by time
        store.save(item, committed_at="2026-11-19T10:00:00+00:00")

    report_file = tmp_path / "hist/main/20261120T030000Z-aaaaaaaaaaaa-runa/clawspec-report.json"
    assert report_file.is_file()
    assert (
        tmp_path / "hist/feature%2Fx/20261121T050000Z-ffffffffffff-runf/clawspec-report.json"
    ).is_file()
    index = json.loads((tmp_path / "hist/main/index.json").read_text(encoding="utf-8"))
    assert [run["key"] for run in index["runs"]] == [
        "20261120T030000Z-aaaaaaaaaaaa-runa",
        "20261121T030000Z-bbbbbbbbbbbb-runb",
    ]
    assert store.branches() == ["feature/x", "main"]
    runs = store.runs("main")
    assert [run.run_id for run in runs] == ["run-a", "run-b"]
    assert runs[1].totals["failed"] == 1
    assert runs[0].committed_at == "2026-11-19T10:00:00+00:00"
    assert runs[0].location == str(report_file)
    assert store.load(runs[0]) == first
    assert store.load(runs[1]) == second
    assert [run.run_id for run in store.runs("feature/x")] == ["run-f"]
    assert store.runs("feature") == []


def test_a_run_missing_from_the_index_is_still_listed(tmp_path: Path) -> None:
    store = dir_store("hist", tmp_path)
    store.save(past_run("main", MAIN_A, "2026-11-20T03:00:00+00:00", "run-a"))
    index = tmp_path / "hist/main/index.json"
    saved = index.read_text(encoding="utf-8")
    store.save(past_run("main", MAIN_B, "2026-11-21T03:00:00+00:00", "run-b"))
    index.write_text(saved, encoding="utf-8")  # the second save lost a race for the index
    assert [run.run_id for run in store.runs("main")] == ["run-a", "run-b"]
    index.write_text("{not json", encoding="utf-8")  # a damaged index is only a cache
    assert [run.run_id for run in store.runs("main")] == ["run-a", "run-b"]


def test_a_run_folder_removed_by_hand_leaves_the_listing_and_the_next_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folders are the truth: a removed run is not a candidate (it hid the older baseline
    behind "stored report is missing" notes), and the next save writes the index without it."""
    import shutil

    monkeypatch.chdir(tmp_path)
    store = dir_store("hist", tmp_path)
    store.save(past_run("main", MAIN_A, "2026-11-20T03:00:00+00:00", "run-a"))
    newer = store.save(past_run("main", MAIN_B, "2026-11-21T03:00:00+00:00", "run-b"))
    shutil.rmtree(tmp_path / "hist/main" / newer.key)
    assert [run.run_id for run in store.runs("main")] == ["run-a"]
    found = find_baseline(
        "dir:hist", RunSource(branch="main"), Settings(baseline="dir:hist"), NO_CI
    )
    assert isinstance(found, Baseline) and found.report.run_id == "run-a"
    assert not [note for note in found.notes if "missing" in note]
    (tmp_path / "hist/main/index.json").unlink()  # a lost index is written whole again
    store.save(past_run("main", MAIN_B, "2026-11-22T03:00:00+00:00", "run-c"))
    index = json.loads((tmp_path / "hist/main/index.json").read_text(encoding="utf-8"))
    assert [run["run_id"] for run in index["runs"]] == ["run-a", "run-c"]


def test_two_runs_of_one_commit_started_in_one_second_keep_a_folder_each(
    tmp_path: Path,
) -> None:
    store = dir_store("hist", tmp_path)
    for run_id in ("16a2c263679445b9", "9f0e1d2c3b4a5968"):
        store.save(past_run("main", MAIN_A, "2026-11-20T03:00:00+00:00", run_id))
    assert [run.run_id for run in store.runs("main")] == ["16a2c263679445b9", "9f0e1d2c3b4a5968"]
    assert sorted(p.name for p in (tmp_path / "hist/main").iterdir() if p.is_dir()) == [
        "20261120T030000Z-aaaaaaaaaaaa-16a2c263",
        "20261120T030000Z-aaaaaaaaaaaa-9f0e1d2c",
    ]


def test_an_unreadable_run_the_index_lacks_is_skipped_not_the_whole_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder whose report cannot be read (cut short, written by a newer ClawSpec) and that
    the index does not list: the next older run is the baseline, with a note naming it."""
    monkeypatch.chdir(tmp_path)
    store = dir_store("hist", tmp_path)
    store.save(past_run("main", MAIN_A, "2026-11-20T03:00:00+00:00", "run-a"))
    bad = tmp_path / "hist/main/20261129T235959Z-deadbeefdead/clawspec-report.json"
    bad.parent.mkdir()
    bad.write_text('{"version": "0.1.0", "run_id": "x"', encoding="utf-8")
    listed = store.runs("main")
    assert [(r.key, r.created_at) for r in listed][-1] == (
        "20261129T235959Z-deadbeefdead",
        "2026-11-29T23:59:59+00:00",
    )
    source = RunSource(commit="c" * 40, branch="main", event="schedule")
    found = find_baseline("dir:hist", source, Settings(baseline="dir:hist"), NO_CI)
    assert isinstance(found, Baseline) and found.report.run_id == "run-a"
    assert any("deadbeefdead" in note and "not a ClawSpec JSON report" in note
               for note in found.notes)  # fmt: skip


def test_a_baseline_dated_in_the_future_is_used_and_said_to_be(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine with its clock ahead saved it: it stays the newest run of the branch (the
    baseline of every later run) until that time; the comparison says so."""
    monkeypatch.chdir(tmp_path)
    store = dir_store("hist", tmp_path)
    store.save(past_run("main", MAIN_A, "2026-11-20T03:00:00+00:00", "run-a"))
    store.save(past_run("main", MAIN_B, "2999-01-01T00:00:00+00:00", "run-ahead"))
    source = RunSource(commit="c" * 40, branch="main", event="schedule")
    found = find_baseline("dir:hist", source, Settings(baseline="dir:hist"), NO_CI)
    assert isinstance(found, Baseline) and found.report.run_id == "run-ahead"
    assert found.notes[-1].startswith(
        "the baseline main @ bbbbbbbbbbbb, 2999-01-01 00:00 UTC is dated later than now"
    )
    store.save(past_run("main", FEATURE, "2026-11-21T03:00:00+00:00", "run-b"))
    (tmp_path / "hist/main/29990101T000000Z-bbbbbbbbbbbb-runahead").rename(tmp_path / "gone")
    found = find_baseline("dir:hist", source, Settings(baseline="dir:hist"), NO_CI)
    assert isinstance(found, Baseline) and "dated later" not in found.notes[-1]


def test_saving_a_run_without_a_branch_says_why(tmp_path: Path) -> None:
    store = dir_store("hist", tmp_path)
    with pytest.raises(HistoryError, match="its branch is unknown"):
        store.save(past_run(None, MAIN_A, "2026-11-20T03:00:00+00:00"))


def test_saved_reports_mask_secrets(tmp_path: Path) -> None:
    settings = Settings(baseline="dir:hist")
    run = past_run("main", MAIN_A, "2026-11-20T03:00:00+00:00")
    run = run.model_copy(update={"run_id": "leaked-s3cr3t-value"})
    store = dir_store("hist", tmp_path)
    with registry.scope() as active:  # as a command's, holding the secret
        active.add("s3cr3t-value")
        store.save(run)
    text = next((tmp_path / "hist/main").glob("*/clawspec-report.json")).read_text()
    assert "s3cr3t-value" not in text and "leaked-***" in text
    assert settings.baseline == "dir:hist"


def test_push_runs_compare_with_the_previous_run_of_their_branch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings(baseline="dir:hist")
    store = dir_store("hist", tmp_path)
    store.save(past_run("main", MAIN_A, "2026-11-20T03:00:00+00:00", "run-a"))
    store.save(past_run("main", MAIN_B, "2026-11-21T03:00:00+00:00", "run-b"))
    store.save(past_run("other", FEATURE, "2026-11-22T03:00:00+00:00", "run-o"))
    source = RunSource(commit="c" * 40, branch="main", event="schedule")

    found = find_baseline("dir:hist", source, settings, NO_CI)
    assert isinstance(found, Baseline)
    assert found.report.run_id == "run-b"
    assert found.ref.source == "dir:hist"
    assert found.ref.branch == "main"
    assert found.ref.commit == MAIN_B
    assert found.ref.run_id == "run-b"
    assert found.ref.created_at == "2026-11-21T03:00:00+00:00"
    assert found.ref.location.endswith(
        "hist/main/20261121T030000Z-bbbbbbbbbbbb-runb/clawspec-report.json"
    )
    assert found.notes[-1] == (
        "baseline: previous run of 'main': main @ bbbbbbbbbbbb, 2026-11-21 03:00 UTC"
    )
    # The run itself (saved before comparing) is never its own baseline.
    itself = find_baseline("dir:hist", source, settings, NO_CI, current_run_id="run-b")
    assert isinstance(itself, Baseline) and itself.report.run_id == "run-a"


def test_no_baseline_is_a_reason_never_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings()
    main = RunSource(branch="main")
    cases = {
        "dir:empty": "no stored run of 'main' in dir:empty",
        "missing.json": "baseline file 'missing.json' does not exist",
        "ftp://host/x": "baseline 'ftp://host/x' unavailable: baseline 'ftp://host/x': expected "
        "a report file, dir:PATH, s3://bucket/prefix or github",
        "dir:": "baseline 'dir:' unavailable: dir: needs a folder, e.g. 'dir:.clawspec-history'",
    }
    for spec, reason in cases.items():
        found = find_baseline(spec, main, settings, NO_CI)
        assert isinstance(found, NoBaseline), spec
        assert found.reason == reason
    nowhere = find_baseline("dir:empty", RunSource(), settings, NO_CI)
    assert isinstance(nowhere, NoBaseline)
    assert nowhere.reason.startswith("cannot tell this run's branch")
    (tmp_path / "bad.json").write_text('{"run_id": 3}', encoding="utf-8")
    bad = find_baseline("bad.json", main, settings, NO_CI)
    assert isinstance(bad, NoBaseline)
    assert bad.reason.startswith("bad.json: not a ClawSpec JSON report this version can read")


def test_a_report_file_is_a_baseline_and_save_overwrites_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings(baseline="base.json")
    first = past_run("main", MAIN_A, "2026-11-20T03:00:00+00:00", "run-a")
    assert save_report(first, settings, NO_CI) == f"baseline saved: {tmp_path / 'base.json'}"
    found = find_baseline("base.json", RunSource(branch="x"), settings, NO_CI)
    assert isinstance(found, Baseline)
    assert found.report == first
    assert found.ref.source == "file"
    assert found.ref.location == "base.json"
    assert (found.ref.branch, found.ref.commit) == ("main", MAIN_A)


def test_save_without_a_baseline_uses_the_default_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    message = save_report(past_run("main", MAIN_A, "2026-11-20T03:00:00+00:00"), Settings(), NO_CI)
    saved = (
        tmp_path / ".clawspec-history/main/20261120T030000Z-aaaaaaaaaaaa-run1/clawspec-report.json"
    )
    assert message == f"baseline saved: {saved}"
    assert saved.is_file()


def test_recent_runs_are_the_newest_n_oldest_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = dir_store("hist", tmp_path)
    for day in range(10, 20):
        store.save(past_run("main", f"{day:040d}", f"2026-11-{day}T03:00:00+00:00", f"run-{day}"))
    recent = recent_runs("dir:hist", "main", 3, Settings(), NO_CI)
    assert [report.run_id for _, report in recent.runs] == ["run-17", "run-18", "run-19"]
    assert recent.notes == ()
    broken = next((tmp_path / "hist/main").glob("20261118*/clawspec-report.json"))
    broken.write_text("[]", encoding="utf-8")
    recent = recent_runs("dir:hist", "main", 3, Settings(), NO_CI)
    assert [report.run_id for _, report in recent.runs] == ["run-17", "run-19"]
    assert len(recent.notes) == 1 and "not a ClawSpec JSON report" in recent.notes[0]
    assert recent_runs("dir:hist", None, 3, Settings(), NO_CI).runs == []
    # A PR's trend ends at its baseline (the base branch's runs after its merge-base are not
    # its history).
    until = recent_runs("dir:hist", "main", 3, Settings(), NO_CI, until="2026-11-15T03:00:00Z")
    assert [report.run_id for _, report in until.runs] == ["run-13", "run-14", "run-15"]
