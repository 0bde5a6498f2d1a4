"""Whole-file line search for un-scoped `log_entry`, shared by every scenario of the process.

An un-scoped `log_entry` asks "does any line of this file match?" (the raw text or, for a JSON
line, its `message`; substring or regex). Decoding every line and parsing every JSON line runs
at about 25 MB/s of CPU, where the bytes alone are searched at hundreds of MB/s. So the file is
read in blocks of BLOCK_BYTES of whole lines (memory bounded whatever the file's size), and the
raw bytes decide for most lines:

- each pattern gets needles (`Needle`): texts every matching line must hold, as UTF-8 in its raw
  bytes; a block is searched for them at C speed, and only the lines holding one are decoded and
  matched exactly (raw text, then the JSON `message`);
- a JSON string may write any character as `\\uXXXX` and `/` as `\\/`: a needle holds neither
  `"`, `\\`, nor control characters (which JSON always escapes), so a line can only hide a match
  in its message behind one of those two escapes, and a line holding one is decoded too;
- a needle for the substring is its longest run of such characters; one for a regex, the longest
  run of them it always matches in sequence (`_regex_needle`: outside groups, classes and
  optional parts, no top-level `|`, not in verbose mode); under `(?i)` only ASCII characters no
  non-ASCII one matches ignoring case (not i, k, s), searched in the lowered block. A pattern
  without needles (`^$`, `\\d+`, a lone `"`) has every line decoded, a block at a time;
- matching is per line as a text-mode file gives them (UTF-8 with replacement, universal
  newlines): blocks end at a line break, so a needle never spans two blocks and `^`/`$` stay
  per line; a last line without its newline counts and is searched but not remembered (the writer
  may be mid-line); a line longer than BLOCK_BYTES is counted but not searched.

One `LogLines` per file (`lines_of(path)`) remembers, per pattern, how far it has looked and
where it first matched: asked again, it reads only the lines added since (the file only grows;
the first match never moves). A new pattern reads the file from its start, until new patterns
have read it INDEX_AFTER times over: then the file goes to the gram index (`gram_index.py`),
which decodes each line once for all later patterns (a suite's scenarios asking their own
pattern of the shared gateway log would otherwise cost O(N²) passes). The file is
re-identified on every call (device, inode, size, and the bytes at both ends of what was
counted): a rotated, truncated or rewritten file is read again from its start. A `stop` event
(the scenario abandoned) is checked between blocks: `Interrupted` ends the call promptly, and how
far each pattern got is kept for the next call.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from clawspec.gateway.logs.gram_index import GramIndex
from clawspec.gateway.logs.line_text import Interrupted, Match, json_message, split_lines

__all__ = ["Interrupted", "LogLines", "Match", "Pattern", "json_message", "lines_of"]

# Bytes read per system call (whole lines are searched a block at a time), and the longest
# line searched.
BLOCK_BYTES = 4 * 1024 * 1024
# Bytes compared at each end of what was counted, to notice a file rewritten in place.
_FINGERPRINT = 64
_MEMO_LIMIT = 4096
# A file whose bytes new patterns have searched INDEX_AFTER times over (once it holds at least
# INDEX_MIN_BYTES) is handed to the gram index (`gram_index.py`): building it costs about as
# much as 16 byte searches, then each new pattern reads only the parts that can hold it.
INDEX_AFTER = 16
INDEX_MIN_BYTES = 1024 * 1024
_REGEX_CHARS = re.compile(r"[.^$*+?{}\[\]\\|()]")
# Escapes in a JSON string that may stand for a needle's characters (any character as \uXXXX,
# `/` as `\/`); the others (\" \\ \b \f \n \r \t) stand for characters no needle holds.
_UNICODE_ESCAPE = b"\\u"
_SLASH_ESCAPE = b"\\/"
# ASCII letters a non-ASCII character matches under re.IGNORECASE (U+0130, U+0131, U+017F,
# U+212A): an ignore-case needle cannot hold them.
_FOLDS_BEYOND_ASCII = frozenset("iksIKS")
# Inline flags at a regex's start, e.g. `(?i)` or `(?im)`.
_GLOBAL_FLAGS = re.compile(r"\(\?([aiLmsux]+)\)")
# `{m}`, `{m,}`, `{,n}`, `{m,n}`: a repeat (any other `{` is a literal character).
_REPEAT = re.compile(r"\{(\d*)(?:,\d*)?\}")


@dataclass(frozen=True)
class Needle:
    """Bytes every line a pattern matches holds in its raw text (unless a JSON escape hides
    them); `folded`: lower-case ASCII, to look for in the lowered bytes."""

    data: bytes
    folded: bool = False


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
        self.needles = _needles(text, self.regex is not None)
        # For the gram index: the text as UTF-8 (lone surrogates included), and whether it is
        # a literal without a line break (found in joined lines, its position names its line).
        self.data = text.encode("utf-8", errors="surrogatepass")
        self.literal = self.regex is None and "\n" not in text
        # A hidden needle character written `\/` is possible only if a needle holds a `/`.
        slash = self.needles is not None and any(b"/" in n.data for n in self.needles)
        self.escapes = (_UNICODE_ESCAPE, _SLASH_ESCAPE) if slash else (_UNICODE_ESCAPE,)

    def hit(self, text: str) -> bool:
        return self.text in text or bool(self.regex and self.regex.search(text))

    def line_hit(self, text: str) -> bool:
        """The line's raw text, or its JSON `message`, matches."""
        if self.hit(text):
            return True
        message = json_message(text)
        return message is not None and self.hit(message)

    def first_in(self, block: bytearray, size: int) -> tuple[int | None, int]:
        """Index of the first line of `block[:size]` (whole lines) that matches, else None;
        and the bytes decoded to tell."""
        if self.needles is None:
            for index, line in enumerate(split_lines(block[:size])):
                if self.line_hit(line):
                    return index, size
            return None, size
        return self._first_candidate(block, size)

    def may_hold(self, block: bytes | bytearray) -> bool:
        """Whether any line of `block` may match: it holds a needle, or an escape that may
        hide one in a JSON line (without needles, any block may)."""
        if self.needles is None:
            return True
        lowered = block.lower() if any(n.folded for n in self.needles) else block
        return any(n.data in (lowered if n.folded else block) for n in self.needles) or any(
            escape in block for escape in self.escapes
        )

    def _first_candidate(self, block: bytearray, size: int) -> tuple[int | None, int]:
        """Decode, in order, only the lines holding a needle or an escape that may hide one."""
        needles = self.needles or ()
        lowered = block.lower() if any(n.folded for n in needles) else block
        searches = [(lowered if n.folded else block, n.data) for n in needles]
        searches += [(block, escape) for escape in self.escapes]
        # The next position of each search at or after `at` (-1: none left): each search runs
        # forward once over the block, however often another one hits.
        upcoming = [haystack.find(data, 0, size) for haystack, data in searches]
        counted = lines = decoded = 0
        while True:
            found = [position for position in upcoming if position >= 0]
            if not found:
                return None, decoded
            start = block.rfind(b"\n", 0, min(found)) + 1
            end = block.find(b"\n", start, size) + 1  # the block ends with a line break
            lines += _count_lines(block, counted, start)
            counted = start
            decoded += end - start
            for offset, line in enumerate(split_lines(block[start:end])):
                if self.line_hit(line):
                    return lines + offset, decoded
            for number, (haystack, data) in enumerate(searches):
                if 0 <= upcoming[number] < end:
                    upcoming[number] = haystack.find(data, end, size)


def _needles(text: str, regex: bool) -> tuple[Needle, ...] | None:
    """Needles for a pattern: a line matches only if it holds one (None: no such needle)."""
    literal = _longest_safe_run(text, folded=False)
    if not literal:
        return None
    needles = [Needle(literal.encode())]
    if regex:
        found = _regex_needle(text)
        if found is None:
            return None
        if found not in needles:
            needles.append(found)
    return tuple(needles)


def _safe(char: str, folded: bool) -> bool:
    """Whether a character may be in a needle: JSON writes it as itself or as \\uXXXX (or, for
    `/`, \\/), and its UTF-8 stands for it in the raw bytes (not U+FFFD, which a byte that is
    not UTF-8 becomes, nor a lone surrogate); ignoring case, also only ASCII that no other
    character matches."""
    if char in '"\\' or char < " " or char == "\ufffd" or "\ud800" <= char <= "\udfff":
        return False
    return not folded or (char.isascii() and char not in _FOLDS_BEYOND_ASCII)


def _longest_safe_run(text: str, folded: bool) -> str:
    best = run = ""
    for char in text:
        run = run + char if _safe(char, folded) else ""
        if len(run) > len(best):
            best = run
    return best


def _regex_needle(pattern: str) -> Needle | None:
    """The longest run of needle characters every match of `pattern` (which compiles) holds in
    sequence, else None. Conservative: a run is only taken from plain characters (or escaped
    punctuation) at the top level; groups, classes, escapes such as `\\d`, anchors and `.` end a
    run, a character made optional by `?`, `*` or `{0,n}` is dropped, and a top-level `|`
    means no needle."""
    flags, at = "", 0
    while (flag := _GLOBAL_FLAGS.match(pattern, at)) is not None:
        flags += flag.group(1)
        at = flag.end()
    if "x" in flags:
        return None  # verbose mode: spaces and `#` are not characters of the match
    folded = "i" in flags
    runs: list[str] = []
    run: list[str] = []
    last_in_run = False  # the last atom is the last character of `run`
    for kind, literal in _atoms(pattern, at):
        if kind == "|":
            return None
        if kind == "char" and _safe(literal, folded):
            run.append(literal)
            last_in_run = True
            continue
        if kind == "optional" and last_in_run:
            run.pop()
        runs.append("".join(run))
        run.clear()
        last_in_run = False
    runs.append("".join(run))
    best = max(runs, key=len)
    if not best:
        return None
    return Needle(best.lower().encode(), folded=True) if folded else Needle(best.encode())


def _atoms(pattern: str, at: int) -> Iterator[tuple[str, str]]:
    """The top-level atoms of a regex from `at`: ("char", c) for a character matched as itself,
    ("optional", "") / ("repeat", "") for a repeat of the atom before that may or may not match
    it zero times, ("|", "") for an alternative, ("other", "") for anything else (a group, a
    class, an anchor, `.`, an escape such as `\\d`)."""
    size = len(pattern)
    while at < size:
        char = pattern[at]
        if char == "\\":
            escaped = pattern[at + 1 : at + 2]
            if escaped.isascii() and escaped.isalnum():
                at = _after_escape(pattern, at)  # a class, an anchor, a reference, a code
                yield "other", ""
            else:
                at += 2
                yield "char", escaped
        elif char == "[":
            at = _after_class(pattern, at)
            yield "other", ""
        elif char == "(":
            at = _after_group(pattern, at)
            yield "other", ""
        elif char in "|)":
            yield "|", ""
            return
        elif char in "*?+" or (char == "{" and _REPEAT.match(pattern, at)):
            repeat = _REPEAT.match(pattern, at) if char == "{" else None
            least = int(repeat.group(1) or 0) if repeat is not None else int(char == "+")
            at = repeat.end() if repeat is not None else at + 1
            if pattern[at : at + 1] in ("?", "+"):
                at += 1  # lazy or possessive
            yield ("repeat" if least else "optional"), ""
        elif char in ".^$":
            at += 1
            yield "other", ""
        else:
            at += 1
            yield "char", char


def _after_escape(pattern: str, at: int) -> int:
    """Where a `\\<letter or digit>` escape at `at` ends (with its code or digits)."""
    kind = pattern[at + 1]
    at += 2
    if kind == "N" and pattern[at : at + 1] == "{":
        return pattern.index("}", at) + 1
    digits = {"x": 2, "u": 4, "U": 8}.get(kind, 2 if kind.isdigit() else 0)
    while digits and at < len(pattern) and pattern[at] in "0123456789abcdefABCDEF":
        at += 1
        digits -= 1
    return at


def _after_class(pattern: str, at: int) -> int:
    """Where a `[...]` class at `at` ends (a `]` first in it is one of its characters)."""
    at += 1
    if pattern[at : at + 1] == "^":
        at += 1
    if pattern[at : at + 1] == "]":
        at += 1
    while at < len(pattern) and pattern[at] != "]":
        at += 2 if pattern[at] == "\\" else 1
    return at + 1


def _after_group(pattern: str, at: int) -> int:
    """Where the group at `at` ends (its nested groups, classes and escapes skipped)."""
    if pattern.startswith("(?#", at):
        return pattern.index(")", at) + 1
    depth = 0
    while at < len(pattern):
        char = pattern[at]
        if char == "\\":
            at += 2
            continue
        if char == "[":
            at = _after_class(pattern, at)
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if not depth:
                return at + 1
        at += 1
    return at


def _count_lines(data: bytes | bytearray, start: int, end: int) -> int:
    """Lines a text-mode file sees in `data[start:end]` (whole lines): `\\n`, `\\r\\n` and a
    lone `\\r` each end one."""
    count = data.count(b"\n", start, end)
    returns = data.count(b"\r", start, end)
    return count + returns - data.count(b"\r\n", start, end) if returns else count


@dataclass(frozen=True)
class _Progress:
    """How far a pattern has looked (byte offset and lines before it), and its first match."""

    offset: int = 0
    lines: int = 0
    found: int | None = None  # 1-based line number


class _Blocks:
    """The whole lines of a file from a position, a block at a time. While a block is handled,
    `offset` and `lines` say where it starts; once the loop ends, or `Interrupted` (raised
    before reading a block once `stop` is set) ends it, where the reading stopped."""

    def __init__(
        self,
        owner: LogLines,
        handle: BinaryIO,
        start: tuple[int, int],
        size: int,
        stop: threading.Event | None,
    ) -> None:
        self._owner = owner
        self._handle = handle
        self.offset, self.lines = start
        self.searched = 0  # bytes of the blocks given out
        self._size = size
        self._stop = stop

    def __iter__(self) -> Iterator[tuple[bytearray, int]]:
        """(the buffer, the size of the whole lines at its start), valid until the next one:
        one buffer is read into again and again (a new 4 MiB object per block costs its
        allocation and page faults, a quarter of the search)."""
        buffer = bytearray(min(BLOCK_BYTES, self._size - self.offset))
        view = memoryview(buffer)
        while self.offset < self._size:
            if self._stop is not None and self._stop.is_set():
                raise Interrupted(self._owner.path, self.offset, self._size)
            self._handle.seek(self.offset)
            read = self._handle.readinto(view[: self._size - self.offset])
            self._owner.bytes_read += read
            cut = buffer.rfind(b"\n", 0, read) + 1
            if not cut:
                end = self._long_line_end() if read == BLOCK_BYTES else None
                if end is None:
                    return  # the last line, still being written
                self._owner.long_lines.add(self.offset)
                self.offset, self.lines = end, self.lines + 1
                continue
            self.searched += cut
            yield buffer, cut
            self.offset += cut
            self.lines += _count_lines(buffer, 0, cut)

    def _read(self, offset: int, size: int) -> bytes:
        self._handle.seek(offset)
        data = self._handle.read(size)
        self._owner.bytes_read += len(data)
        return data

    def _long_line_end(self) -> int | None:
        """The end of a line longer than a block (counted, not searched), or None when it has
        no line break yet (the last line, still being written)."""
        at = self.offset + BLOCK_BYTES
        while at < self._size:
            block = self._read(at, min(BLOCK_BYTES, self._size - at))
            newline = block.find(b"\n")
            if newline >= 0:
                return at + newline + 1
            at += len(block)
        return None


class LogLines:
    """One file's line count and each pattern's progress; thread-safe (see module doc)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        # Work counters (tests and benchmarks): bytes read from the file, and bytes of lines
        # decoded because their bytes could not decide.
        self.bytes_read = 0
        self.bytes_decoded = 0
        self.index: GramIndex | None = None  # once set, it answers every pattern
        self._reset(None)

    def _reset(self, identity: tuple[int, int] | None) -> None:
        self._identity = identity
        self._end = 0  # bytes of whole lines counted
        self._lines = 0  # lines in them
        self._head = b""
        self._tail = b""
        self._memo: dict[str, _Progress] = {}
        self._searched = 0  # bytes searched by patterns asked for the first time
        self.long_lines: set[int] = set()  # offsets of lines longer than a block (skipped)

    def first_match(self, pattern: Pattern, stop: threading.Event | None = None) -> Match:
        """The first line matching `pattern` (raises FileNotFoundError like open(), and
        `Interrupted` once `stop` is set)."""
        with self._lock:
            if self.index is None and self._many_patterns(pattern):
                self.index = GramIndex(self.path)
            index = self.index
            if index is None:
                return self._first_match(pattern, stop)
        return index.first_match(pattern, stop)

    def _many_patterns(self, pattern: Pattern) -> bool:
        """Whether new patterns have searched this file's bytes so often that the gram index
        costs less from now on (a suite's scenarios each asking their own pattern of the
        shared gateway log: reading it all again for each would grow with the square)."""
        return (
            pattern.text not in self._memo
            and self._end >= INDEX_MIN_BYTES
            and self._searched >= INDEX_AFTER * self._end
        )

    def _first_match(self, pattern: Pattern, stop: threading.Event | None) -> Match:
        with self.path.open("rb") as handle:
            stat = os.fstat(handle.fileno())
            if not self._same_file(handle, stat):
                self._reset((stat.st_dev, stat.st_ino))
            size = stat.st_size
            progress = self._memo.get(pattern.text, _Progress())
            if progress.found is None:
                progress = self._search(handle, pattern, progress, size, stop)
            if self._end < size:
                blocks = _Blocks(self, handle, (self._end, self._lines), size, stop)
                try:
                    for _ in blocks:
                        pass
                finally:
                    self._counted(handle, blocks.offset, blocks.lines)
            remainder = self._remainder(handle, size)
            total = self._lines + len(remainder)
            if progress.found is not None:
                return Match(progress.found, total)
            for number, text in enumerate(remainder, start=self._lines + 1):
                if pattern.line_hit(text):
                    return Match(number, total)
            return Match(None, total, len(self.long_lines))

    def _search(
        self,
        handle: BinaryIO,
        pattern: Pattern,
        progress: _Progress,
        size: int,
        stop: threading.Event | None,
    ) -> _Progress:
        """The first match in the whole lines after `progress`; how far it looked is kept
        (also when interrupted), and the lines it counted."""
        blocks = _Blocks(self, handle, (progress.offset, progress.lines), size, stop)
        found = None
        try:
            for block, whole in blocks:
                hit, decoded = pattern.first_in(block, whole)
                self.bytes_decoded += decoded
                if hit is not None:
                    found = blocks.lines + hit + 1
                    break
        finally:
            self._searched += blocks.searched
            progress = _Progress(blocks.offset, blocks.lines, found)
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            self._memo[pattern.text] = progress
            if found is None:
                self._counted(handle, blocks.offset, blocks.lines)
        return progress

    def _counted(self, handle: BinaryIO, offset: int, lines: int) -> None:
        """The whole lines up to `offset` are counted (`lines`); keep the bytes at both ends,
        which re-identify the file on the next call."""
        if offset <= self._end:
            return
        self._end, self._lines = offset, lines
        handle.seek(0)
        self._head = handle.read(min(offset, _FINGERPRINT))
        handle.seek(max(0, offset - _FINGERPRINT))
        self._tail = handle.read(min(offset, _FINGERPRINT))
        self.bytes_read += len(self._head) + len(self._tail)

    def _remainder(self, handle: BinaryIO, size: int) -> list[str]:
        """The lines after the counted ones: a last line still being written (its first block
        when it is longer)."""
        if self._end >= size:
            return []
        handle.seek(self._end)
        data = handle.read(min(BLOCK_BYTES, size - self._end))
        self.bytes_read += len(data)
        return split_lines(data)

    def _same_file(self, handle: BinaryIO, stat: os.stat_result) -> bool:
        if self._identity != (stat.st_dev, stat.st_ino) or stat.st_size < self._end:
            return False
        if not self._end:
            return True
        handle.seek(0)
        head = handle.read(len(self._head))
        handle.seek(self._end - len(self._tail))
        self.bytes_read += len(self._head) + len(self._tail)
        return head == self._head and handle.read(len(self._tail)) == self._tail


_FILES: dict[str, LogLines] = {}
_FILES_LOCK = threading.Lock()


def lines_of(path: Path) -> LogLines:
    """The process-wide state of `path` (one per path, shared by all scenarios; the path is
    opened on every call, so a link that now points elsewhere is noticed like a rotation)."""
    key = os.fspath(path)
    index = _FILES.get(key)
    if index is None:
        with _FILES_LOCK:
            index = _FILES.setdefault(key, LogLines(Path(key)))
    return index
