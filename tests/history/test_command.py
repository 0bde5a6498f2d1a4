"""`clawspec history`, the run flags, and `finish` filling the source and saving the baseline."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from clawspec import cli
from clawspec.api import finish
from clawspec.ci_context import CIContext
from clawspec.commands.options import run_flags
from clawspec.config.settings import Settings
from clawspec.history.dirstore import dir_store
from tests.history.factory import past_run


@pytest.fixture
def stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    store = dir_store("hist", tmp_path)
    store.save(past_run("main", "a" * 40, "2026-11-20T03:00:00+00:00", "run-a", event="schedule"))
    store.save(past_run("main", "b" * 40, "2026-11-21T03:00:00+00:00", "run-b", failing=True))
    store.save(past_run("feature/x", "c" * 40, "2026-11-21T05:00:00+00:00", "run-c"))
    return tmp_path


def test_history_lists_a_branch_newest_first(stored: Path, capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["history", "--baseline", "dir:hist", "--branch", "main"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "2 runs of 'main' in dir:hist, newest first:"
    assert lines[1].startswith(
        "  2026-11-21 03:00 UTC  bbbbbbbbbbbb  push          2 scenarios: 1 passed, 1 failed  "
    )
    assert lines[1].endswith("hist/main/20261121T030000Z-bbbbbbbbbbbb-runb/clawspec-report.json")
    assert lines[2].startswith(
        "  2026-11-20 03:00 UTC  aaaaaaaaaaaa  schedule      2 scenarios: 2 passed  "
    )
    assert len(lines) == 3


def test_history_limit_json_and_config(stored: Path, capsys: pytest.CaptureFixture) -> None:
    (stored / "clawspec.yaml").write_text("baseline: dir:hist\n", encoding="utf-8")
    assert cli.main(["history", "--branch", "main", "--limit", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["store"] == "dir:hist" and data["branch"] == "main"
    assert [run["run_id"] for run in data["runs"]] == ["run-b"]


def test_history_of_a_branch_without_runs_names_the_others(
    stored: Path, capsys: pytest.CaptureFixture
) -> None:
    assert cli.main(["history", "--baseline", "dir:hist", "--branch", "dev"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "no stored runs of 'dev' in dir:hist",
        "branches with stored runs: feature/x, main",
    ]


def test_history_usage_errors_exit_2(stored: Path, capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["history", "--baseline", "report.json"]) == 2
    assert capsys.readouterr().err == (
        "error: baseline 'report.json' is a single report file, not a store of runs\n"
    )
    assert cli.main(["history", "--limit", "0"]) == 2
    assert "--limit: expected a positive number" in capsys.readouterr().err


def test_run_flags_carry_baseline_and_save_baseline() -> None:
    args = cli.build_parser().parse_args(["run", "--baseline", "s3://b/p", "--save-baseline"])
    flags = run_flags(args)
    assert flags["baseline"] == "s3://b/p" and flags["save_baseline"] is True
    assert "save_baseline" not in run_flags(cli.build_parser().parse_args(["run"]))


def test_finish_fills_the_source_and_saves_the_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    report = past_run("x", None, "2026-11-22T08:00:00+00:00").model_copy(update={"source": None})
    environ = {
        "GITLAB_CI": "true",
        "CI_COMMIT_SHA": "d" * 40,
        "CI_COMMIT_REF_NAME": "main",
        "CI_PIPELINE_SOURCE": "schedule",
    }
    settings = Settings(report_dir=str(tmp_path / "out"), baseline="dir:hist", save_baseline=True)
    result = finish(report, settings, environ)
    assert result.report.source is not None
    assert (result.report.source.ci, result.report.source.branch) == ("gitlab", "main")
    assert result.report.source.gateway_url == "http://127.0.0.1:18789"
    saved = tmp_path / "hist/main/20261122T080000Z-dddddddddddd-run1/clawspec-report.json"
    assert json.loads(saved.read_text(encoding="utf-8"))["source"]["event"] == "schedule"


def test_interrupted_runs_and_unwritable_stores_are_not_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clawspec.api import save_baseline

    monkeypatch.chdir(tmp_path)
    run = past_run("main", "e" * 40, "2026-11-22T08:00:00+00:00")
    err = io.StringIO()
    interrupted = run.model_copy(update={"interrupted": True})
    assert not save_baseline(interrupted, Settings(baseline="dir:hist"), CIContext(), err)
    assert err.getvalue() == "note: baseline not saved: the run was interrupted\n"
    # Only partly checked: its unchecked scenarios would be "not compared" ever after.
    from clawspec.reports.model import BudgetReport

    stopped = run.model_copy(
        update={"budget": BudgetReport(max_tokens=1, stopped="run budget spent: 2 of 1 tokens")}
    )
    err = io.StringIO()
    assert not save_baseline(stopped, Settings(baseline="dir:hist"), CIContext(), err)
    assert err.getvalue() == (
        "note: baseline not saved: stopped by the run budget (run budget spent: 2 of 1 tokens): "
        "a partly checked suite\n"
    )
    from tests.reports.factory import report as made
    from tests.reports.factory import scenario

    skipped = made(*(scenario(f"s{i}", "skip") for i in range(3)), scenario("ok", "pass"))
    skipped = skipped.model_copy(update={"source": run.source, "started_at": run.started_at})
    err = io.StringIO()
    assert not save_baseline(skipped, Settings(baseline="dir:hist", max_skipped="1"), CIContext(),
                             err)  # fmt: skip
    assert err.getvalue() == "note: baseline not saved: 3 scenarios skipped, over max_skipped\n"
    assert not (tmp_path / "hist").exists()
    (tmp_path / "blocked").write_text("a file where the folder should be", encoding="utf-8")
    err = io.StringIO()
    assert not save_baseline(run, Settings(baseline="dir:blocked"), CIContext(), err)
    assert err.getvalue().startswith("warning: baseline not saved: ")
    assert "cannot write" in err.getvalue()


def test_history_without_a_branch_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Outside CI and git nothing names the branch: exit 2 with what to do, not an empty 0."""
    for name in [n for n in os.environ if n.startswith(("GITHUB_", "CI_", "GITLAB_", "BRANCH"))]:
        monkeypatch.delenv(name)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert cli.main(["history", "--baseline", "dir:hist"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: this run's branch is unknown (no CI variables, not a git ")
    assert "name one with --branch" in err
