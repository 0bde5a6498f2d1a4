"""The gram index `LogLines` hands a file to once many patterns have searched it: the same
answers as reading the file line by line, each byte read and each JSON line parsed once (what
it shares with `LogLines` is tested on both in tests/gateway/test_log_lines.py)."""

from __future__ import annotations

import os
import random
import threading
from pathlib import Path

import pytest

from clawspec.gateway.logs import gram_index as log_lines
from clawspec.gateway.logs.gram_index import GramIndex as LogLines
from clawspec.gateway.logs.lines import Match, Pattern
from tests.gateway.test_log_lines import _json, _same


def test_reads_each_byte_once_as_the_file_grows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_lines, "SEGMENT_BYTES", 500)
    path = tmp_path / "gw.log"
    path.write_text("")
    index = LogLines(path)
    size = 0
    for run in range(50):
        with path.open("a") as handle:
            handle.write(_json(f"run {run} done", runId=f"r{run}") * 3)
        size = path.stat().st_size
        assert index.first_match(Pattern(f"run {run} done")) == Match(3 * run + 1, 3 * run + 3)
    # Only what was appended, plus the 2 x 64 bytes that re-identify the file on each call.
    assert index.bytes_read <= size + 50 * 128
    assert index.first_match(Pattern("run 7 done")).line == 22  # remembered, nothing re-read


def test_segments_evicted_from_memory_are_read_back_from_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_lines, "SEGMENT_BYTES", 60)
    monkeypatch.setattr(log_lines, "CACHE_BYTES", 100)
    monkeypatch.setattr(log_lines, "GRAM_SEGMENTS", 3)
    path = tmp_path / "gw.log"
    path.write_text("".join(f"line {n:03d} of the log\n" for n in range(40)))
    index = LogLines(path)
    for pattern in ("line 002", "line 039", "^line 0[23]9", "absent"):
        _same(index, path, pattern)
    with path.open("a") as handle:
        handle.write(_json("tail message"))
    _same(index, path, "^tail message$")
    assert index.retained <= 100 + 60 + 30
    assert index.bytes_read > path.stat().st_size  # segments were read back


def test_concurrent_scenarios_and_a_growing_file_agree_with_the_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_lines, "SEGMENT_BYTES", 2000)
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


@pytest.mark.parametrize("segment", [64 * 1024, 150, 1])
def test_randomised_appends_match_the_reference_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, segment: int
) -> None:
    monkeypatch.setattr(log_lines, "SEGMENT_BYTES", segment)  # 1: a sealed segment per append
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


def test_a_literal_at_any_alignment_is_found_in_sealed_segments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only grams starting at a multiple of 4 are indexed: a literal is found wherever it
    starts (each of the four alignments), in raw text and in JSON messages."""
    monkeypatch.setattr(log_lines, "SEGMENT_BYTES", 300)
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
