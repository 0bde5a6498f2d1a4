"""Leaving the `clawspec` process without Python's final teardown.

At exit CPython frees every object and module one by one: ~0.1 s after a run of a few hundred
scenarios on our build machine, more after a large suite — time a CI step waits for nothing,
since the operating system reclaims the memory at once anyway. The command therefore ends with
`os._exit` once everything a normal exit guarantees is done: exit handlers run (logging flushed,
temporary folders removed), output flushed. Used only by the command itself: `cli.main()`
called in-process (tests, the action's entrypoint) returns as before.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import NoReturn


def leave(code: int) -> NoReturn:
    """Exit with `code` like `sys.exit`, minus the interpreter's teardown."""
    threading = sys.modules.get("threading")
    if threading is not None and any(
        thread.is_alive() and not thread.daemon and thread is not threading.main_thread()
        for thread in threading.enumerate()
    ):
        sys.exit(code)  # a thread Python would wait for: let the normal exit join it
    atexit._run_exitfuncs()  # what sys.exit would run: logging.shutdown, weakref finalizers, ...
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe (`clawspec run | head`): nothing to lose
            pass
    os._exit(code)
