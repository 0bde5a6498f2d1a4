"""What the benchmarks share: generated suites, the fake gateway process, timed child processes,
medians with their spread, and one printed row per figure (value, goal, ratio).

Machines here are shared and noisy: every figure is the median of several repeats, printed with
its spread (min-max), and ClawSpec is always measured side by side with its limit (the bare
hook loop, or `python -c pass`) in the same run.
"""

from __future__ import annotations

import compileall
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = str(ROOT / ".venv" / "bin" / "python")
TOKEN = "bench-token-0123456789"
LOG = "logs/openclaw.log"
TIMELINE = "timeline.txt"  # the gateway fake's 'arrived answered' line per hook run
QUICK = os.environ.get("CLAWSPEC_BENCH_QUICK") == "1" or "--quick" in sys.argv
# Another checkout of ClawSpec to measure instead of this one (e.g. the code before a change):
# its folder goes first on the children's PYTHONPATH.
SOURCE = os.environ.get("CLAWSPEC_BENCH_SOURCE")
# The command as a user runs it (the console script); another checkout's code runs as
# `python -m clawspec`, since its CLI may lack the entry point this venv's script names (`-P`:
# run from this checkout's folder, it would otherwise import this checkout's package).
CLAWSPEC = (
    [PYTHON, "-P", "-m", "clawspec"] if SOURCE else [str(ROOT / ".venv" / "bin" / "clawspec")]
)
# Measured as installed: pip compiles a package's modules when it installs it. Without this, with
# PYTHONDONTWRITEBYTECODE set (as on this project's machines), every measured process would
# compile ClawSpec's sources again (~0.06 s of `validate`, more of `run`), and a checkout with
# more code would look slower for that alone.
compileall.compile_dir(Path(SOURCE or ROOT) / "clawspec", quiet=1)

SCENARIO = """  - name: s{i}
    when: {{invoke: "go [write:out/s{i}.md]"}}
    then:
      - {{type: artifact_exists, path: out/s{i}.md}}
      - {{type: artifact_contains, path: out/s{i}.md, sections: [hook, cta], fields: [title]}}
      - {{type: log_entry, path: {log}, pattern: "hook:clawspec:{{{{run_id}}}}"}}
      - {{type: tool_was_called, tool: write}}
      - {{type: log_entry, path: {log}, pattern: "embedded run done", run_id: "{{{{run_id}}}}"}}
"""
# The scale suite: file assertions and a run-scoped log assertion (no un-scoped log_entry, whose
# cost once grew with the square of the suite and could not be run at 10,000).
FILE_AND_LOG = """  - name: s{i}
    given: [{{type: file_present, path: SKILL.md}}]
    when: {{invoke: "go [write:out/s{i}.md]"}}
    then:
      - {{type: artifact_exists, path: out/s{i}.md}}
      - {{type: artifact_contains, path: out/s{i}.md, sections: [hook, cta], fields: [title]}}
      - {{type: state_file, path: state.yaml, expected_fields: {{phase: done}}}}
      - {{type: tool_was_called, tool: write}}
"""


def write_suite(root: Path, scenarios: int, targets: int = 20, template: str = SCENARIO) -> None:
    """A workspace with `scenarios` scenarios spread over `targets` skill contracts; each carries
    artifact assertions, an un-scoped `log_entry` on the shared gateway log, and run-scoped log
    assertions (like the suite the runner's cost was first measured with)."""
    (root / "SKILL.md").write_text("# skill\n")
    (root / "state.yaml").write_text("phase: done\n")
    (root / "clawspec.yaml").write_text(f"report_dir: reports\ngateway_log_pattern: {LOG}\n")
    per = -(-scenarios // targets)
    for t in range(targets):
        numbers = range(t * per, min(scenarios, (t + 1) * per))
        if not numbers:
            break
        body = "".join(template.format(i=i, log=LOG) for i in numbers)
        folder = root / "skills" / f"skill-{t:02d}" / "tests"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "scenarios.yaml").write_text(
            f'version: "1.0"\ntarget: {{type: skill, path: skills/skill-{t:02d}}}\n'
            f"scenarios:\n{body}"
        )


@dataclass(frozen=True)
class ChildRun:
    seconds: float
    max_rss_mb: float
    returncode: int
    stdout: str
    cpu_s: float = 0.0  # user + system CPU time of the process
    # From the gateway fake's timeline: process start -> first hook request arrives, and last
    # answer -> process end (where a run differs from the bare loop outside the runs).
    start_s: float = 0.0
    tail_s: float = 0.0


def run_child(argv: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> ChildRun:
    """Run a process; its wall time and peak RSS (from wait4, the child's own rusage)."""
    wall_start = time.time()
    started = time.perf_counter()
    child = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    out = child.stdout.read() if child.stdout else ""
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    wall_end = time.time()
    cpu = usage.ru_utime + usage.ru_stime
    start_s = tail_s = 0.0
    timeline = cwd / TIMELINE  # written by the gateway fake, when one served this process
    if timeline.exists():
        runs = [tuple(map(float, line.split())) for line in timeline.read_text().splitlines()]
        if runs:
            start_s = min(arrived for arrived, _ in runs) - wall_start
            tail_s = wall_end - max(answered for _, answered in runs)
    return ChildRun(seconds, usage.ru_maxrss / 1024, child.returncode, out, cpu, start_s, tail_s)


@contextmanager
def fake_gateway(workspace: Path, latency_s: float) -> Iterator[str]:
    """Start benchmarks/gateway_fake.py in its own process; yield its base URL."""
    child = subprocess.Popen(
        [PYTHON, str(ROOT / "benchmarks" / "gateway_fake.py"), "--workspace", str(workspace),
         "--log", str(workspace / LOG), "--latency", str(latency_s), "--token", TOKEN,
         "--timeline", str(workspace / TIMELINE)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        url = child.stdout.readline().strip() if child.stdout else ""
        yield url
    finally:
        child.terminate()
        child.wait(10)


def child_env(**extra: str) -> dict[str, str]:
    """The environment of measured children (CLAWSPEC_BENCH_SOURCE honoured)."""
    env = dict(os.environ, **extra)
    if SOURCE:
        env["PYTHONPATH"] = SOURCE
    return env


def clawspec_env(url: str) -> dict[str, str]:
    env = child_env(CLAWSPEC_HOOKS_TOKEN=TOKEN, CLAWSPEC_GATEWAY_BASE_URL=url)
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "CI"):
        env.pop(name, None)
    return env


# `root` is appended to the path, not put first: with CLAWSPEC_BENCH_SOURCE the loading loop
# imports that checkout's `clawspec` (first on PYTHONPATH), never this one's.
BARE_LOOP = """
import sys, requests
from concurrent.futures import ThreadPoolExecutor
sys.path.append({root!r})
from benchmarks.gateway_fake import hook_body
url, n, c, token = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
{load}
http = requests.Session()
http.mount("http://", requests.adapters.HTTPAdapter(pool_maxsize=c))
def one(i):
    body = hook_body(f"go [write:out/s{{i}}.md]", f"s{{i}}", f"hook:clawspec:bare{{i}}")
    answer = http.post(url + "/hooks/agent", json=body, timeout=60,
                       headers={{"Authorization": "Bearer " + token}})
    assert answer.json()["completion"]["status"] == "ok"
with ThreadPoolExecutor(c) as pool:
    list(pool.map(one, range(n)))
"""

# Read and validate every contract of the workspace as `clawspec run` does before its first hook
# request (the CLI's pydantic setting included), and check that all scenarios loaded.
LOAD_FIRST = """
import os
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
from clawspec import api
loaded = api.load(["."])
assert sum(len(c.contract.scenarios) for c in loaded.contracts) == n, "suite not loaded whole"
"""


def bare_loop(
    workspace: Path, scenarios: int, concurrency: int, latency_s: float, load: bool = False
) -> ChildRun:
    """The limit: the same hook requests at the same concurrency, nothing else (its own
    process, interpreter start and `import requests` included, like `clawspec run`).

    `load`: first read and validate the suite in `workspace` as every run must before its
    first hook request (`clawspec.api.load`), then the same loop: the least a run that checks
    every contract before it starts can cost (the suite's scenario count is asserted)."""
    with fake_gateway(workspace, latency_s) as url:
        code = BARE_LOOP.format(root=str(ROOT), load=LOAD_FIRST if load else "")
        argv = [PYTHON, "-c", code, url, str(scenarios), str(concurrency), TOKEN]
        return run_child(argv, workspace, child_env() if load else None)


def clawspec_run(workspace: Path, concurrency: int, latency_s: float) -> ChildRun:
    """`clawspec run` over the suite in `workspace` against a fresh fake gateway."""
    with fake_gateway(workspace, latency_s) as url:
        argv = [*CLAWSPEC, "run", "--concurrency", str(concurrency)]
        return run_child(argv, workspace, clawspec_env(url))


def report_of(workspace: Path) -> dict:
    return json.loads((workspace / "reports" / "clawspec-report.json").read_text())


@dataclass(frozen=True)
class Figure:
    samples: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def spread(self, unit: str, scale: float = 1.0, digits: int = 2) -> str:
        low, high = min(self.samples) * scale, max(self.samples) * scale
        return f"{low:.{digits}f}-{high:.{digits}f} {unit}"


def repeat(times: int, measure: Callable[[], float]) -> Figure:
    return Figure([measure() for _ in range(times)])


def row(name: str, value: str, spread: str, goal: str, extra: str = "") -> None:
    """One figure: name, median, spread of the repeats, goal (and a ratio or note)."""
    print(f"  {name:<44} {value:>11}  [{spread:>17}]  goal {goal:<10} {extra}", flush=True)


def fresh(folder: Path, name: str) -> Path:
    path = folder / name
    path.mkdir(parents=True)
    return path
