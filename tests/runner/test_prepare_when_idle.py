"""The reports are got ready while the agents run: the reporting loop calls `when_idle` once,
the first time nothing finished for 0.1 s after a first scenario did, and never otherwise;
`finish.prepare` imports what the end of a run needs and builds the deferred report schema.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from clawspec.runner.run import _Either, _report_until_done

ROOT = Path(__file__).resolve().parents[2]


class ScriptedWaits:
    """A stand-in for the loop's condition: each wait adds the scenarios its step names to
    `finished` and says whether it was woken (True) or timed out (False); the worker ends with
    the script."""

    def __init__(self, finished: list[int], steps: list[tuple[bool, list[int]]]) -> None:
        self.finished = finished
        self.steps = list(steps)

    def __enter__(self) -> ScriptedWaits:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def wait(self, timeout: float) -> bool:
        woken, indexes = self.steps.pop(0)
        self.finished.extend(indexes)
        return woken

    def is_alive(self) -> bool:  # the worker: alive while the script lasts
        return bool(self.steps)


def _loop(steps: list[tuple[bool, list[int]]]) -> list[str]:
    """Run the reporting loop over the script; what happened, in order."""
    finished: list[int] = []
    waits = ScriptedWaits(finished, steps)
    events: list[str] = []
    _report_until_done(
        [waits],  # type: ignore[list-item]
        waits,  # type: ignore[arg-type]
        finished,
        lambda index: events.append(f"report {index}"),
        _Either(threading.Event()),
        threading.Event(),
        threading.Event(),
        lambda: events.append("idle"),
    )
    return events


def test_idle_after_a_first_result_runs_once() -> None:
    steps = [(True, [0]), (False, []), (True, [1]), (False, []), (True, [2])]
    assert _loop(steps) == ["report 0", "idle", "report 1", "report 2"]


def test_not_before_a_first_result_nor_while_results_come() -> None:
    # Idle before anything finished (the first runs may not be out yet), then never idle.
    steps = [(False, []), (False, []), (True, [0]), (True, [1]), (True, [2])]
    assert _loop(steps) == ["report 0", "report 1", "report 2"]


def test_prepare_builds_the_report_schema_and_imports_the_end() -> None:
    code = (
        "import json, sys\n"
        "from clawspec.runner.finish import prepare\n"
        "from clawspec.reports.model import RunReport\n"
        "before = RunReport.__pydantic_complete__\n"
        "prepare()\n"
        "print(json.dumps([before, RunReport.__pydantic_complete__,\n"
        "    all(m in sys.modules for m in ('clawspec.reports.json_report',\n"
        "        'clawspec.reports.outcome', 'clawspec.history.source'))]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False, True, True]
