"""The gram index (`LogLines` hands it a file many patterns have searched) on large logs: work
linear in the bytes read, memory bounded whatever the size, the same answers for every kind of
pattern, and an abandoned scenario stops it.

Cost is counted, never timed: bytes decoded and parsed, the size of every segment, the text
kept in memory, and the peak of Python's allocations while a file is indexed."""

from __future__ import annotations

import json
import random
import threading
import tracemalloc
from pathlib import Path

import pytest

from clawspec.gateway.logs import gram_index as log_lines
from clawspec.gateway.logs.gram_index import GramIndex as LogLines
from clawspec.gateway.logs.lines import Interrupted, Match, Pattern
from tests.gateway.test_log_lines import reference

FIXTURES = Path(__file__).parent / "fixtures"
LOGS = sorted(FIXTURES.glob("openclaw-*.log"))


def _gateway_log(path: Path, size: int, seed: int = 3) -> None:
    """Real gateway lines (the recorded fixtures, shuffled) up to about `size` bytes."""
    lines = [line for log in LOGS for line in log.read_text(encoding="utf-8").splitlines(True)]
    rng = random.Random(seed)
    out: list[str] = []
    written = 0
    while written < size:
        line = rng.choice(lines)
        out.append(line)
        written += len(line.encode())
    path.write_text("".join(out), encoding="utf-8")


def _small(monkeypatch: pytest.MonkeyPatch, **sizes: int) -> None:
    """Scale the index's blocks, segments, cache and gram bounds down to a test's files."""
    values = {"BLOCK_BYTES": 64 * 1024, "SEGMENT_BYTES": 16 * 1024, "CACHE_BYTES": 64 * 1024}
    values.update(sizes)
    for name, value in values.items():
        monkeypatch.setattr(log_lines, name, value)


def _peak_while(work) -> int:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_big_log_read_in_one_call_is_cut_into_bounded_segments_each_byte_parsed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All the lines not yet indexed used to go into one open segment, whose kept messages
    grew by copying on every line: work and memory grew with the square, then with the
    file. Now the file is cut as it is read, and each byte is decoded and parsed once."""
    _small(monkeypatch)
    path = tmp_path / "openclaw.log"
    _gateway_log(path, 2 * 1024 * 1024)
    size = path.stat().st_size
    longest = max(len(line) for line in path.read_bytes().splitlines(True))
    index = LogLines(path)
    assert index.first_match(Pattern("no such text anywhere")).line is None
    assert index.bytes_indexed == size
    segments = index.segments
    assert all(s.size <= log_lines.SEGMENT_BYTES + longest for s in segments)
    assert len(segments) >= size // (log_lines.SEGMENT_BYTES + longest)
    assert index.retained <= log_lines.CACHE_BYTES + log_lines.SEGMENT_BYTES + longest


def test_memory_while_indexing_does_not_grow_with_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The peak of Python's allocations while a log is indexed is the same for a log four
    times larger (the bound is the block, the cache and the gram index, not the file)."""
    _small(monkeypatch, GRAM_SEGMENTS=16)
    peaks = []
    for size in (2 * 1024 * 1024, 8 * 1024 * 1024):
        path = tmp_path / f"{size}.log"
        _gateway_log(path, size)
        index = LogLines(path)
        peaks.append(_peak_while(lambda i=index: i.first_match(Pattern("^no such line$"))))
        assert index.retained <= log_lines.CACHE_BYTES + 2 * log_lines.SEGMENT_BYTES
    assert peaks[1] < 1.25 * peaks[0] + 256 * 1024, peaks
    assert peaks[1] < 2 * 1024 * 1024, peaks  # the old index kept the whole 8 MiB and more


def test_a_new_literal_rereads_only_the_segments_that_can_hold_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _small(monkeypatch)
    path = tmp_path / "openclaw.log"
    _gateway_log(path, 1024 * 1024)
    with path.open("a") as handle:
        handle.write(json.dumps({"message": "needle 3b0f1c52 in the middle"}) + "\n")
    _gateway_log(tmp_path / "more.log", 1024 * 1024, seed=4)
    with path.open("a") as handle:
        handle.write((tmp_path / "more.log").read_text())
    index = LogLines(path)
    assert index.first_match(Pattern("other text 00000")).line is None
    read = index.bytes_read
    found = index.first_match(Pattern("needle 3b0f1c52"))
    assert found.line == reference(path, "needle 3b0f1c52").line
    # The segment holding it, and few others, read back from the file (the rest were evicted).
    assert index.bytes_read - read <= 4 * (log_lines.SEGMENT_BYTES + 4096)


def test_past_the_gram_index_bounds_every_later_segment_is_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _small(monkeypatch, GRAM_SEGMENTS=4)
    path = tmp_path / "openclaw.log"
    _gateway_log(path, 512 * 1024)
    with path.open("a") as handle:
        handle.write("the last line 7c1e9d\n")
    index = LogLines(path)
    assert (
        index.first_match(Pattern("the last line 7c1e9d")).line
        == reference(path, "the last line 7c1e9d").line
    )
    assert len(index.segments) > 4
    assert index._indexed == 4


def _patterns(path: Path, rng: random.Random) -> list[str]:
    """Literals taken from the raw lines and from their messages (escaped ones included),
    regexes, invalid regexes, short ones, and some that match nothing."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    messages = [m for m in (log_lines.json_message(line) for line in lines) if m]
    out = ["no such text 0x1", "(unclosed", "^\\{", "runId=[0-9a-f-]{36} ", "done$", "ok"]
    out += ['"status":"ok"', "embedded run done", "tool=write", "\n", "x\ny"]
    for _ in range(40):
        source = rng.choice(lines if rng.random() < 0.5 else messages)
        if not source:
            continue
        start = rng.randrange(len(source))
        out.append(source[start : start + rng.randrange(3, 40)])
    for message in messages:
        if '"' in message or "\n" in message:  # escaped in the raw line: only its message has it
            out.append(message[:30])
            break
    return out


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
@pytest.mark.parametrize("scale", ["default", "small"])
def test_every_kind_of_pattern_gives_the_straightforward_reading_on_real_logs(
    log: Path, scale: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plain literals, regexes, invalid regexes and literals only a message holds, on the
    recorded gateway logs: the same first line as reading the file line by line, with the
    default sizes and with segments, cache and gram index scaled down (evicted segments read
    back from the file, segments past the gram index searched)."""
    if scale == "small":
        _small(monkeypatch, BLOCK_BYTES=8192, SEGMENT_BYTES=2048, CACHE_BYTES=8192,
               GRAM_SEGMENTS=8)  # fmt: skip
    path = tmp_path / log.name
    path.write_bytes(log.read_bytes())
    index = LogLines(path)
    for pattern in _patterns(path, random.Random(log.name)):
        got, want = index.first_match(Pattern(pattern)), reference(path, pattern)
        assert got.line == want.line, pattern
        assert got.lines == len(path.read_bytes().splitlines()), pattern


class _StopAfter(threading.Event):
    """An event that reads as set from its `calls`-th check on: a stop mid-way, counted."""

    def __init__(self, calls: int) -> None:
        super().__init__()
        self.calls = calls

    def is_set(self) -> bool:
        self.calls -= 1
        return self.calls < 0 or super().is_set()


def test_a_stopped_run_ends_the_indexing_within_a_block_and_the_next_call_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _small(monkeypatch)
    path = tmp_path / "openclaw.log"
    _gateway_log(path, 1024 * 1024)
    index = LogLines(path)
    stop = threading.Event()
    stop.set()
    with pytest.raises(Interrupted, match=r"interrupted after reading 0 of the [\d,]+ bytes"):
        index.first_match(Pattern("tool=write"), stop)
    assert index.bytes_read == 0
    with pytest.raises(Interrupted):
        index.first_match(Pattern("^tool=write"), _StopAfter(3))
    assert index.bytes_read <= 3 * log_lines.BLOCK_BYTES
    assert 0 < index.bytes_indexed <= 3 * log_lines.BLOCK_BYTES
    for pattern in ("^tool=write", "tool=write", "no such text 0x1"):
        assert index.first_match(Pattern(pattern)).line == reference(path, pattern).line
    assert index.bytes_indexed == path.stat().st_size  # nothing parsed twice


def test_a_stopped_run_ends_a_regex_search_between_segments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _small(monkeypatch)
    path = tmp_path / "openclaw.log"
    _gateway_log(path, 512 * 1024)
    index = LogLines(path)
    index.first_match(Pattern("warm up 0x1"))
    with pytest.raises(Interrupted):
        index.first_match(Pattern("^no (such|line)$"), _StopAfter(5))


def test_pattern_found_in_the_last_line_still_being_written_of_a_big_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _small(monkeypatch)
    path = tmp_path / "openclaw.log"
    _gateway_log(path, 256 * 1024)
    with path.open("a") as handle:
        handle.write('{"message": "half written')
    index = LogLines(path)
    assert index.first_match(Pattern("half written")) == Match(
        reference(path, "half written").line, len(path.read_bytes().splitlines())
    )


def test_a_regex_whose_needle_no_segment_holds_decodes_no_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the index answers, a regex was checked line by line in every segment (each line
    decoded and its JSON parsed: 6-7 times slower than before the index). A segment whose bytes
    hold none of the regex's needles, nor an escape that may hide one, is passed over."""
    _small(monkeypatch)
    path = tmp_path / "openclaw.log"
    lines = [json.dumps({"message": f"tool=exec run {i:06d}"}) for i in range(20_000)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    index = LogLines(path)
    assert index.first_match(Pattern("literal never there")).line is None  # builds the index
    parsed: list[str] = []
    real = log_lines.json_message
    monkeypatch.setattr(log_lines, "json_message", lambda t: parsed.append(t) or real(t))
    assert index.first_match(Pattern(r"hook run 1 .*zzz\d")).line is None
    assert parsed == []
    found = index.first_match(Pattern(r"run 01999\d$"))
    assert found.line == reference(path, r"run 01999\d$").line == 19_991
