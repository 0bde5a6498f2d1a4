"""The `clawspec` command leaves without Python's teardown, but loses nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

LEAVE = "from clawspec.speed.process_exit import leave\n"


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60
    )


def test_exit_code_buffered_output_and_exit_handlers_survive_the_quick_exit() -> None:
    done = _python(
        "import atexit, sys, tempfile, pathlib\n"
        "folder = tempfile.TemporaryDirectory()\n"  # removed by its finalizer at exit
        "print(folder.name)\n"
        "atexit.register(lambda: print('handler ran'))\n"
        "sys.stdout.write('no newline, still buffered')\n"
        "sys.stderr.write('to stderr')\n" + LEAVE + "leave(3)\n"
    )
    assert done.returncode == 3
    folder, rest = done.stdout.split("\n", 1)
    assert rest == "no newline, still bufferedhandler ran\n"
    assert done.stderr == "to stderr"
    assert not Path(folder).exists()


def test_a_running_non_daemon_thread_is_waited_for_as_usual() -> None:
    done = _python(
        "import threading, time\n"
        "def late():\n    time.sleep(0.3)\n    print('thread finished', flush=True)\n"
        "threading.Thread(target=late).start()\n" + LEAVE + "leave(0)\n"
    )
    assert done.returncode == 0
    assert done.stdout == "thread finished\n"


def test_the_command_ends_through_it(tmp_path: Path) -> None:
    # `python -m clawspec` (like the console script, cli.entry) leaves through `leave`: the exit
    # handler sees it imported, and the exit code is the command's (2: no contracts found).
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import atexit, runpy, sys\n"
            "atexit.register(lambda: print('clawspec.speed.process_exit' in sys.modules))\n"
            "sys.argv = ['clawspec', 'validate', '.']\n"
            "runpy.run_module('clawspec', run_name='__main__')\n",
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "no contract files found" in done.stderr
    assert done.stdout == "True\n"


def test_a_signal_before_a_command_handles_signals_is_an_interrupt(tmp_path: Path) -> None:
    """SIGTERM or SIGHUP while a command imports or loads, before it handles signals itself
    (`validate` never does): "interrupted" and exit 130, never Python's bare 143 or 129. The
    command is held at its start (a hook in `sitecustomize`) until the signal is sent."""
    import os
    import signal

    (tmp_path / "sitecustomize.py").write_text(
        "import sys, time\n"
        "import clawspec.commands.validate as command\n"
        "def held(args):\n"
        "    print('held', file=sys.stderr, flush=True)\n"
        "    time.sleep(60)\n"
        "command.run = held\n",
        "utf-8",
    )
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(root)])}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        child = subprocess.Popen(
            [sys.executable, "-m", "clawspec", "validate", "."],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert child.stderr is not None
        assert child.stderr.readline() == "held\n"
        child.send_signal(sig)
        _, err = child.communicate(timeout=30)
        assert (child.returncode, err.strip()) == (130, "interrupted"), (sig, err)
