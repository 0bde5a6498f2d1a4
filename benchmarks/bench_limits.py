"""Benchmark the limits on huge inputs: each case answers within seconds, in bounded memory.

1. `artifact_matches_golden` with a 100 MB golden file against a 60-byte artifact: over
   `limits.file_max_bytes` (16 MiB), an `error` verdict; the file is not read.
2. `artifact_matches_golden` at the largest comparison the defaults allow: two texts of
   `limits.rouge_max_tokens` (100,000) words each (ROUGE-L's LCS, bit-parallel).
3. `tool_was_called` with an explicit `log_path` to a 500 MB gateway log whose size was not
   recorded when the run started: only the last `limits.log_tail_bytes` (32 MiB) are read,
   and the run's lines at the end are found.
4. `clawspec validate` of a YAML alias bomb ("billion laughs", under 1 KB).

Each case runs in its own process (wall time and peak RSS from wait4). The files are generated
in a temporary folder (after checking free disk) and deleted afterwards.

Run: .venv/bin/python benchmarks/bench_limits.py [--golden-mb 100] [--log-mb 500]
Prints numbers only (no assertions).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.gateway_fake import line, run_lines
from benchmarks.harness import CLAWSPEC, PYTHON, ChildRun, row, run_child

# Evaluates one assertion (JSON on argv[2]) in workspace argv[1], as a scenario's run would.
EVALUATE = """
import json, sys, threading, time
from datetime import UTC, datetime
from pathlib import Path
import requests
from clawspec.assertions.base import EvalContext, RunInfo
from clawspec.assertions.registry import REGISTRY
from clawspec.config.settings import Settings
from clawspec.evidence.store import Evidence

data = json.loads(sys.argv[2])
ctx = EvalContext(
    workspace=Path(sys.argv[1]), settings=Settings(),
    run=RunInfo("bench", "benchrun00000001", datetime.now(UTC)),
    evidence=Evidence(requests.Session()), poll_interval_s=0.05, stop=threading.Event(),
    timeout_s=5.0,
)
verdict = REGISTRY[data["type"]].model.model_validate(data).evaluate(ctx)
print(verdict.status.value, verdict.message)
"""

PROSE = (
    "Our spring newsletter covers the garden club meeting, the seed swap on Saturday, "
    "and a short note on watering schedules during the dry weeks ahead.\n"
)


def _check_disk(folder: Path, needed_mb: int) -> None:
    free = shutil.disk_usage(folder).free // (1024 * 1024)
    if free < needed_mb * 2:
        raise SystemExit(f"not enough free disk in {folder}: {free} MB, need {needed_mb * 2}")


def _write_repeated(path: Path, text: str, size_mb: int) -> None:
    block = text * max(1, (1024 * 1024) // len(text))
    with path.open("w", encoding="utf-8") as handle:
        while handle.tell() < size_mb * 1024 * 1024:
            handle.write(block)


def _write_log(path: Path, size_mb: int) -> str:
    """~size_mb of other runs and heartbeats; the scenario's run is at the end."""
    noise = line("diagnostic", "heartbeat: webhooks=0/0/0 active=0 waiting=0 queued=0", None, "",
                 None)  # fmt: skip
    with path.open("w", encoding="utf-8") as handle:
        written, target = 0, size_mb * 1024 * 1024
        while written < target:
            runs = (run_lines(str(uuid.uuid4()), ["read", "write", "exec"]) for _ in range(20))
            written += handle.write("".join(text for run in runs for text in run) + noise * 100)
        scenario = str(uuid.uuid4())
        handle.write("".join(run_lines(scenario, ["read", "write"])))
    return scenario


def _evaluate(workspace: Path, assertion: str) -> ChildRun:
    return run_child([PYTHON, "-c", EVALUATE, str(workspace), assertion], workspace)


def _show(name: str, child: ChildRun, goal: str) -> None:
    verdict = child.stdout.strip().splitlines()[-1] if child.stdout.strip() else "(no output)"
    row(name, f"{child.seconds:.2f} s", f"{child.max_rss_mb:.0f} MB peak RSS", goal)
    print(f"    -> {verdict[:160]}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--golden-mb", type=int, default=100)
    parser.add_argument("--log-mb", type=int, default=500)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="clawspec-bench-limits-"))
    try:
        _check_disk(root, args.golden_mb + args.log_mb)
        (root / "golden").mkdir()
        _write_repeated(root / "golden" / "big.md", PROSE, args.golden_mb)
        (root / "out.md").write_text("Spring newsletter: seed swap on Saturday, garden club.\n")
        big = '{"type": "artifact_matches_golden", "path": "out.md", "golden": "golden/big.md"}'
        _show(f"golden {args.golden_mb} MB vs 60-byte artifact", _evaluate(root, big), "< 2 s")
        (root / "golden" / "max.md").write_text(_words(100_000, 0))
        (root / "max.md").write_text(_words(100_000, 7))
        most = '{"type": "artifact_matches_golden", "path": "max.md", "golden": "golden/max.md"}'
        _show("golden 100,000 words vs 100,000 words", _evaluate(root, most), "< 5 s")
        (root / "golden").joinpath("big.md").unlink()

        log = root / "gateway.log"
        scenario = _write_log(log, args.log_mb)
        size = log.stat().st_size // (1024 * 1024)
        called = (
            f'{{"type": "tool_was_called", "tool": "write", "log_path": "{log}", '
            f'"run_id": "{scenario}"}}'
        )
        _show(f"explicit log_path, {size} MB log", _evaluate(root, called), "< 10 s")
        log.unlink()

        bomb = root / "bomb.clawspec.yaml"
        bomb.write_text(_alias_bomb())
        child = run_child([*CLAWSPEC, "validate", str(bomb)], root)
        first = child.stdout.strip().splitlines()[0] if child.stdout.strip() else ""
        row("validate: alias bomb", f"{child.seconds:.2f} s", f"{child.max_rss_mb:.0f} MB peak RSS",
            "< 2 s", f"exit {child.returncode}")  # fmt: skip
        print(f"    -> {first[:160]}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _words(count: int, seed: int) -> str:
    """`count` words over a 5,000-word vocabulary, ten per line."""
    import random

    pick = random.Random(seed)
    words = [f"w{pick.randrange(5000)}" for _ in range(count)]
    return "\n".join(" ".join(words[i : i + 10]) for i in range(0, count, 10)) + "\n"


def _alias_bomb() -> str:
    lines = ['version: "1.0"', "a: &a [" + ", ".join(['"lol"'] * 9) + "]"]
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join([*lines, "target: {type: skill, path: x}", "scenarios: *i", ""])


if __name__ == "__main__":
    main()
