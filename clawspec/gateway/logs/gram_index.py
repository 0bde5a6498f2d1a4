"""A whole-file index of a log's lines, for many different `log_entry` patterns on one file.

`lines.LogLines` searches a file's raw bytes for each new pattern: fast for one pattern, but a
suite whose scenarios each ask their own pattern of the shared, growing gateway log would read
it all again for each of them (O(N²) over the suite). Once a file's bytes have been searched
several times over, `LogLines` hands it to this index, which reads the file forward only, from
where it stopped, in blocks of BLOCK_BYTES, and cuts what it read into segments of about
SEGMENT_BYTES of whole lines. Work and memory are linear in the bytes read and bounded, whatever
the file's size:

- each line is decoded and its JSON `message` parsed once while the file is indexed; of the
  messages only those the raw line does not hold verbatim (escaped quotes, line breaks…) are
  kept with the segment's text: a literal found in any other message is found in the raw text;
- an inverted index maps the 4-byte sequences (of the UTF-8 text and those messages) that start
  at a multiple of 4 to the segments holding them: a literal pattern (a run id, a phrase: the
  common case) found in a segment has, for one of its four possible alignments, all the grams
  that alignment puts on such positions there, so only segments that pass that test are
  searched, at C speed; a regex, or a pattern under 7 bytes, visits every segment. The index
  covers the first GRAM_SEGMENTS segments while it holds fewer than GRAM_LIMIT grams; later
  segments are searched for every new pattern (linear, never unbounded memory);
- the decoded text of at most CACHE_BYTES of segments is kept (the most recently used); a
  segment not kept is read again from the file when a pattern needs it;
- each pattern remembers how far it has looked and where it first matched: asked again, it
  looks only at lines added since (the file only grows; the first match never moves);
- the file is re-identified on every call (device, inode, size, and the bytes at both ends of
  what was read): a rotated, truncated or rewritten file is read again from its start;
- a `stop` event (the scenario abandoned) is checked between blocks and segments: `Interrupted`
  ends the call promptly, and what was indexed so far is kept for the next call.

Lines are read exactly as a text-mode file gives them (UTF-8 with replacement, universal
newlines); a last line without its newline counts but is not kept (the writer may be mid-line).
A line longer than BLOCK_BYTES is counted but not searched.
"""

from __future__ import annotations

import os
import re
import threading
from array import array
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from clawspec.gateway.logs.line_text import Interrupted, Match, json_message, split_lines


class IndexedPattern(Protocol):
    """What the index needs of a pattern (`lines.Pattern`)."""

    text: str
    data: bytes  # the text as UTF-8
    literal: bool  # no regex, no line break: found in a segment's joined text, it names its line
    regex: re.Pattern[str] | None

    def hit(self, text: str) -> bool: ...

    def may_hold(self, block: bytes) -> bool: ...


# Bytes read per system call, and the longest line searched.
BLOCK_BYTES = 4 * 1024 * 1024
# Bytes of whole lines per segment (a segment is the unit of the gram index and of the cache).
SEGMENT_BYTES = 256 * 1024
# Decoded text of segments kept in memory, most recently used first.
CACHE_BYTES = 32 * 1024 * 1024
# The gram index's bounds: segments it covers (the width of its bit masks) and grams it holds.
GRAM_SEGMENTS = 2048
GRAM_LIMIT = 1 << 17
# Bytes compared at each end of what was read, to notice a file rewritten in place.
_FINGERPRINT = 64
_MEMO_LIMIT = 4096
GRAM = 4  # bytes: a gram is read as one native 4-byte integer
STRIDE = 4  # grams start at multiples of this


@dataclass(slots=True)
class _Segment:
    """Where consecutive whole lines are in the file (their text may be re-read from there)."""

    offset: int  # byte offset of the first line
    size: int  # bytes
    first: int  # 0-based number of the first line
    count: int  # lines
    message_lines: array  # the lines whose JSON message is kept (not verbatim in the line)
    skipped: bool = False  # one line longer than BLOCK_BYTES: counted, not searched


class _Text:
    """A segment's lines as UTF-8 (decoded as a text-mode file would, each ending with
    '\n'), and the JSON messages its lines do not hold verbatim, joined the same way, with
    where each starts and its line. Bytes, not str: half the memory of a str holding one
    character beyond Latin-1, and a str is in a bytes exactly where its UTF-8 is."""

    __slots__ = ("message_lines", "message_starts", "messages", "size", "text")

    def __init__(self, text: bytes, messages: list[str], lines: array) -> None:
        self.text = text
        self.message_lines = lines
        self.message_starts = array("q")
        encoded = [_utf8(message) + b"\n" for message in messages]
        at = 0
        for message in encoded:
            self.message_starts.append(at)
            at += len(message)
        self.messages = b"".join(encoded)
        self.size = len(text) + len(self.messages)

    def first_literal(self, needle: bytes) -> int | None:
        """Index of the first line holding `needle` (no line break), raw or in its message."""
        found = None
        at = self.text.find(needle)
        if at >= 0:
            found = self.text.count(b"\n", 0, at)
        if self.messages:
            at = self.messages.find(needle)
            if at >= 0:
                line = self.message_lines[bisect_right(self.message_starts, at) - 1]
                found = line if found is None else min(found, line)
        return found

    def first_hit(self, pattern: IndexedPattern) -> int | None:
        """Index of the first line the pattern matches, raw or in its message, line by line
        (a regex, or a literal with a line break, which only a message can hold)."""
        if pattern.regex is not None:
            # The bytes decide first: a segment holding none of the regex's needles (nor an
            # escape that may hide one in a JSON line) is not decoded at all.
            if not pattern.may_hold(self.text):
                return None
        elif pattern.data not in self.text and pattern.data not in self.messages:
            return None  # no line has it, nor any message (kept here, or verbatim in its line)
        for index, line in enumerate(self.text.decode().split("\n")[:-1]):
            if pattern.hit(line):
                return index
            message = json_message(line)
            if message is not None and pattern.hit(message):
                return index
        return None


class _Builder:
    """The segment being filled: its lines and kept messages, each line parsed once."""

    def __init__(self, offset: int, first: int) -> None:
        self.offset = offset
        self.first = first
        self.size = 0
        self.count = 0
        self._chunks: list[bytes] = []
        self._messages: list[str] = []
        self._lines = array("q")
        self._text: _Text | None = None

    def add(self, data: bytes) -> None:
        """Add whole lines (`data` ends with a line break)."""
        stored, lines = _decoded(data)
        for index, line in enumerate(lines, start=self.count):
            if line.startswith("{"):
                message = json_message(line)
                if message is not None and message not in line:
                    self._messages.append(message)
                    self._lines.append(index)
        self._chunks.append(stored)
        self.count += len(lines)
        self.size += len(data)
        self._text = None

    def text(self) -> _Text:
        """The lines so far (joined once per change: a segment is small)."""
        if self._text is None:
            self._chunks = [b"".join(self._chunks)]
            self._text = _Text(self._chunks[0], self._messages, self._lines)
        return self._text

    def segment(self) -> _Segment:
        return _Segment(self.offset, self.size, self.first, self.count, self._lines)


def _decoded(data: bytes) -> tuple[bytes, list[str]]:
    """Whole lines (`data` ends with a line break) as a text-mode file gives them, and as
    UTF-8 (`data` itself unless it held a carriage return or bytes that are not UTF-8)."""
    text = data.decode("utf-8", errors="replace")
    clean = "\r" not in text and "\ufffd" not in text
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return (data if clean else text.encode()), text.split("\n")[:-1]


def _reread(data: bytes, segment: _Segment) -> _Text:
    """A sealed segment's `_Text` from its bytes in the file: only the lines whose message
    is kept are parsed again."""
    stored, lines = _decoded(data)
    messages = [json_message(lines[index]) or "" for index in segment.message_lines]
    return _Text(stored, messages, segment.message_lines)


def _utf8(text: str) -> bytes:
    """UTF-8, lone surrogates (a JSON message may hold one) included."""
    return text.encode("utf-8", errors="surrogatepass")


class GramIndex:
    """The lines of one file read so far; thread-safe; read forward only (see module doc)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        # Work counters (tests and benchmarks): bytes read from disk (segments read back
        # included), and bytes decoded and parsed to index them (each byte once).
        self.bytes_read = 0
        self.bytes_indexed = 0
        self._reset(None)

    def _reset(self, identity: tuple[int, int] | None) -> None:
        self._identity = identity
        self._offset = 0  # bytes of complete lines indexed
        self._lines = 0
        self._sealed: list[_Segment] = []
        self._open = _Builder(0, 0)
        self._grams: dict[int, int] = {}  # 4-gram -> bit mask of the indexed segments with it
        self._indexed = 0  # segments covered by the gram index: the first ones
        self._cache: OrderedDict[int, _Text] = OrderedDict()  # segment number -> its text
        self._cached = 0  # size of the cached texts
        self._head = b""
        self._tail = b""
        self._memo: dict[str, tuple[int, int | None]] = {}

    @property
    def retained(self) -> int:
        """Characters of log text held in memory (the cache and the segment being filled)."""
        return self._cached + self._open.text().size

    @property
    def segments(self) -> list[_Segment]:
        return list(self._sealed)

    def first_match(self, pattern: IndexedPattern, stop: threading.Event | None = None) -> Match:
        """The first line matching `pattern` (raises FileNotFoundError like open(), and
        `Interrupted` once `stop` is set)."""
        with self._lock, self.path.open("rb") as handle:
            remainder = self._sync(handle, stop)
            scanned, found = self._memo.get(pattern.text, (0, None))
            if found is None:
                found = self._search(handle, pattern, scanned, stop)
                if len(self._memo) >= _MEMO_LIMIT:
                    self._memo.clear()
                self._memo[pattern.text] = (self._lines, found)
            total = self._lines + len(remainder)
            if found is not None:
                return Match(found + 1, total)
            for number, text in enumerate(remainder, start=self._lines):
                if pattern.hit(text) or ((m := json_message(text)) is not None and pattern.hit(m)):
                    return Match(number + 1, total)
            return Match(None, total, sum(1 for s in self._sealed if s.skipped))

    # -- searching -----------------------------------------------------------------------

    def _search(
        self, handle: BinaryIO, pattern: IndexedPattern, scanned: int, stop: threading.Event | None
    ) -> int | None:
        """The first line at or after `scanned` that matches (no line before it does)."""
        for number in self._candidates(pattern):
            if stop is not None and stop.is_set():
                raise Interrupted(self.path, self._offset, self._offset)
            if number < len(self._sealed):
                segment = self._sealed[number]
                if segment.first + segment.count <= scanned or segment.skipped:
                    continue
                text, first = self._text(handle, number), segment.first
            elif self._open.first + self._open.count > scanned:
                text, first = self._open.text(), self._open.first
            else:
                continue
            hit = text.first_literal(pattern.data) if pattern.literal else text.first_hit(pattern)
            if hit is not None:
                return first + hit
        return None

    def _candidates(self, pattern: IndexedPattern) -> list[int]:
        """The segments that may hold a match, in order (a literal needs all its 4-grams in
        the indexed ones); the segment being filled is the last, numbered len(sealed)."""
        sealed = len(self._sealed)
        data = pattern.data
        if not pattern.literal or len(data) < GRAM + STRIDE - 1:
            return list(range(sealed + 1))
        mask = 0
        for grams in _grams_by_alignment(data):  # each alignment has at least one gram
            found = -1
            for gram in grams:
                found &= self._grams.get(gram, 0)
                if not found:
                    break
            mask |= found
        return [*_bits(mask), *range(self._indexed, sealed + 1)]

    def _text(self, handle: BinaryIO, number: int) -> _Text:
        """A sealed segment's text: from the cache, else read again from the file."""
        text = self._cache.get(number)
        if text is not None:
            self._cache.move_to_end(number)
            return text
        segment = self._sealed[number]
        handle.seek(segment.offset)
        data = handle.read(segment.size)
        self.bytes_read += len(data)
        text = _reread(data, segment)
        self._keep(number, text)
        return text

    def _keep(self, number: int, text: _Text) -> None:
        self._cache[number] = text
        self._cached += text.size
        while self._cached > CACHE_BYTES and len(self._cache) > 1:
            _, old = self._cache.popitem(last=False)
            self._cached -= old.size

    # -- reading -------------------------------------------------------------------------

    def _sync(self, handle: BinaryIO, stop: threading.Event | None) -> list[str]:
        """Index the whole lines added since the last call, a block at a time; return the
        lines not kept (a last line still being written)."""
        stat = os.fstat(handle.fileno())
        if not self._same_file(handle, stat):
            self._reset((stat.st_dev, stat.st_ino))
        end = stat.st_size
        while self._offset < end:
            if stop is not None and stop.is_set():
                raise Interrupted(self.path, self._offset, end)
            handle.seek(self._offset)
            data = handle.read(min(BLOCK_BYTES, end - self._offset))
            self.bytes_read += len(data)
            cut = data.rfind(b"\n") + 1
            if cut:
                self._append(data[:cut])
            elif len(data) < BLOCK_BYTES or not self._skip_long_line(handle, end):
                return split_lines(data)  # the last line, still being written
        return []

    def _skip_long_line(self, handle: BinaryIO, end: int) -> bool:
        """Count a line longer than a block, unsearched, as a segment of its own; False when
        it has no line break yet (the last line, still being written)."""
        at = self._offset + BLOCK_BYTES
        while at < end:
            handle.seek(at)
            block = handle.read(min(BLOCK_BYTES, end - at))
            self.bytes_read += len(block)
            newline = block.find(b"\n")
            if newline >= 0:
                line_end = at + newline + 1
                handle.seek(self._offset)
                first = handle.read(_FINGERPRINT)
                handle.seek(line_end - _FINGERPRINT)
                last = handle.read(_FINGERPRINT)
                self._seal()
                size = line_end - self._offset
                skipped = _Segment(self._offset, size, self._lines, 1, array("q"), skipped=True)
                self._sealed.append(skipped)
                self._advance(first, last, size, 1)
                return True
            at += len(block)
        return False

    def _append(self, data: bytes) -> None:
        """Add whole lines to the open segment, sealing it each time it is full."""
        at, end = 0, len(data)
        while at < end:
            cut = end
            room = SEGMENT_BYTES - self._open.size  # > 0: a full segment is sealed at once
            if end - at > room:
                cut = data.rfind(b"\n", at, at + room) + 1
                if cut <= at:  # a line longer than the room left ends the segment
                    cut = data.find(b"\n", at + room) + 1
            piece = data[at:cut]
            before = self._open.count
            self._open.add(piece)
            self.bytes_indexed += len(piece)
            self._advance(piece, piece, len(piece), self._open.count - before)
            at = cut
            if self._open.size >= SEGMENT_BYTES:
                self._seal()

    def _advance(self, first: bytes, last: bytes, size: int, lines: int) -> None:
        """Account for `size` bytes of `lines` whole lines indexed (`first` / `last`: bytes at
        their start and end, which re-identify the file)."""
        if not self._offset:
            self._head = first[:_FINGERPRINT]
        self._offset += size
        self._lines += lines
        self._tail = (self._tail + last[-_FINGERPRINT:])[-_FINGERPRINT:]
        if self._open.size == 0:
            self._open = _Builder(self._offset, self._lines)

    def _seal(self) -> None:
        """Close the open segment: index its 4-grams (while the index has room) and keep its
        text in the cache."""
        builder = self._open
        if not builder.count:
            return
        number = len(self._sealed)
        text = builder.text()
        self._sealed.append(builder.segment())
        if self._indexed == number and number < GRAM_SEGMENTS and len(self._grams) < GRAM_LIMIT:
            bit, grams = 1 << number, self._grams
            for gram in _grams(text.text, text.messages):
                grams[gram] = grams.get(gram, 0) | bit
            self._indexed += 1
        self._keep(number, text)
        self._open = _Builder(self._offset, self._lines)

    def _same_file(self, handle: BinaryIO, stat: os.stat_result) -> bool:
        if self._identity != (stat.st_dev, stat.st_ino) or stat.st_size < self._offset:
            return False
        if not self._offset:
            return True
        handle.seek(0)
        head = handle.read(len(self._head))
        handle.seek(self._offset - len(self._tail))
        self.bytes_read += len(self._head) + len(self._tail)
        return head == self._head and handle.read(len(self._tail)) == self._tail


def _grams(*texts: bytes) -> set[int]:
    """The 4-byte windows of `texts` that start at a multiple of STRIDE, as integers."""
    out: set[int] = set()
    for data in texts:
        out.update(_aligned(data, 0))
    return out


def _grams_by_alignment(pattern: bytes) -> list[set[int]]:
    """For each place the pattern may start at modulo STRIDE, its grams that then start at a
    multiple of STRIDE in the text (the first at `shift` = (STRIDE - start) % STRIDE into it)."""
    return [set(_aligned(pattern, shift)) for shift in range(STRIDE)]


def _aligned(data: bytes, shift: int) -> memoryview:
    usable = max(0, (len(data) - shift) // GRAM * GRAM)
    return memoryview(data)[shift : shift + usable].cast("I")[:: STRIDE // GRAM]


def _bits(mask: int) -> list[int]:
    """Positions of the set bits of `mask`, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
