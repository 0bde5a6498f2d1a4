"""The README's main command on a fresh clone: `bash scripts/demo.sh` with OpenClaw already in the
per-user cache, so nothing but the demo itself creates the clone's `.cache/`.

The clone is made with `git clone` of this repository (its committed tree). pip installs from the
wheelhouse scripts/test.sh prepared (.cache/wheelhouse), since nothing can be downloaded inside the
loopback-only namespace; the demo then enters a namespace of its own for the gateway. The case
with an empty cache needs the npm registry and is shown by hand (docs/internals.md).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from clawspec.gateway.install import OPENCLAW_VERSION, install_dir
from tests.e2e.conftest import IN_CI, kept_gateway_log

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
WHEELHOUSE = REPO / ".cache" / "wheelhouse"


def _unavailable(reason: str) -> None:
    if IN_CI:
        pytest.fail(reason, pytrace=False)  # in CI a missing prerequisite is a failure
    pytest.skip(reason)


def test_demo_runs_on_a_fresh_clone_with_openclaw_cached(
    openclaw_launcher: str, tmp_path: Path
) -> None:
    if not WHEELHOUSE.is_dir():
        _unavailable(f"no wheelhouse in {WHEELHOUSE}: run `bash scripts/test.sh --co` first")
    cached = install_dir(OPENCLAW_VERSION)
    if not (cached / "bin" / "openclaw").exists():
        _unavailable(f"OpenClaw {OPENCLAW_VERSION} is not in the per-user cache ({cached})")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    assert not (clone / ".cache").exists()  # what a fresh clone looks like: no .cache/ at all

    env = {
        **os.environ,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(WHEELHOUSE),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    env.pop("CLAWSPEC_OPENCLAW_BIN", None)  # the demo finds OpenClaw in the cache itself
    proc = subprocess.run(
        ["bash", "scripts/demo.sh"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    out = proc.stdout + proc.stderr
    finished = "demo finished: every scenario ended as designed" in proc.stdout
    if proc.returncode != 0 or not finished:
        out += _gateway_account(clone / ".cache" / "demo" / "clawspec-reports")
    assert proc.returncode == 0, out
    assert finished, out
    report = json.loads(
        (clone / ".cache" / "demo" / "clawspec-reports" / "clawspec-report.json").read_text("utf-8")
    )
    assert report["scenarios"], "the demo ran no scenario"


# What the gateway's kept log says about sub-agents and its queues: a scenario whose sub-agent
# "never started" on a busy machine is explained there, and the clone is gone after the test.
_TOLD = ("spawn", "subagent", "lane", "error")


def _gateway_account(reports: Path, lines: int = 80) -> str:
    try:
        kept = kept_gateway_log(reports)
        text = kept.read_text("utf-8", errors="replace")
    except (OSError, ValueError) as exc:  # no log, or not one run's
        return f"\n(no gateway log kept in {reports}: {exc})"
    told = [line[:400] for line in text.splitlines() if any(w in line.lower() for w in _TOLD)]
    return f"\n--- {kept.name}, its lines on sub-agents and queues (last {lines}) ---\n" + (
        "\n".join(told[-lines:])
    )
