"""Reading and parsing contract files, in a forked process while this one goes on.

Parsing YAML is most of loading a large suite: libyaml's composer builds a node, with two marks,
for every value. Before validating, `clawspec run` and `validate` also spend about as long on
work that does not need the files: building the assertion models and importing the runner and
the HTTP client. So, once the files are known, the CLI forks a child that reads and parses them
all and sends the results back pickled (about 10 ms for 1,000 scenarios), and takes them when it
gets to validation: the two overlap on a second CPU.

It is only worth it, and only safe, on Linux (fork), with a second CPU, in a process that has not
started threads yet, for a suite of more than `MIN_BYTES`. Whatever goes wrong on the child's
side (it dies, is interrupted, sends less than expected), the parent reads and parses the files
itself: results never depend on the child.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from clawspec.contracts.discovery import display_path
from clawspec.contracts.source import SourceDoc, SourceError, parse_yaml

# Below this many bytes of contracts (a few hundred scenarios) parsing takes a few ms: less than
# a fork and the round trip cost.
MIN_BYTES = 64 * 1024
# scenarios[i].given|then[j]: the deepest list item whose start a valid contract keeps.
ASSERTION_DEPTH = 4

Parsed = tuple[str, SourceDoc] | list[str]  # (text, document), or the file's error messages
log = logging.getLogger("clawspec.contracts")


def read_contract(path: Path, shown: str) -> Parsed:
    """Read and parse one contract file: its text and document, or its error messages."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [f"{shown}: cannot read contract: {exc}"]
    try:
        # Other positions than where scenarios and assertions start are needed only to report
        # errors: the first pass keeps only those (LoadedContract's lines).
        return text, parse_yaml(text, path, item_depth=ASSERTION_DEPTH)
    except SourceError as exc:
        return [f"{shown}:{exc.mark.line}:{exc.mark.column}: {exc}"]


class ParseAhead:
    """A forked child reading and parsing `files`; `take()` returns what it found."""

    def __init__(self, pid: int, source: int, files: Sequence[Path]) -> None:
        self._pid = pid
        self._source = source
        self._files = list(files)
        self._open = True

    def take(self) -> dict[Path, Parsed] | None:
        """Each file's result, waiting for the child; None when it did not finish its work."""
        with open(self._source, "rb") as source:
            payload = source.read()
        self._open = False
        _, status = os.waitpid(self._pid, 0)
        results = None
        if status == 0:
            try:
                results = pickle.loads(payload)  # our own child's output, through a pipe
            except (pickle.UnpicklingError, EOFError, ValueError):
                results = None
        if not isinstance(results, list) or len(results) != len(self._files):
            log.debug("parsing ahead did not finish (wait status %d): parsing here", status)
            return None
        return dict(zip(self._files, results, strict=True))

    def abandon(self) -> None:
        """Stop the child when its results are not wanted (the load failed before them)."""
        if self._open:
            self._open = False
            os.close(self._source)
            os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)


@contextmanager
def parsing_ahead(files: Sequence[Path], enabled: bool = True) -> Iterator[ParseAhead | None]:
    """A child parsing `files` while the body runs (None when not worth it or not possible)."""
    ahead = _fork(files) if enabled and _worth_forking(files) else None
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


def _fork(files: Sequence[Path]) -> ParseAhead | None:
    source, sink = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(source)
        os.close(sink)
        return None
    if pid:
        os.close(sink)
        log.debug("parsing %d contract file(s) ahead in process %d", len(files), pid)
        return ParseAhead(pid, source, files)
    # The child: parse, send, and leave without running the parent's exit handlers or flushing
    # its buffers (os._exit), whatever happens.
    status = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C is the parent's to report
        os.close(source)
        results = [read_contract(path, display_path(path)) for path in files]
        with open(sink, "wb") as out:
            out.write(pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL))
        status = 0
    finally:
        os._exit(status)
