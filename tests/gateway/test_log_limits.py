"""Reading a huge log: in blocks (bounded memory), and only its tail when no offset is known."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawspec.gateway.logs import reader
from clawspec.gateway.logs.index import LogIndex
from tests.gateway.test_logs import HOOK_RUN, REAL_LOG, index_for

NOISE = b'{"0":"{\\"subsystem\\":\\"diagnostic\\"}","1":"heartbeat","message":"heartbeat"}\n'


def _summary(index: LogIndex) -> tuple[object, ...]:
    calls = [(c.name, c.run_id, c.line, c.tool_call_id) for c in index.tool_calls]
    return index.found, index.lines_read, calls, index.subagents, index.lines()


@pytest.mark.parametrize("run", ["w1", "s1", "ca", "f1"])
def test_reading_in_small_blocks_gives_the_same_index(
    run: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = _summary(index_for(run))
    monkeypatch.setattr(reader, "READ_BLOCK", 4096)  # the real log's lines reach ~3 KB
    assert _summary(index_for(run)) == whole


def test_a_line_longer_than_a_block_is_counted_not_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader, "READ_BLOCK", 64)
    path = tmp_path / "run.log"
    path.write_bytes(
        b"t0 run_id=abc tool=a\n"
        + b"x" * 500
        + b" run_id=abc tool=huge\n"
        + b"t2 run_id=abc tool=b\n"
    )
    index = LogIndex.build(path, run_ids=["abc"])
    assert index.lines_read == 3
    assert [(c.name, c.line) for c in index.tool_calls] == [("a", 1), ("b", 3)]
    assert [n for n, _ in index.lines()] == [1, 3]


def test_a_long_last_line_still_being_written_waits_for_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader, "READ_BLOCK", 64)
    path = tmp_path / "run.log"
    path.write_bytes(b"t0 run_id=abc tool=a\n" + b"y" * 300)  # no newline yet
    index = LogIndex.build(path, run_ids=["abc"])  # final read: the partial line counts
    assert index.lines_read == 2
    assert [c.name for c in index.tool_calls] == ["a"]


def _big_log(tmp_path: Path, noise_bytes: int) -> Path:
    path = tmp_path / "explicit.log"
    with path.open("wb") as handle:
        handle.write(NOISE * (noise_bytes // len(NOISE)))
        handle.write(REAL_LOG.read_bytes())
    return path


def test_without_offset_only_the_tail_is_read_and_the_run_found(tmp_path: Path) -> None:
    path = _big_log(tmp_path, 3 * 1024 * 1024)
    size = path.stat().st_size
    tail = REAL_LOG.stat().st_size + 100_000
    index = index_for("w1", path, tail_bytes=tail)
    assert index.found and [c.name for c in index.tool_calls] == ["write"]
    # reading starts at the first whole line of the last `tail` bytes
    assert size - tail <= index.skipped_bytes < size - tail + len(NOISE)
    with path.open("rb") as handle:
        handle.seek(index.skipped_bytes - 1)
        assert handle.read(1) == b"\n"
    assert index.start_offset == index.skipped_bytes
    assert index.lines_read < 3 * 1024 * 1024 // len(NOISE)
    # line numbers count from the first line read
    assert [t for _, t in index.lines()] == [t for _, t in index_for("w1").lines()]


def test_a_run_before_the_tail_is_not_found(tmp_path: Path) -> None:
    path = _big_log(tmp_path, 0)
    path.write_bytes(path.read_bytes() + NOISE * 20_000)
    index = index_for("w1", path, tail_bytes=len(NOISE) * 1000)
    assert not index.found and index.skipped_bytes > 0
    assert index.lines_read == 1000


def test_a_known_offset_or_a_small_log_ignores_the_tail(tmp_path: Path) -> None:
    assert index_for("w1", tail_bytes=REAL_LOG.stat().st_size).skipped_bytes == 0
    path = _big_log(tmp_path, 100_000)
    index = index_for("w1", path, offset=100_000 - 100_000 % len(NOISE), tail_bytes=1000)
    assert index.skipped_bytes == 0 and index.found
    assert HOOK_RUN["w1"] in index.seeds
