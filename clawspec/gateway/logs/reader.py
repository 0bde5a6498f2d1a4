"""Reading a gateway log from an offset in bounded memory, across OpenClaw's rotations.

The log is read in READ_BLOCK blocks (a line longer than a block is counted and skipped, never
indexed), following a rotation of the active file into `<stem>.1<ext>` / `<path>.1`; a log with
no recorded offset is read from its last `tail_bytes` only (`tail_start`). What the lines mean
is `index.LogIndex`'s business; this module only hands complete lines over.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

MAX_ARCHIVES = 5  # OpenClaw keeps 5 rotated files
# Memory bound of reading: the log is read in blocks of this size; a single line longer than a
# block is skipped (counted, not indexed: no gateway line is anywhere near that long).
READ_BLOCK = 8 * 1024 * 1024


class SegmentReader:
    """Read the segments' lines forward; a last line without newline waits unless `final`.

    The current file stays open between polls (`close` when done) and is read in one call per
    poll, split at C speed: a run index reads a few hundred lines of the shared log, and each
    system call lets every other thread of a busy run take the interpreter lock first."""

    def __init__(self, segments: list[tuple[Path, int]]) -> None:
        self.segments = segments
        self.current = 0
        self.position = segments[0][1] if segments else 0
        self.lines = 0
        self._handle: BinaryIO | None = None

    def read(self, feed: Callable[[list[bytes], int, int, int], None], final: bool) -> None:
        """Call `feed(lines, segment, lines before, offset)` with the lines not yet read."""
        while self.current < len(self.segments):
            last = self.current == len(self.segments) - 1
            if self._handle is None:
                self._handle = _open_or_none(self.segments[self.current][0])
            if self._handle is not None:
                self._read_blocks(feed, wait_for_end=last and not final)
            if last:
                return
            self.close()
            self.current += 1
            self.position = self.segments[self.current][1]

    def _read_blocks(
        self, feed: Callable[[list[bytes], int, int, int], None], wait_for_end: bool
    ) -> None:
        """Feed the current file's lines from `position` on, a block (READ_BLOCK) at a time;
        with `wait_for_end`, a last line without its newline is left for the next poll (the
        writer is mid-line)."""
        assert self._handle is not None
        while True:
            self._handle.seek(self.position)
            data = self._handle.read(READ_BLOCK)
            more = len(data) == READ_BLOCK  # the file may go on
            if more or wait_for_end:
                complete = data.rfind(b"\n") + 1
                if not complete and more:
                    if not self._skip_long_line(wait_for_end):
                        return
                    continue
                data = data[:complete]
            self._feed(data, feed)
            if not more or not data:
                return

    def _skip_long_line(self, wait_for_end: bool) -> bool:
        """Step over a line longer than READ_BLOCK (counted, not fed); False when it does not
        end yet and `wait_for_end`."""
        assert self._handle is not None
        at = self.position + READ_BLOCK
        while True:
            self._handle.seek(at)
            block = self._handle.read(READ_BLOCK)
            end = block.find(b"\n")
            if end >= 0 or not block:
                break
            at += len(block)
        if end < 0 and wait_for_end:
            return False
        self.position = at + end + 1 if end >= 0 else at
        self.lines += 1
        return True

    def _feed(self, data: bytes, feed: Callable[[list[bytes], int, int, int], None]) -> None:
        if b"\r" in data:  # split exactly like iterating the file: at b"\n" only
            lines = [line + b"\n" for line in data.split(b"\n")]
            lines[-1] = lines[-1][:-1]
            if not lines[-1]:
                lines.pop()
        else:
            lines = data.splitlines(keepends=True)
        if lines:
            feed(lines, self.current, self.lines, self.position)
            self.lines += len(lines)
            self.position += len(data)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def segments_of(
    path: Path, offset: int, started_at: float | None, inode: int | None
) -> list[tuple[Path, int]]:
    """Return the files (and start offsets) holding the run: a rotation moves the run's start
    into an archive (`<stem>.1<ext>`, or `<path>.1`), which is read from `offset`, followed by
    newer archives and the new file from 0."""
    stat = path.stat()
    if offset <= 0:
        return [(path, 0)]
    archives = _archives(path)
    if inode is not None and stat.st_ino != inode:
        chain = [a for a in archives if a[1].st_ino == inode]
        newer = archives[: archives.index(chain[0])] if chain else []
        chain += list(reversed(newer))
    else:
        # archives written since the run started were active during it
        recent = [a for a in archives if started_at is not None and a[1].st_mtime >= started_at]
        if recent:
            chain = list(reversed(recent))
        elif stat.st_size < offset:
            chain = archives[:1]
        else:
            return [(path, offset)]
    if not chain:
        return [(path, 0)]  # truncated in place, or the archive is gone: read what is left
    first, first_stat = chain[0]
    files = [(first, offset if first_stat.st_size >= offset else 0)]
    files += [(p, 0) for p, _ in chain[1:]]
    return [*files, (path, 0)]


def tail_start(path: Path, tail_bytes: int) -> int:
    """Where the first line starting in the last `tail_bytes` of `path` begins (0: the file
    is no larger)."""
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size <= tail_bytes:
            return 0
        at = size - tail_bytes - 1  # a line starts after a newline: look from the byte before
        handle.seek(at)
        while block := handle.read(64 * 1024):
            end = block.find(b"\n")
            if end >= 0:
                return at + end + 1
            at += len(block)
        return size


def _open_or_none(path: Path) -> BinaryIO | None:
    try:
        return path.open("rb")
    except FileNotFoundError:
        return None


def _archives(path: Path) -> list[tuple[Path, os.stat_result]]:
    """The rotated files of `path`, newest first: for each number, `<stem>.N<ext>` or else
    `<path>.N`. One listing of the folder instead of a stat per name: every run-scoped index
    asks, and a log usually has no archive at all."""
    names = [
        (f"{path.stem}.{n}{path.suffix}", f"{path.name}.{n}") for n in range(1, MAX_ARCHIVES + 1)
    ]
    wanted = {name for pair in names for name in pair}
    try:
        with os.scandir(path.parent) as entries:
            present = {entry.name for entry in entries if entry.name in wanted}
    except OSError:
        return []
    archives: list[tuple[Path, os.stat_result]] = []
    for pair in names:
        for name in pair:
            if name in present:
                try:
                    archives.append((path.with_name(name), path.with_name(name).stat()))
                    break
                except OSError:
                    continue
    return archives
