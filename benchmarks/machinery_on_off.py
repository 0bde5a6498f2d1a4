"""Does each piece of speed machinery pay? The same commands with each piece on and off.

Builds copies of this checkout's `clawspec` package in a temporary folder, each with one piece
switched off by a small source edit (all on, parsing ahead off, compact results off, collector
pause off, the quick process exit off, all off), and runs, interleaved so that load spikes hit
every copy alike, what a user sees:

- `validate` of 10,000 and 1,000 generated scenarios (20 contracts) and of `examples/`;
- `run` of 10,000 and of 1,000 scenarios against the gateway fake (20 ms a run, concurrency 16);
- `run` of 160 scenarios whose agent runs take 2 s each (concurrency 16): a real suite.

Prints each copy's median wall time, CPU time (steadier than wall time on a shared machine) and
peak RSS with their spread and the change against all on. Asserts nothing. Takes about half an
hour with the defaults; run_all.sh runs the 1,000-scenario and `examples/` cases:

    .venv/bin/python benchmarks/machinery_on_off.py [--repeats 3] [--cases validate-10k,...]
        [--variants "process-exit off,..."]
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import (
    FILE_AND_LOG,
    PYTHON,
    ROOT,
    SCENARIO,
    SOURCE,
    TIMELINE,
    TOKEN,
    ChildRun,
    Figure,
    fake_gateway,
    run_child,
    write_suite,
)

PAUSED = "enabled = gc.isenabled()\n    gc.disable()\n    try:\n        yield\n    finally:"
# Each piece, switched off by replacing one text of its source (the edit must apply).
EDITS: dict[str, list[tuple[str, str, str]]] = {
    "parse-ahead": [("api.py", "enabled = parse_ahead.allowed()", "enabled = False")],
    "compact-results": [("reports/kept.py", "COMPACT_FROM = 2000 ", "COMPACT_FROM = 10**9 ")],
    "collector-pause": [("speed/collector.py", PAUSED, "yield\n    if False:")],
    "process-exit": [("cli.py", "leave(main())", "sys.exit(main())")],
}
VARIANTS = {"all on": [], **{f"{name} off": [name] for name in EDITS}, "all off": list(EDITS)}


def build(folder: Path, pieces_off: list[str]) -> Path:
    """A copy of the package with `pieces_off` switched off; returns its PYTHONPATH entry."""
    source = Path(SOURCE or ROOT) / "clawspec"
    target = folder / "clawspec"
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    for piece in pieces_off:
        for name, old, new in EDITS[piece]:
            path = target / name
            text = path.read_text("utf-8")
            if old not in text:
                raise SystemExit(f"{piece}: {old!r} is no longer in clawspec/{name}")
            path.write_text(text.replace(old, new, 1), "utf-8")
    compileall.compile_dir(target, quiet=1)
    return folder


def _env(path: Path, url: str | None = None) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(path))
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "CI"):
        env.pop(name, None)
    if url:
        env.update(CLAWSPEC_HOOKS_TOKEN=TOKEN, CLAWSPEC_GATEWAY_BASE_URL=url)
    return env


def validate(path: Path, workspace: Path, target: str = ".") -> ChildRun:
    return run_child([PYTHON, "-m", "clawspec", "validate", target], workspace, _env(path))


def run(path: Path, workspace: Path, latency_s: float) -> ChildRun:
    for name in ("reports", "out", "logs"):
        shutil.rmtree(workspace / name, ignore_errors=True)
    (workspace / TIMELINE).unlink(missing_ok=True)
    with fake_gateway(workspace, latency_s) as url:
        argv = [PYTHON, "-m", "clawspec", "run", "--concurrency", "16"]
        return run_child(argv, workspace, _env(path, url))


Case = tuple[int, str, Callable[[Path, Path], ChildRun]]  # scenarios, template, command
CASES: dict[str, Case] = {
    "validate-10k": (10000, FILE_AND_LOG, validate),
    "validate-1k": (1000, FILE_AND_LOG, validate),
    # From the case's own folder: in this checkout's, `python -m` would import its package
    # (the current folder comes first on sys.path), not the copy measured.
    "validate-examples": (0, "", lambda path, ws: validate(path, ws, str(ROOT / "examples"))),
    "run-10k": (10000, FILE_AND_LOG, lambda path, ws: run(path, ws, 0.02)),
    "run-1k": (1000, FILE_AND_LOG, lambda path, ws: run(path, ws, 0.02)),
    "run-real": (160, SCENARIO, lambda path, ws: run(path, ws, 2.0)),
}
# A piece that cannot act in a case is not measured there (validate neither keeps results nor
# runs; 160 scenarios stay below the compact threshold).
IDLE = {
    "validate": ["compact-results off"],
    "run-real": ["compact-results off"],
    "run-1k": ["compact-results off"],
}


def measure(name: str, copies: dict[str, Path], repeats: int, folder: Path) -> None:
    scenarios, template, command = CASES[name]
    workspace = folder / name
    workspace.mkdir()
    if scenarios:
        write_suite(workspace, scenarios, template=template)
    idle = [v for key, names in IDLE.items() if name.startswith(key) for v in names]
    variants = [v for v in copies if v not in idle]
    samples: dict[str, list[ChildRun]] = {v: [] for v in variants}
    for _ in range(repeats):
        for variant in variants:
            result = command(copies[variant], workspace)
            if result.returncode != 0:
                raise SystemExit(f"{name}, {variant}: {result.stdout[-2000:]}")
            samples[variant].append(result)
    print(f"{name}: {repeats} repeats, interleaved")
    base_wall = Figure([r.seconds for r in samples["all on"]]).median
    base_rss = Figure([r.max_rss_mb for r in samples["all on"]]).median
    base_cpu = Figure([r.cpu_s for r in samples["all on"]]).median
    for variant, runs in samples.items():
        wall, rss = Figure([r.seconds for r in runs]), Figure([r.max_rss_mb for r in runs])
        cpu = Figure([r.cpu_s for r in runs])  # steadier than wall time on a busy machine
        print(
            f"  {variant:<22} wall {wall.median:8.3f} s [{wall.spread('s', digits=3):>17}]"
            f" {wall.median / base_wall - 1:+7.1%}   CPU {cpu.median:7.3f} s"
            f" {cpu.median / base_cpu - 1:+7.1%}   peak RSS {rss.median:6.1f} MB"
            f" [{rss.spread('MB', digits=1):>15}] {rss.median / base_rss - 1:+7.1%}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--variants", help="only these, e.g. 'all on,process-exit off'")
    args = parser.parse_args()
    chosen = args.variants.split(",") if args.variants else list(VARIANTS)
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        copies = {
            variant: build(folder / f"copy{n}", off)
            for n, (variant, off) in enumerate(VARIANTS.items())
            if variant in chosen or variant == "all on"
        }
        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
        for name in args.cases.split(","):
            measure(name, copies, args.repeats, folder)


if __name__ == "__main__":
    main()
