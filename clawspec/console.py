"""The console a ClawSpec process writes to, made to survive what users do with it.

Set up once by the process's entry (the `clawspec` command, the container's entrypoint), never by
the Python API, whose caller owns its streams:

- a console whose encoding lacks a character ClawSpec prints (a latin-1 or ASCII locale, as on
  an old Jenkins node, or `PYTHONIOENCODING=ascii`) shows `?` for it. Python would raise, and a
  scenario named `café` or any `→` in a message became an internal error. stderr already
  escapes what it cannot show;
- a reader that goes away (`clawspec run | head`, `| grep -m1 FAIL`): what is printed after
  that goes nowhere, and the run goes on to its end and its reports. Python would raise
  BrokenPipeError at the next line, and the run stopped there as an internal error.

Reports are files written in UTF-8; neither changes them.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO


class _Stdout:
    """sys.stdout, quiet once its reader has gone."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._gone()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._gone()

    def _gone(self) -> None:
        # Later writes, and the flush at exit, go to /dev/null: Python would otherwise report
        # the broken pipe once more as the process ends.
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, self._stream.fileno())
        finally:
            os.close(null)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def prepare() -> None:
    """Make stdout show `?` for what its encoding lacks, and go quiet when its reader goes."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="replace")
    if isinstance(sys.stdout, _Stdout) or sys.stdout is None:
        return
    sys.stdout = _Stdout(sys.stdout)  # type: ignore[assignment]
