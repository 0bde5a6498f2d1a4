"""A brought-up gateway never outlives ClawSpec.

ClawSpec stops the gateway it started however the run ends, as long as ClawSpec itself gets to
run its cleanup. When it cannot (SIGKILL, a CI runner killing the job's process group on a
timeout or a cancel, the machine's OOM killer), the gateway, started in a session of its own,
would keep running with its state folder (the generated config holding the run's tokens). So
each gateway gets a watchdog: a small process in a session of its own too, holding the read end
of a pipe whose write end only ClawSpec holds. ClawSpec's normal stop writes one byte and closes
it: the watchdog leaves. If the pipe closes without that byte, ClawSpec is gone: the watchdog
stops the gateway's process group (SIGTERM, SIGKILL after a grace period), takes OpenClaw's
bootstrap files the run added back out of the workspace (gateway/bootstrap_files.py, run by its
path) and removes the state folder, then leaves.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

from clawspec.gateway import bootstrap_files
from clawspec.gateway.bootstrap_files import BootstrapGuard

# Run by the watchdog process: `python -c WATCHDOG <pgid> <state folder> <grace s>
# [<bootstrap_files.py> <its guard as JSON>]`, the pipe on its standard input. Only the standard
# library: it must start in milliseconds.
WATCHDOG = r"""# clawspec gateway watchdog (named in its command line, for `ps`)
import os, shutil, signal, sys, time
pgid, state, grace = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)  # a signal to ClawSpec's group is not for this one
if os.read(0, 1):
    sys.exit(0)  # ClawSpec stopped its gateway itself
def alive():
    try:
        os.killpg(pgid, 0)
        return True
    except OSError:
        return False
try:
    os.killpg(pgid, signal.SIGTERM)
except OSError:
    pass
deadline = time.monotonic() + grace
while alive() and time.monotonic() < deadline:
    time.sleep(0.1)
try:
    os.killpg(pgid, signal.SIGKILL)
except OSError:
    pass
if len(sys.argv) > 5:  # the gateway is gone: nothing writes its bootstrap files again
    try:
        import runpy
        guard = runpy.run_path(sys.argv[4])["BootstrapGuard"].from_json(sys.argv[5])
        guard.restore()
    except Exception:
        pass  # the state folder goes anyway
shutil.rmtree(state, ignore_errors=True)
"""


_PYTHON = (sys.executable, "-I", "-S", "-c")


class Watchdog:
    """The watchdog of one gateway process group; `release()` when ClawSpec stopped it."""

    def __init__(
        self, pgid: int, state_dir: Path, grace_s: float, bootstrap: BootstrapGuard | None = None
    ) -> None:
        read, self._write = os.pipe()  # not inherited by later children (PEP 446)
        restore = [bootstrap_files.__file__, bootstrap.to_json()] if bootstrap else []
        try:
            self._proc = subprocess.Popen(
                # Isolated, without site: nothing of the user's environment, started at once.
                [*_PYTHON, WATCHDOG, str(pgid), str(state_dir), str(grace_s), *restore],
                stdin=read,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            os.close(read)

    def release(self) -> None:
        """The gateway is stopped: the watchdog leaves without touching anything."""
        if self._write < 0:
            return
        with contextlib.suppress(OSError):
            os.write(self._write, b"x")
        os.close(self._write)
        self._write = -1
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
