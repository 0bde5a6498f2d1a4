"""How long a test waits for something that must happen before it calls it a hang.

No test bounds wall time from above: where a test drives a process whose waits cannot be
injected (a signal to a CLI, a gateway's bring-up), the wait of the bug it guards against is made
endless (hours), and this is all that bounds it: far above any machine's slowness, so only the
bug reaches it, and the test then fails instead of hanging the suite.
"""

from __future__ import annotations

import time
from collections.abc import Callable

HANG_GUARD_S = 300.0


def wait_until(done: Callable[[], object], poll_s: float = 0.05) -> None:
    """Poll `done` until it is true or the hang guard has passed; the caller asserts what it
    waited for, so a hang fails there with its own message."""
    deadline = time.monotonic() + HANG_GUARD_S
    while not done() and time.monotonic() < deadline:
        time.sleep(poll_s)
