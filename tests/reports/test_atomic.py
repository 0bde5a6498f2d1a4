"""Report files are written atomically, and a write that fails leaves nothing of its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from clawspec.reports.atomic import write_atomic


def test_text_and_bytes_are_written_whole(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "report.json"
    assert write_atomic(target, ["{", '"a": "é"', "}"]) == target
    assert target.read_text("utf-8") == '{"a": "é"}'
    write_atomic(target, b"<xml/>")
    assert target.read_bytes() == b"<xml/>"
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.json"]


def test_a_failed_write_leaves_no_partial_file(tmp_path: Path) -> None:
    target = tmp_path / "junit.xml"
    target.mkdir()  # a folder where the report should go: the final rename fails
    with pytest.raises(IsADirectoryError):
        write_atomic(target, b"<testsuites/>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junit.xml"]

    def chunks() -> Iterator[str]:
        yield '{"scenarios": ['
        raise RuntimeError("renderer failed half-way")

    with pytest.raises(RuntimeError, match="half-way"):
        write_atomic(tmp_path / "report.json", chunks())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junit.xml"]
