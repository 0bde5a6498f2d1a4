"""The whole-file line search on large logs: the bytes decide for most lines (only those that
may match are decoded), memory bounded whatever the size, the same answers for every kind of
pattern, and an abandoned scenario stops it.

Cost is counted, never timed: bytes read, bytes decoded, and the peak of Python's allocations
while a file is searched."""

from __future__ import annotations

import random
import threading
import tracemalloc
from pathlib import Path

import pytest

from clawspec.gateway.logs import lines as log_lines
from clawspec.gateway.logs.lines import Interrupted, LogLines, Match, Pattern
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


def _small(monkeypatch: pytest.MonkeyPatch, block: int = 64 * 1024) -> None:
    """Scale the blocks read down to a test's files."""
    monkeypatch.setattr(log_lines, "BLOCK_BYTES", block)


def _reread(path: Path) -> int:
    """Bytes a search may read twice: the part line at the end of each block (read again with
    the next one), and the 2 x 64 bytes that re-identify the file before and after."""
    longest = max(len(line) for line in path.read_bytes().splitlines(True))
    return (path.stat().st_size // log_lines.BLOCK_BYTES + 1) * longest + 4 * 64


def _peak_while(work) -> int:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_pattern_absent_from_a_big_log_reads_it_once_and_decodes_no_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recorded gateway lines hold no `\\u` escape: a literal or a regex with a needle that
    no line holds is decided by the bytes alone."""
    _small(monkeypatch)
    path = tmp_path / "openclaw.log"
    _gateway_log(path, 2 * 1024 * 1024)
    size = path.stat().st_size
    assert b"\\u" not in path.read_bytes()
    lines = len(path.read_bytes().splitlines())
    index = LogLines(path)
    for pattern in ("NEVER-IN-THIS-LOG", r"tool=exec\b", r"^no such line$", "(?i)NO SUCH LINE"):
        read = index.bytes_read
        assert index.first_match(Pattern(pattern)) == Match(None, lines), pattern
        assert size <= index.bytes_read - read <= size + _reread(path), pattern
    assert index.bytes_decoded == 0


def test_only_the_lines_holding_a_needle_are_decoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tool=write` is in some lines: those are decoded (and fail `tool=write\\b\\d`), the
    others are not; a regex with no needle (`\\d{40}`) decodes every line."""
    _small(monkeypatch)
    path = tmp_path / "openclaw.log"
    _gateway_log(path, 1024 * 1024)
    data = path.read_bytes()
    holding = sum(len(line) for line in data.splitlines(True) if b"tool=write" in line)
    assert 0 < holding < len(data) // 10
    index = LogLines(path)
    assert index.first_match(Pattern(r"tool=write\d")).line is None
    assert index.bytes_decoded == holding
    assert index.first_match(Pattern(r"\d{40}")).line is None
    assert index.bytes_decoded == holding + len(data)


def test_memory_while_searching_does_not_grow_with_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The peak of Python's allocations while a log is searched is the same for a log four
    times larger (the bound is the block read, not the file), with and without a needle."""
    _small(monkeypatch)
    for pattern in ("NEVER-IN-THIS-LOG", r"^\d{40}$"):
        peaks = []
        for size in (2 * 1024 * 1024, 8 * 1024 * 1024):
            path = tmp_path / f"{size}.log"
            if not path.exists():
                _gateway_log(path, size)
            index = LogLines(path)
            peaks.append(_peak_while(lambda i=index, p=pattern: i.first_match(Pattern(p))))
        assert peaks[1] < 1.25 * peaks[0] + 256 * 1024, (pattern, peaks)
        assert peaks[1] < 2 * 1024 * 1024, (pattern, peaks)


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
    default blocks and with small ones."""
    if scale == "small":
        _small(monkeypatch, 4096)  # longer than any line, most lines cut across two reads
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


def test_a_stopped_run_ends_the_reading_within_a_block_and_the_next_call_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _small(monkeypatch)
    path = tmp_path / "openclaw.log"
    _gateway_log(path, 1024 * 1024)
    size = path.stat().st_size
    index = LogLines(path)
    stop = threading.Event()
    stop.set()
    with pytest.raises(Interrupted, match=r"interrupted after reading 0 of the [\d,]+ bytes"):
        index.first_match(Pattern("tool=write"), stop)
    assert index.bytes_read == 0
    with pytest.raises(Interrupted) as stopped:
        index.first_match(Pattern("no such text 0x1"), _StopAfter(3))
    assert 0 < stopped.value.read <= 3 * log_lines.BLOCK_BYTES
    assert index.bytes_read <= 3 * log_lines.BLOCK_BYTES + 4 * 64  # blocks, fingerprints
    read = index.bytes_read
    for pattern in ("no such text 0x1", "^tool=write", "tool=write"):
        assert index.first_match(Pattern(pattern)).line == reference(path, pattern).line
        if pattern == "no such text 0x1":  # went on from where it stopped
            assert index.bytes_read - read <= size - stopped.value.read + _reread(path)


def test_a_stopped_run_ends_a_search_without_needle_between_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _small(monkeypatch)
    path = tmp_path / "openclaw.log"
    _gateway_log(path, 512 * 1024)
    index = LogLines(path)
    with pytest.raises(Interrupted) as stopped:
        index.first_match(Pattern(r"^\d+$"), _StopAfter(5))
    assert 4 * log_lines.BLOCK_BYTES < stopped.value.read <= 5 * log_lines.BLOCK_BYTES
    assert index.bytes_decoded == stopped.value.read  # every line decoded, up to the stop


def test_log_entry_in_an_interrupted_run_is_an_error_naming_how_far_it_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.harness import evaluate_one, make_context

    _small(monkeypatch)
    _gateway_log(tmp_path / "big.log", 256 * 1024)
    ctx = make_context(tmp_path)
    ctx.stop.set()
    verdict = evaluate_one('type: log_entry\npath: big.log\npattern: "tool=write"', ctx)
    assert verdict.status.value == "error"
    assert verdict.message.startswith("log 'big.log' not searched to its end: interrupted ")


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


def test_a_file_many_new_patterns_searched_goes_to_the_gram_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A suite's scenarios each ask their own pattern of the shared gateway log: after
    INDEX_AFTER passes over its bytes the gram index answers, and a new literal then reads
    only the segments that can hold it, not the whole file again."""
    _small(monkeypatch)
    monkeypatch.setattr(log_lines, "INDEX_MIN_BYTES", 256 * 1024)
    monkeypatch.setattr(log_lines, "INDEX_AFTER", 4)
    path = tmp_path / "openclaw.log"
    _gateway_log(path, 1024 * 1024)
    size = path.stat().st_size
    index = LogLines(path)
    for number in range(4):
        assert index.first_match(Pattern(f"absent 0x{number}")).line is None
        assert index.index is None  # one pass per new pattern so far
    assert index.first_match(Pattern("absent 0x1")).line is None  # asked again: no pass
    assert index.index is None
    assert index.first_match(Pattern("absent 0x4")).line is None
    gram = index.index
    assert gram is not None
    assert gram.bytes_read >= size  # built once, over the whole file
    with path.open("a") as handle:
        handle.write('{"message": "needle 5d1e2b9a at the end"}\n')
    lines = len(path.read_bytes().splitlines())
    read = gram.bytes_read
    for pattern in ("needle 5d1e2b9a", "absent 0x5", "^tool=write", 'tool=write"'):
        assert index.first_match(Pattern(pattern)) == Match(reference(path, pattern).line, lines)
    assert gram.bytes_read - read < size  # new lines, and segments re-read for the regex


def test_one_pattern_on_a_big_log_never_builds_the_gram_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _small(monkeypatch)
    monkeypatch.setattr(log_lines, "INDEX_MIN_BYTES", 1)
    path = tmp_path / "openclaw.log"
    _gateway_log(path, 512 * 1024)
    index = LogLines(path)
    for _ in range(3 * log_lines.INDEX_AFTER):
        with path.open("a") as handle:
            handle.write("one more line\n")
        assert index.first_match(Pattern("NEVER-IN-THIS-LOG")).line is None
    assert index.index is None
