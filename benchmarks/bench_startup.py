"""Start-up: what every `clawspec` call pays before doing anything.

Times `clawspec --version`, `clawspec --help` and `clawspec validate examples` as a user runs
them (the installed entry point, a fresh process each time), next to `python -c pass` (the
interpreter's own floor) in the same run. Medians of several repeats, with the spread.

    .venv/bin/python benchmarks/bench_startup.py [--quick]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import CLAWSPEC, PYTHON, QUICK, ROOT, child_env, repeat, row, run_child

CASES = [
    ("python -c pass (the floor)", [PYTHON, "-c", "pass"], "-"),
    ("clawspec --version", [*CLAWSPEC, "--version"], "< 0.05 s"),
    ("clawspec --help", [*CLAWSPEC, "--help"], "< 0.1 s"),
    ("clawspec validate examples", [*CLAWSPEC, "validate", "examples"], "< 0.3 s"),
]


def main() -> None:
    times = 7 if QUICK else 15
    env = child_env()
    print(f"start-up: {times} runs each, interleaved; fresh process each time")
    samples: dict[str, list[float]] = {name: [] for name, _, _ in CASES}
    for _ in range(times):  # interleaved, so load spikes hit every case alike
        for name, argv, _ in CASES:
            result = run_child(argv, ROOT, env)
            if result.returncode != 0:
                raise SystemExit(f"{name} failed: {result.stdout}")
            samples[name].append(result.seconds)
    floor = repeat(0, float)
    for name, _, goal in CASES:
        figure = type(floor)(samples[name])
        floor = floor if floor.samples else figure
        extra = "" if figure is floor else f"({figure.median - floor.median:+.3f} s over python)"
        row(name, f"{figure.median:.3f} s", figure.spread("s", digits=3), goal, extra)


if __name__ == "__main__":
    main()
