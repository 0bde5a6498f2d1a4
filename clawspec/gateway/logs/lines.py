"""Whole-file line search for un-scoped `log_entry`, shared by every scenario of the process.

An un-scoped `log_entry` asks "does any line of this file match?" (the raw text or,
for a JSON line, its `message`; substring or regex). On a shared, growing log (the gateway's)
every scenario would re-read and re-parse all the lines earlier scenarios wrote: O(N²) over a
suite. Instead, one `LogLines` per file (`lines_of(path)`) reads the file forward only, from
where it stopped, decodes each line and parses its JSON `message` once, and answers every
scenario's pattern from memory:

- the text is kept in segments of about 128 KiB, and an inverted index maps the 4-byte
  sequences (of the UTF-8 text) that start at a multiple of 4 to the segments holding them: a
  literal pattern (the common case: a run id, a phrase) found in a segment has, for one of its
  four possible alignments, all the grams that alignment puts on such positions there, so it
  looks only inside segments that pass that test, at C speed, and its cost does not grow with
  the log; a regex, or a pattern under 7 bytes, visits every line. (Only aligned grams: a
  quarter of the indexing work of every gram, which the index used to cost per line.)
- each pattern remembers how far it has looked and where it first matched: asked again, it
  looks only at lines added since (the file only grows; the first match never moves);
- the file is re-identified on every call (device, inode, size, and the bytes at both ends of
  what was read): a rotated, truncated or rewritten file is read again from its start.

Lines are read exactly as a text-mode file gives them (UTF-8 with replacement, universal
newlines); a last line without its newline counts but is not kept (the writer may be mid-line).
Past `MAX_INDEXED_BYTES` the rest of a file is streamed per call instead of kept in memory.
"""

from __future__ import annotations

import json
import os
import re
import threading
from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from pathlib import Path

# Memory bound: a log larger than this is indexed up to here and streamed beyond.
MAX_INDEXED_BYTES = 256 * 1024 * 1024
# Bytes compared at each end of what was read, to notice a file rewritten in place.
_FINGERPRINT = 64
_MEMO_LIMIT = 4096
# Segment size and gram length of the inverted index (see the module doc).
SEGMENT_CHARS = 128 * 1024
GRAM = 4  # bytes: a gram is read as one native 4-byte integer
_REGEX_CHARS = re.compile(r"[.^$*+?{}\[\]\\|()]")


class Pattern:
    """A `log_entry` pattern: a substring, and a regex unless it does not compile."""

    def __init__(self, text: str) -> None:
        self.text = text
        try:
            regex: re.Pattern[str] | None = re.compile(text)
        except re.error:
            regex = None
        # Without metacharacters a regex matches exactly where the substring is: skip it.
        self.regex = regex if regex is not None and _REGEX_CHARS.search(text) else None

    def hit(self, text: str) -> bool:
        return self.text in text or bool(self.regex and self.regex.search(text))


@dataclass(frozen=True)
class Match:
    line: int | None  # 1-based number of the first matching line, None: no line matches
    lines: int  # lines in the file when asked


@dataclass
class _Segment:
    """Consecutive lines: their text joined by '\\n', and where each line and message is."""

    first: int  # 0-based number of the segment's first line
    text: str = ""
    starts: array = field(default_factory=lambda: array("q", [0]))  # + one past the end
    messages: dict[int, str] = field(default_factory=dict)  # line index -> JSON `message`
    message_text: str = ""  # the messages joined, for a literal search at C speed
    message_starts: array = field(default_factory=lambda: array("q"))  # each in message_text
    message_lines: array = field(default_factory=lambda: array("q"))  # the line of each

    @property
    def count(self) -> int:
        return len(self.starts) - 1

    def add(self, lines: list[str]) -> None:
        base = self.count
        for index, text in enumerate(lines):
            self.starts.append(self.starts[-1] + len(text) + 1)
            message = json_message(text)
            if message is not None:
                self.messages[base + index] = message
                self.message_starts.append(len(self.message_text))
                self.message_lines.append(base + index)
                self.message_text += message + "\n"
        self.text += "".join(line + "\n" for line in lines)

    def line(self, index: int) -> str:
        return self.text[self.starts[index] : self.starts[index + 1] - 1]

    def first_hit(self, pattern: Pattern, start: int) -> int | None:
        """Index of the first line at or after `start` that matches, else None."""
        if start >= self.count:
            return None
        if pattern.regex is None and "\n" not in pattern.text:
            return self._first_literal(pattern.text, start)
        if pattern.regex is None and (
            pattern.text not in self.text and pattern.text not in self.message_text
        ):
            return None
        for index in range(start, self.count):
            message = self.messages.get(index)
            if pattern.hit(self.line(index)) or (message is not None and pattern.hit(message)):
                return index
        return None

    def _first_literal(self, text: str, start: int) -> int | None:
        """`first_hit` for a literal without a line break, at C speed: found in the joined
        text (or messages), a match cannot span two lines, so its position names its line."""
        found = None
        at = self.text.find(text, self.starts[start])
        if at >= 0:
            found = bisect_right(self.starts, at) - 1
        first_message = bisect_left(self.message_lines, start)
        if first_message < len(self.message_lines):
            at = self.message_text.find(text, self.message_starts[first_message])
            if at >= 0:
                line = self.message_lines[bisect_right(self.message_starts, at) - 1]
                found = line if found is None else min(found, line)
        return found


def split_lines(data: bytes) -> list[str]:
    """Lines as a text-mode file yields them (UTF-8 with replacement, universal newlines)."""
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    if not text:
        return []
    lines = text.split("\n")
    return lines[:-1] if text.endswith("\n") else lines


def json_message(line: str) -> str | None:
    """The `message` of a JSON-object line, else None."""
    if not line.startswith("{"):
        return None
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None
    message = data.get("message") if isinstance(data, dict) else None
    return message if isinstance(message, str) else None


class LogLines:
    """The lines of one file read so far; thread-safe; read forward only (see module doc)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.bytes_read = 0  # every byte this index has read from disk (benchmarks)
        self._reset(None)

    def _reset(self, identity: tuple[int, int] | None) -> None:
        self._identity = identity
        self._offset = 0  # bytes of complete lines indexed
        self._lines = 0
        self._sealed: list[_Segment] = []
        self._open = _Segment(0)
        self._grams: dict[int, int] = {}  # 4-gram -> bit mask of the sealed segments holding it
        self._head = b""
        self._tail = b""
        self._memo: dict[str, tuple[int, int | None]] = {}

    def first_match(self, pattern: Pattern) -> Match:
        """The first line matching `pattern` (raises FileNotFoundError like open())."""
        with self._lock:
            remainder = self._sync()
            scanned, found = self._memo.get(pattern.text, (0, None))
            if found is None:
                found = self._search(pattern, scanned)
                if len(self._memo) >= _MEMO_LIMIT:
                    self._memo.clear()
                self._memo[pattern.text] = (self._lines, found)
            if found is not None:
                return Match(found + 1, self._lines + len(remainder))
            for number, text in enumerate(remainder, start=self._lines):
                if pattern.hit(text) or ((m := json_message(text)) is not None and pattern.hit(m)):
                    return Match(number + 1, self._lines + len(remainder))
            return Match(None, self._lines + len(remainder))

    def _search(self, pattern: Pattern, scanned: int) -> int | None:
        for segment in self._candidates(pattern):
            if segment.first + segment.count <= scanned:
                continue
            index = segment.first_hit(pattern, max(0, scanned - segment.first))
            if index is not None:
                return segment.first + index
        return None

    def _candidates(self, pattern: Pattern) -> list[_Segment]:
        """The segments that may hold a match, in order (a literal needs all its 4-grams)."""
        data = pattern.text.encode()
        if pattern.regex is not None or len(data) < 2 * GRAM - 1:
            return [*self._sealed, self._open]
        mask = 0
        for grams in _grams_by_alignment(data):  # each alignment has at least one gram
            found = -1
            for gram in grams:
                found &= self._grams.get(gram, 0)
                if not found:
                    break
            mask |= found
        chosen = [self._sealed[bit] for bit in _bits(mask)]
        return [*chosen, self._open]

    def _sync(self) -> list[str]:
        """Index the lines added since the last call; return the lines not kept (a last line
        still being written, and whatever lies beyond the memory bound)."""
        with self.path.open("rb") as handle:
            stat = os.fstat(handle.fileno())
            if not self._same_file(handle, stat):
                self._reset((stat.st_dev, stat.st_ino))
            handle.seek(self._offset)
            budget = MAX_INDEXED_BYTES - self._offset
            data = handle.read(max(0, min(stat.st_size - self._offset, budget)))
            rest = handle.read() if len(data) == budget else b""
        self.bytes_read += len(data) + len(rest)
        cut = data.rfind(b"\n") + 1
        if cut:
            self._append(data[:cut])
        return split_lines(data[cut:] + rest)

    def _same_file(self, handle, stat: os.stat_result) -> bool:
        if self._identity != (stat.st_dev, stat.st_ino) or stat.st_size < self._offset:
            return False
        if not self._offset:
            return True
        handle.seek(0)
        head = handle.read(len(self._head))
        handle.seek(self._offset - len(self._tail))
        self.bytes_read += len(self._head) + len(self._tail)
        return head == self._head and handle.read(len(self._tail)) == self._tail

    def _append(self, data: bytes) -> None:
        lines = split_lines(data)
        self._open.add(lines)
        if len(self._open.text) >= SEGMENT_CHARS:
            self._seal()
        if not self._offset:
            self._head = data[:_FINGERPRINT]
        self._offset += len(data)
        self._lines += len(lines)
        self._tail = (self._tail + data[-_FINGERPRINT:])[-_FINGERPRINT:]

    def _seal(self) -> None:
        """Close the open segment and index its 4-grams (once per segment: flat per line)."""
        segment, bit = self._open, 1 << len(self._sealed)
        grams = self._grams
        for gram in _grams(segment.text.encode(), segment.message_text.encode()):
            grams[gram] = grams.get(gram, 0) | bit
        self._sealed.append(segment)
        self._open = _Segment(segment.first + segment.count)


def _grams(*texts: bytes) -> set[int]:
    """The 4-byte windows of `texts` that start at a multiple of 4, as integers."""
    out: set[int] = set()
    for data in texts:
        out.update(_aligned(data, 0))
    return out


def _grams_by_alignment(pattern: bytes) -> list[set[int]]:
    """For each place the pattern may start at modulo 4, its grams that then start at a
    multiple of 4 in the text (the first at `shift` = (4 - start) % 4 into the pattern)."""
    return [set(_aligned(pattern, shift)) for shift in range(GRAM)]


def _aligned(data: bytes, shift: int) -> memoryview:
    usable = max(0, (len(data) - shift) // GRAM * GRAM)
    return memoryview(data)[shift : shift + usable].cast("I")


def _bits(mask: int) -> list[int]:
    """Positions of the set bits of `mask`, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


_FILES: dict[str, LogLines] = {}
_FILES_LOCK = threading.Lock()


def lines_of(path: Path) -> LogLines:
    """The process-wide index of `path` (one per path, shared by all scenarios; the path is
    opened on every call, so a link that now points elsewhere is noticed like a rotation)."""
    key = os.fspath(path)
    index = _FILES.get(key)
    if index is None:
        with _FILES_LOCK:
            index = _FILES.setdefault(key, LogLines(Path(key)))
    return index
