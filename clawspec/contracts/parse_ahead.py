"""Reading and parsing contract files in a forked process while this one goes on.

Parsing YAML is most of loading a large suite: libyaml's composer builds a node, with two marks,
for every value. Before validating, `clawspec run` and `validate` also spend about as long on
work that does not need the files: building the assertion models and importing the runner and
the HTTP client. So, once the files are known, the CLI forks a child that reads and parses them
in file order, each result pickled into a shared memory file as soon as it is ready. When this
process gets to validation it takes the child's results as they come and validates each while
the child parses the next; whenever the child's next result is not ready yet, it parses the
last file nobody has taken itself. The two meet in the middle: a suite too large for the child
to parse during the imports is parsed by both processes, not waited for.

Who parses which file is settled through one shared byte per file (0: free, 1: the child, 2:
this process). The child takes files from the front, and stops at the first one this process
has taken; this process takes them from the back, and stops at the first one the child has
taken. Each writes its mark and then reads the byte again, so at worst both parse one file (the
result of this process is used); never neither.

It is only worth it, and only safe, on Linux (fork), with a second CPU, in a process that has not
started threads yet, for a suite of more than `MIN_BYTES`; and only where the process is
ClawSpec's own: the CLI runs its command under `allowed_here()`; a program using the Python API
is never forked. Whatever goes wrong on the child's
side (it dies, is interrupted, sends something unreadable), this process parses what is left:
results never depend on the child.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import struct
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from clawspec.contracts.reading import Parsed, read_file
from clawspec.inputs.limits import DEFAULT_LIMITS, ContractLimits

if TYPE_CHECKING:
    import mmap

# `mmap`, `select` and `tempfile` are imported only when a child is forked: most suites are too
# small for it, and `validate` should not pay for them.

# Below this many bytes of contracts (a few hundred scenarios) parsing takes a few ms: less than
# a fork and the round trip cost.
MIN_BYTES = 64 * 1024
log = logging.getLogger("clawspec.contracts")

FREE, CHILD, PARENT = 0, 1, 2  # who parses a file: its byte in the shared claims
# The child's note for each result it wrote: the file's index, and where its pickle starts and
# ends in the shared results file.
NOTE = struct.Struct("<IQQ")

_allowed = False


@contextmanager
def allowed_here() -> Iterator[None]:
    """Let loading parse ahead in a forked child while this runs: the CLI's command, in a
    process ClawSpec owns (a program using the Python API is never forked)."""
    global _allowed
    before, _allowed = _allowed, True
    try:
        yield
    finally:
        _allowed = before


def allowed() -> bool:
    return _allowed


class ParseAhead:
    """A forked child parsing `files` from the front; `results()` to take them."""

    def __init__(
        self,
        pid: int,
        notes: int,
        data: int,
        claims: mmap.mmap,
        files: Sequence[Path],
        limits: ContractLimits = DEFAULT_LIMITS,
    ) -> None:
        import select

        self._pid = pid
        self._notes = notes  # read end of the pipe the child writes its notes to
        self._data = data  # the shared file holding the child's pickled results
        self._claims = claims
        self._files = list(files)
        self._limits = limits
        self._pending = bytearray()  # notes read but not used yet
        self._poll = select.poll()
        self._poll.register(notes, select.POLLIN)
        self._child_ended = False  # the child has sent all it will send
        self._open = True
        self.parsed_by_child = 0  # results of the child's that were used
        self.parsed_here = 0

    def results(self) -> Iterator[tuple[int, Parsed]]:
        """Every file's index and result, each once, as soon as it is ready (not in order)."""
        low, high = 0, len(self._files)  # the child's results come for low.., ours are high..
        try:
            while low < high:
                result = None if self._child_ended else self._child_result(low, wait=False)
                if result is None and (self._child_ended or self._take(high - 1)):
                    high -= 1
                    yield high, self._parse(high)
                    continue
                if result is None:  # the child has taken the last free file, and all before it
                    result = self._child_result(low, wait=True)
                if result is not None:  # (else the child has ended: the rest is parsed here)
                    low += 1
                    yield low - 1, result
        finally:
            log.debug(
                "contract files parsed: %d ahead in process %d, %d here",
                self.parsed_by_child, self._pid, self.parsed_here,
            )  # fmt: skip
            self.abandon()

    def _take(self, index: int) -> bool:
        """Mark file `index` as this process's to parse; False when the child has taken it."""
        if self._claims[index] == CHILD:
            return False
        self._claims[index] = PARENT
        return self._claims[index] != CHILD

    def _parse(self, index: int) -> Parsed:
        self.parsed_here += 1
        return read_file(self._files[index], self._limits)

    def _child_result(self, index: int, wait: bool) -> Parsed | None:
        """The child's result for file `index` (its next one), None when not (yet) there."""
        while len(self._pending) < NOTE.size:
            if self._child_ended or not self._read_notes(wait):
                return None
        number, start, end = NOTE.unpack_from(self._pending)
        try:
            if number != index:
                raise ValueError(f"result for file {number}, expected {index}")
            result = pickle.loads(os.pread(self._data, end - start, start))  # our own child's
        except (pickle.UnpicklingError, EOFError, ValueError, OSError) as exc:
            log.debug("parsing ahead: cannot use the child's result (%s): parsing here", exc)
            self._child_ended = True
            return None
        del self._pending[: NOTE.size]
        self.parsed_by_child += 1
        return result

    def _read_notes(self, wait: bool) -> bool:
        """Read what the child has noted since; False when nothing came."""
        if not self._poll.poll(None if wait else 0):
            return False
        chunk = os.read(self._notes, 64 * 1024)
        if not chunk:  # the child has ended: everything it wrote is noted already
            self._child_ended = True
            return False
        self._pending += chunk
        return True

    def abandon(self) -> None:
        """Stop the child (when it is still parsing, its results are not wanted) and reap it."""
        if self._open:
            self._open = False
            os.close(self._notes)
            os.close(self._data)
            self._claims.close()
            os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)


@contextmanager
def parsing_ahead(
    files: Sequence[Path], enabled: bool = True, limits: ContractLimits = DEFAULT_LIMITS
) -> Iterator[ParseAhead | None]:
    """A child parsing `files` while the body runs (None when not worth it or not possible)."""
    ahead = _fork(files, limits) if enabled and _worth_forking(files) else None
    try:
        yield ahead
    finally:
        if ahead is not None:
            ahead.abandon()


def _worth_forking(files: Sequence[Path]) -> bool:
    if not sys.platform.startswith("linux") or threading.active_count() > 1:
        return False  # fork is only safe before any thread starts (and on macOS, not even then)
    if len(os.sched_getaffinity(0)) < 2:
        return False  # nothing to overlap with
    size = 0
    for path in files:
        try:
            size += path.stat().st_size
        except OSError:
            continue  # reported when the parent reads it
        if size >= MIN_BYTES:
            return True
    return False


def _shared_file() -> int:
    """A file descriptor for the child's results: in memory where the kernel allows it."""
    try:
        return os.memfd_create("clawspec-parse-ahead", os.MFD_CLOEXEC)
    except (AttributeError, OSError):
        import tempfile

        with tempfile.TemporaryFile() as handle:  # already unlinked: nothing is left behind
            return os.dup(handle.fileno())


def _fork(files: Sequence[Path], limits: ContractLimits) -> ParseAhead | None:
    import mmap

    opened: list[int] = []
    try:
        claims = mmap.mmap(-1, max(1, len(files)))  # anonymous, so shared with the child
        opened.append(data := _shared_file())
        opened.extend(pipe := os.pipe())
        pid = os.fork()
    except OSError as exc:
        log.debug("parsing ahead is not possible here (%s)", exc)
        for fd in opened:
            os.close(fd)
        return None
    notes, sink = pipe
    if pid:
        os.close(sink)
        log.debug("parsing %d contract file(s) ahead in process %d", len(files), pid)
        return ParseAhead(pid, notes, data, claims, files, limits)
    # The child: parse from the front until a file is taken, note each result, and leave
    # without running the parent's exit handlers or flushing its buffers (os._exit), whatever
    # happens.
    status = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C is the parent's to report
        os.close(notes)
        _parse_from_the_front(files, claims, data, sink, limits)
        status = 0
    finally:
        os._exit(status)


def _parse_from_the_front(
    files: Sequence[Path], claims: mmap.mmap, data: int, sink: int, limits: ContractLimits
) -> None:
    written = 0
    for index, path in enumerate(files):
        if claims[index] != FREE:
            return  # the parent has taken this file, and every one after it
        claims[index] = CHILD
        if claims[index] != CHILD:
            return
        blob = pickle.dumps(read_file(path, limits), pickle.HIGHEST_PROTOCOL)
        _write_all(data, blob)
        _write_all(sink, NOTE.pack(index, written, written + len(blob)))
        written += len(blob)


def _write_all(fd: int, blob: bytes) -> None:
    view = memoryview(blob)
    while view:
        view = view[os.write(fd, view) :]
