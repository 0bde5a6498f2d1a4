"""What the runner hands the hooks client to ask before retrying a 502: the scenario's lines of
the gateway log decide (tests/gateway/test_refused_for_good.py covers the reading itself), and
the log readers are imported only when a 502 is asked about, not before the first hook request.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

from clawspec.runner.scenario import _refusal_watch
from tests.gateway.test_refused_for_good import SESSION_KEY, _not_ready_lines, _preflight_lines

ROOT = Path(__file__).resolve().parents[2]


def _ctx(log: Path | None, offset: int = 0) -> SimpleNamespace:
    """The parts of a scenario's EvalContext the watch reads."""
    evidence = SimpleNamespace(gateway_log=log, log_offset=offset, log_inode=None)
    run = SimpleNamespace(run_id="c1a5e2d4", session_key=SESSION_KEY, started_at=datetime.now(UTC))
    return SimpleNamespace(evidence=evidence, run=run, stop=threading.Event())


def test_a_refusal_in_the_scenarios_lines_is_final(tmp_path: Path) -> None:
    log = tmp_path / "openclaw.log"
    earlier = _preflight_lines("0a0a0a0a-0000-4000-8000-000000000000", "hook:clawspec:other")
    log.write_text(earlier, "utf-8")
    watch = _refusal_watch(_ctx(log, offset=len(earlier.encode())))  # type: ignore[arg-type]
    assert watch is not None
    assert not watch([], 0.0)  # nothing of this run yet (another run's refusal is before it)
    refused = "5b5b5b5b-0000-4000-8000-000000000000"
    with log.open("a", encoding="utf-8") as handle:
        handle.write(_not_ready_lines(refused, SESSION_KEY))
    assert not watch([refused], 0.0)  # a gateway not ready: retried
    with log.open("a", encoding="utf-8") as handle:
        handle.write(_preflight_lines(refused, SESSION_KEY))
    assert watch([refused], 0.0)  # the provider's preflight failed: final


def test_without_a_gateway_log_there_is_no_watch() -> None:
    assert _refusal_watch(_ctx(None)) is None  # type: ignore[arg-type]


def test_the_log_readers_are_imported_only_when_asked(tmp_path: Path) -> None:
    log = tmp_path / "openclaw.log"
    log.write_text("", "utf-8")
    code = (
        "import json, sys, threading\n"
        "from datetime import UTC, datetime\n"
        "from types import SimpleNamespace as N\n"
        "from clawspec.runner.scenario import _refusal_watch\n"
        f"ev = N(gateway_log=__import__('pathlib').Path({str(log)!r}), log_offset=0, "
        "log_inode=None)\n"
        "run = N(run_id='r', session_key='k', started_at=datetime.now(UTC))\n"
        "watch = _refusal_watch(N(evidence=ev, run=run, stop=threading.Event()))\n"
        "before = 'clawspec.gateway.run_failure' in sys.modules\n"
        "answer = watch(['g'], 0.0)\n"
        "print(json.dumps([before, answer, 'clawspec.gateway.run_failure' in sys.modules]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False, False, True]
