"""`--runs` beyond what a run can repeat is a usage error naming `--runs`, before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawspec.cli import main


@pytest.mark.parametrize("runs", ["101", "99999999999999999999"])
def test_too_many_runs_is_a_usage_error_about_runs(
    runs: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["bless", "missing.yaml", "--scenario", "s", "--runs", runs]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"error: --runs {runs}: at most 100 runs (the limit of `repeat`)\n"
    assert "running" not in captured.out + captured.err
