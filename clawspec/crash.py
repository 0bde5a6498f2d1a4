"""Internal errors: a bug in ClawSpec ends the command with one line, a crash log and exit 70.

A bug is any exception that is not an expected ClawSpec error (`errors.ClawSpecError`: bad
input, an unreachable gateway) nor an interrupt. A run does not let one cost its report: the
piece that raised (a progress listener, a lane thread, a report writer, the comparison with
the baseline) is recorded as a `Fault`, the run stops starting scenarios, every output that
does not depend on the failed piece is still written, and the run then raises `InternalError`
carrying every fault. The CLI's one handler (`handle`, called by `cli.main` for any
unexpected exception) writes the crash log into the report folder and prints one line naming
the error and the log, which the user attaches to a bug report instead of re-running the
suite with `--debug`. Everything in the log and the line is masked with the run's secrets.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from clawspec import __version__
from clawspec.errors import ClawSpecError, ExitCode
from clawspec.text import one_line

# Imported by every command (through the runner's finish step): what only a crash needs
# (platform, traceback, tempfile) is imported when one happens.

CRASH_LOG_NAME = "clawspec-crash.log"


@dataclass(frozen=True)
class Fault:
    """One internal error: where it happened (for a reader) and the exception itself."""

    where: str
    error: BaseException


class InternalError(Exception):
    """A run met a bug; the reports it could write are written (`written`).

    `report_dir` is the run's report folder (where the crash log goes); None when the error
    came before the folder was known.
    """

    def __init__(
        self,
        faults: Sequence[Fault],
        *,
        report_dir: Path | None = None,
        written: Sequence[Path] = (),
    ) -> None:
        if not faults:
            raise ValueError("an internal error needs at least one fault")
        self.faults = list(faults)
        self.report_dir = report_dir
        self.written = list(written)
        super().__init__(describe(self.faults[0]))


def describe(fault: Fault) -> str:
    """`TypeError: boom (in writing the JUnit XML)`, on one line."""
    text = one_line(str(fault.error), 300)  # masked; the crash log holds the whole message
    name = type(fault.error).__name__
    return f"{name}: {text} (in {fault.where})" if text else f"{name} (in {fault.where})"


def is_bug(error: BaseException) -> bool:
    """True for an exception no part of ClawSpec expects: not a ClawSpec error, not an
    interrupt or exit."""
    return isinstance(error, Exception) and not isinstance(error, ClawSpecError)


class Faults:
    """The internal errors of one run, from any thread. The first one sets `stopped`: lanes
    start no more scenarios."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[Fault] = []
        self.stopped = threading.Event()

    def add(self, where: str, error: BaseException) -> None:
        with self._lock:
            self._items.append(Fault(where, error))
        self.stopped.set()

    def extend(self, faults: Sequence[Fault]) -> None:
        for fault in faults:
            self.add(fault.where, fault.error)

    def __bool__(self) -> bool:
        with self._lock:
            return bool(self._items)

    @property
    def items(self) -> list[Fault]:
        with self._lock:
            return list(self._items)

    @contextmanager
    def guard(self, where: str) -> Iterator[None]:
        """Record a bug raised in the block (and go on); expected errors pass through."""
        try:
            yield
        except Exception as exc:
            if not is_bug(exc):
                raise
            self.add(where, exc)

    def raise_if_any(self, *, report_dir: Path | None, written: Sequence[Path] = ()) -> None:
        items = self.items
        if items:
            raise InternalError(items, report_dir=report_dir, written=written)


class Noted:
    """Bugs that cost one verdict, not the run (an assertion's evaluator raised): the verdict
    is `error`, and the crash log in the report folder is written at once (rewritten with every
    further one), so the user has the traceback to report while the run goes on."""

    def __init__(self, report_dir: Path, argv: Sequence[str]) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []
        self.report_dir = report_dir
        self.argv = list(argv)

    def add(self, where: str, error: BaseException) -> Path | None:
        """Record the bug; the crash log's path, or None when it could not be written."""
        with self._lock:
            self._faults.append(Fault(where, error))
            return write_crash_log(
                InternalError(self._faults, report_dir=self.report_dir), self.argv
            )

    @property
    def faults(self) -> list[Fault]:
        with self._lock:
            return list(self._faults)


def handle(
    error: BaseException,
    argv: Sequence[str],
    err: TextIO | None = None,
    annotate: Callable[[str], None] | None = None,
) -> int:
    """The one handler for a bug that reached the command: crash log, one line, exit code.

    `argv` is the command line as typed (masked before it is written); `annotate` also shows
    the line where the CI system shows errors (on GitHub, an error annotation).
    """
    from clawspec.secrets import mask

    err = err if err is not None else sys.stderr
    internal = (
        error if isinstance(error, InternalError) else InternalError([Fault("clawspec", error)])
    )
    log = write_crash_log(internal, argv)
    where = f"crash log: {log}" if log else "no crash log could be written"
    more = f" and {len(internal.faults) - 1} more" if len(internal.faults) > 1 else ""
    if internal.written:
        more += f"; what finished is in {_folder(internal.written)}"
    line = mask(f"internal error: {internal}{more}; {where} (please attach it to a bug report)")
    if annotate is not None:
        annotate(line)
    print(line, file=err, flush=True)
    return int(ExitCode.INTERNAL)


def _folder(written: Sequence[Path]) -> str:
    folders = list(dict.fromkeys(str(path.parent) for path in written))
    return folders[0] if len(folders) == 1 else ", ".join(str(path) for path in written)


def write_crash_log(error: InternalError, argv: Sequence[str]) -> Path | None:
    """Write the crash log into the report folder (else the temporary folder); its path, or
    None when neither can be written."""
    import tempfile

    text = crash_log_text(error, argv)
    folders = [error.report_dir] if error.report_dir is not None else []
    folders.append(Path(tempfile.gettempdir()))
    for folder in folders:
        path = folder / CRASH_LOG_NAME if folder == error.report_dir else _temp_log(folder)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError:
            continue
        return path
    return None


def _temp_log(folder: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return folder / f"clawspec-crash-{stamp}.log"


def crash_log_text(error: InternalError, argv: Sequence[str]) -> str:
    """Versions, the command line, what was written, and each fault's traceback; masked."""
    import platform
    import shlex
    import traceback

    from clawspec.secrets import mask

    lines = [
        "ClawSpec crash log: please attach this file to a bug report.",
        "Every secret ClawSpec knows of is masked as ***.",
        "",
        f"error:     {error}",
        f"time:      {datetime.now(UTC).isoformat(timespec='seconds')}",
        f"clawspec:  {__version__}",
        f"python:    {platform.python_version()} ({platform.python_implementation()}) "
        f"{sys.executable}",
        f"platform:  {platform.platform()}",
        f"openclaw:  {openclaw_version() or 'unknown'}",
        f"command:   {shlex.join(argv)}",
        "written:   " + (", ".join(str(path) for path in error.written) or "nothing"),
    ]
    for number, fault in enumerate(error.faults, 1):
        lines += ["", f"--- fault {number} of {len(error.faults)}: in {fault.where}", ""]
        lines.append(
            "".join(
                traceback.format_exception(
                    type(fault.error), fault.error, fault.error.__traceback__
                )
            ).rstrip("\n")
        )
    return mask("\n".join(lines) + "\n")


def openclaw_version() -> str | None:
    """The version of the OpenClaw a brought-up gateway would run, read from its package.json
    (no process is started); None when it cannot be told."""
    try:
        return _openclaw_version()
    except Exception:  # the crash handler must not crash: a bug here costs only this line
        return None


def _openclaw_version() -> str | None:
    # Imported here, under the caller's guard: the bug being reported may be in these modules.
    from clawspec.gateway.bringup import find_openclaw
    from clawspec.gateway.release import launcher_release

    launcher = find_openclaw()
    release = launcher_release(launcher) if launcher is not None else None
    return f"{release.version} ({release.package})" if release is not None else None
