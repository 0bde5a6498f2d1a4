"""The shared whole-file search behind un-scoped `log_entry`: the same answers as reading
the file line by line, a pattern asked again reading only what was appended. The behaviour both
searches share (`LogLines`, and the gram index it hands a file to once many patterns have
searched it) is tested on both through `searcher`."""

from __future__ import annotations

import json
import os
import random
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from clawspec.gateway.logs import lines as log_lines
from clawspec.gateway.logs.gram_index import GramIndex
from clawspec.gateway.logs.lines import LogLines, Match, Pattern, lines_of

Searcher = Callable[[Path], LogLines | GramIndex]


@pytest.fixture(params=[LogLines, GramIndex], ids=["lines", "gram_index"])
def searcher(request: pytest.FixtureRequest) -> Searcher:
    """Each whole-file search, as `first_match` callers see it."""
    return request.param


def reference(path: Path, pattern: str) -> Match:
    """The straightforward reading, line by line (the code before the index)."""
    import re

    try:
        regex = re.compile(pattern)
    except re.error:
        regex = None

    def hit(text: str) -> bool:
        return pattern in text or bool(regex and regex.search(text))

    count = 0
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for count, line in enumerate(handle, start=1):
            text = line.rstrip("\n")
            if hit(text):
                return Match(count, -1)
            if text.startswith("{"):
                try:
                    message = json.loads(text).get("message")
                except (ValueError, AttributeError):
                    continue
                if isinstance(message, str) and hit(message):
                    return Match(count, -1)
    return Match(None, count)


def _same(index: LogLines | GramIndex, path: Path, pattern: str) -> None:
    got, want = index.first_match(Pattern(pattern)), reference(path, pattern)
    assert got.line == want.line, (pattern, path.read_bytes()[-300:])
    if want.line is None:
        assert got.lines == want.lines


def _json(message: str, **extra: object) -> str:
    return json.dumps({"time": "t", "message": message, **extra}) + "\n"


def test_finds_raw_text_json_message_and_regex(searcher: Searcher, tmp_path: Path) -> None:
    path = tmp_path / "gw.log"
    path.write_text("plain start\n" + _json("sent") + _json('quote " and \\ slash'))
    index = searcher(path)
    assert index.first_match(Pattern("plain")) == Match(1, 3)
    assert index.first_match(Pattern("^sent$")) == Match(2, 3)  # only the message matches
    assert index.first_match(Pattern('quote " and \\ slash')) == Match(3, 3)  # escaped in raw
    assert index.first_match(Pattern("absent")) == Match(None, 3)
    assert index.first_match(Pattern("(unclosed")) == Match(None, 3)  # invalid regex = text


def test_a_pattern_asked_again_reads_only_what_was_appended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_lines, "BLOCK_BYTES", 500)
    path = tmp_path / "gw.log"
    path.write_text("")
    index = LogLines(path)
    size = 0
    for run in range(50):
        with path.open("a") as handle:
            handle.write(_json(f"run {run} done", runId=f"r{run}") * 3)
        appended, size = path.stat().st_size - size, path.stat().st_size
        read = index.bytes_read
        assert index.first_match(Pattern("never written")) == Match(None, 3 * run + 3)
        # What was appended, plus the 2 x 64 bytes that re-identify the file before and after.
        assert index.bytes_read - read <= appended + 4 * 64
        assert index.first_match(Pattern(f"run {run} done")) == Match(3 * run + 1, 3 * run + 3)
    read = index.bytes_read
    assert index.first_match(Pattern("run 7 done")).line == 22  # remembered, nothing re-read
    assert index.bytes_read - read <= 2 * 64


def test_a_pattern_asked_again_looks_only_at_new_lines_and_keeps_its_first_match(
    searcher: Searcher,
    tmp_path: Path,
) -> None:
    path = tmp_path / "gw.log"
    path.write_text("a\nb\n")
    index = searcher(path)
    assert index.first_match(Pattern("late")).line is None
    with path.open("a") as handle:
        handle.write("late one\nlate two\n")
    assert index.first_match(Pattern("late")) == Match(3, 4)
    with path.open("a") as handle:
        handle.write("late three\n")
    assert index.first_match(Pattern("late")) == Match(3, 5)


@pytest.mark.parametrize("change", ["rotate", "truncate", "rewrite_same_size", "rewrite_longer"])
def test_a_replaced_or_rewritten_file_is_read_again(
    searcher: Searcher, tmp_path: Path, change: str
) -> None:
    path = tmp_path / "gw.log"
    path.write_text("alpha one\nalpha two\n")
    index = searcher(path)
    assert index.first_match(Pattern("alpha")).line == 1
    if change == "rotate":
        path.rename(tmp_path / "gw.1.log")
        path.write_text("beta\nalpha three\n")
    elif change == "truncate":
        path.write_text("beta\n")
    elif change == "rewrite_same_size":
        path.write_text("gamma one\nalpha two\n")  # same inode, same length
    else:
        path.write_text("gamma one\nalpha two\nmore lines here\n")
    _same(index, path, "alpha")
    _same(index, path, "beta")
    _same(index, path, "gamma")


def test_a_line_still_being_written_counts_but_is_not_kept(
    searcher: Searcher, tmp_path: Path
) -> None:
    path = tmp_path / "gw.log"
    path.write_bytes(b"one\ntwo part")
    index = searcher(path)
    assert index.first_match(Pattern("two part")) == Match(2, 2)
    with path.open("ab") as handle:
        handle.write(b"ial\nthree\n")
    assert index.first_match(Pattern("two partial")) == Match(2, 3)
    assert index.first_match(Pattern("^two partial$")) == Match(2, 3)


def test_missing_file_raises_like_open(searcher: Searcher, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        searcher(tmp_path / "nope.log").first_match(Pattern("x"))


def test_one_index_per_path_for_the_whole_process(tmp_path: Path) -> None:
    path = tmp_path / "gw.log"
    path.write_text("x\n")
    assert lines_of(path) is lines_of(tmp_path / "gw.log")
    assert lines_of(path) is not lines_of(tmp_path / "other.log")


def test_a_link_pointing_elsewhere_is_read_as_a_new_file(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text("from a\n")
    (tmp_path / "b.log").write_text("from b\n")
    link = tmp_path / "gw.log"
    link.symlink_to(tmp_path / "a.log")
    index = lines_of(link)
    assert index.first_match(Pattern("from a")).line == 1
    link.unlink()
    link.symlink_to(tmp_path / "b.log")
    assert index.first_match(Pattern("from a")).line is None
    assert index.first_match(Pattern("from b")).line == 1


def test_lines_across_the_blocks_read_are_found_and_numbered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blocks of 60 bytes, lines of 23: most lines start in one read and end in the next;
    each block is cut at its last line break, the rest read again with the next one."""
    monkeypatch.setattr(log_lines, "BLOCK_BYTES", 60)
    path = tmp_path / "gw.log"
    path.write_text("".join(f"line {n:03d} of the log\n" for n in range(40)))
    index = LogLines(path)
    for pattern in ("line 002", "line 039", "^line 0[23]9", "absent", "of the log$"):
        _same(index, path, pattern)
    for number in range(40):
        assert index.first_match(Pattern(f"line {number:03d} ")) == Match(number + 1, 40)
    with path.open("a") as handle:
        handle.write(_json("tail message"))
    _same(index, path, "^tail message$")


def test_concurrent_scenarios_and_a_growing_file_agree_with_the_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_lines, "BLOCK_BYTES", 2000)
    path = tmp_path / "gw.log"
    path.write_text("")
    index = LogLines(path)
    written = threading.Event()
    errors: list[str] = []

    def writer() -> None:
        with path.open("a") as handle:
            for run in range(300):
                handle.write(_json(f"run {run} ok") + f"plain run {run}\n")
                handle.flush()
        written.set()

    def reader(seed: int) -> None:
        rng = random.Random(seed)
        while not written.is_set():
            run = rng.randrange(300)
            found = index.first_match(Pattern(f"^run {run} ok$"))
            if found.line is not None and found.line != 2 * run + 1:
                errors.append(f"run {run}: line {found.line}")

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(4)]
    threads.append(threading.Thread(target=writer))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for run in (0, 150, 299):
        _same(index, path, f"^run {run} ok$")


PIECES = [
    "plain text\n",
    "with crlf\r\n",
    "lone cr\rsplits here\n",
    '{"message": "json msg"}\n',
    '{"message": "esc \\"q\\" \\u00e9"}\n',
    '{"message": 42}\n',
    "[1, 2]\n",
    "{broken json\n",
    "caf\xe9 \u2028 sep\n",
    "\n",
]


@pytest.mark.parametrize("block", [64 * 1024, 256])
def test_randomised_appends_match_the_reference_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    monkeypatch.setattr(log_lines, "BLOCK_BYTES", block)  # 256: lines cut across reads
    rng = random.Random(14)
    path = tmp_path / "gw.log"
    path.write_bytes(b"")
    index = LogLines(path)
    patterns = [
        "json msg",
        "^json",
        'q\\"',
        'esc "q"',
        "é",
        "splits",
        "^$",
        "crlf$",
        "x+y",
        "(",
        "plain text",
        "with crlf",
        'json msg"}',
        "broken utf8",
        "sep\n",
        "ain t",
    ]
    for step in range(200):
        with path.open("ab") as handle:
            chunk = "".join(rng.choice(PIECES) for _ in range(rng.randrange(4)))
            data = chunk.encode()
            if rng.random() < 0.1:
                data += b"\xff\xfe broken utf8\n"
            if rng.random() < 0.2:
                data += b"partial line"
            handle.write(data)
        if step % 50 == 49:
            os.truncate(path, path.stat().st_size // 2)
        _same(index, path, rng.choice(patterns))


def test_a_literal_is_found_wherever_it_starts_in_raw_text_and_json_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_lines, "BLOCK_BYTES", 300)
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "épsilon", "run-", "hook:clawspec:"]
    lines = []
    for number in range(400):
        text = " ".join(rng.choice(words) + str(rng.randrange(1000)) for _ in range(4))
        lines.append(_json(text, n=number) if number % 3 else f"raw {text}\n")
    path = tmp_path / "gw.log"
    path.write_text("".join(lines), encoding="utf-8")
    index = LogLines(path)
    data = path.read_text(encoding="utf-8")
    for _ in range(300):
        start = rng.randrange(len(data) - 20)
        pattern = data[start : start + rng.randrange(7, 20)]
        if "\n" in pattern or "\\" in pattern or '"' in pattern:
            continue
        _same(index, path, pattern)
    for absent in ("alpha1000", "zzzzzzz", "hook:clawspec:9999"):
        _same(index, path, absent)


@pytest.mark.parametrize("message_first", [True, False])
def test_a_literal_found_after_earlier_calls_is_the_first_line_raw_or_message(
    searcher: Searcher, tmp_path: Path, message_first: bool
) -> None:
    """Asked again, a literal is looked up from the line where the last call stopped: the
    first line holding it, raw or in its message, is the answer."""
    path = tmp_path / "gw.log"
    path.write_text("one\n" + _json("two"))
    index = searcher(path)
    pattern = Pattern('needle "q"')  # escaped in a JSON line's raw text: matches its message
    assert index.first_match(pattern) == Match(None, 2)
    later = [_json('a needle "q" here'), 'raw needle "q"\n']
    with path.open("a") as handle:
        handle.write("filler\n" + "".join(later if message_first else later[::-1]))
    assert index.first_match(pattern) == Match(4, 5)
    _same(index, path, 'needle "q"')
    assert index.first_match(Pattern("filler")) == Match(3, 5)
