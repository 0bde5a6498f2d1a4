"""What SIGINT, SIGTERM and SIGHUP mean while a command runs scenarios (`run`, `bless`): the
first starts no more scenarios (running ones finish and are judged whole; a gateway still
starting is stopped), the second abandons the running ones. The reports are written either way.
SIGHUP is what a closed terminal, a dropped SSH session or `timeout -s HUP` sends."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any


def install(
    stop: threading.Event,
    abandon: threading.Event,
    running: Callable[[], bool | None] = lambda: True,
) -> Callable[[], None]:
    """Handle SIGINT/SIGTERM/SIGHUP by setting `stop`, then `abandon`; return what restores
    the previous handlers. `running` says what the first signal meets, for its message:
    scenarios that may still run (True), none yet (None: loading, a gateway starting) or none
    any more (False: every scenario has finished)."""

    def handle(signum: int, _frame: Any) -> None:
        if stop.is_set():
            abandon.set()
            return
        stop.set()
        name = signal.Signals(signum).name
        state = running()
        if state is None:
            said = f"{name}: stopping before any scenario starts; reports will still be written"
        elif not state:
            said = f"{name}: every scenario has finished; the reports are being written"
        else:
            said = (
                f"{name}: starting no more scenarios; waiting for the running ones (send "
                "again to abandon them); reports will still be written"
            )
        with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
            print(f"\n{said}", file=sys.stderr, flush=True)

    handled = [signal.SIGINT, signal.SIGTERM]
    if hasattr(signal, "SIGHUP"):  # not on Windows
        handled.append(signal.SIGHUP)
    previous = {sig: signal.signal(sig, handle) for sig in handled}
    return lambda: [signal.signal(sig, old) for sig, old in previous.items()] and None
