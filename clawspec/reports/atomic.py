"""Writing a report file atomically: a reader (a CI step, a browser) sees the old file or the
new one whole, never half of one, and a write that fails leaves nothing of its own behind."""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterable
from pathlib import Path

_WRITES = itertools.count()


def write_atomic(path: Path, content: bytes | Iterable[str]) -> Path:
    """Write `content` (bytes, or text chunks written as UTF-8) to `path` atomically.

    The partial file's name is short and this write's own: two runs writing one report at once
    never share it, and a report name near the file system's 255 bytes still gets one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".clawspec-{os.getpid()}-{next(_WRITES)}.partial")
    try:
        if isinstance(content, bytes):
            partial.write_bytes(content)
        else:
            with partial.open("w", encoding="utf-8") as handle:
                handle.writelines(content)
        partial.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise
    return path
