"""A shard report nested deeper than Python's JSON reader follows is not a report: a usage
error naming the file (it was an internal error, exit 70)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawspec.cli import main


def test_a_report_nested_too_deep_is_not_a_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "deep.json").write_text('{"a":' * 100_000 + "1" + "}" * 100_000, "utf-8")
    assert main(["merge", "deep.json"]) == 2
    err = capsys.readouterr().err
    assert "deep.json: not a JSON report (nested too deep)" in err
    assert "internal error" not in err
