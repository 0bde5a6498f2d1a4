"""The dir: history store: save, list and choose a baseline among many stored runs.

Run: .venv/bin/python benchmarks/bench_history.py [runs] [scenarios]
Prints wall times of saving each run, listing a branch (index read), listing with an index that
lost every entry (each report read instead), loading the baseline and the trend window (14 runs),
and the baseline choice for a pull request in a real git repository; asserts nothing.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clawspec.ci_context import CIContext
from clawspec.config.settings import Settings
from clawspec.history.baseline import find_baseline, recent_runs
from clawspec.history.dirstore import dir_store
from clawspec.history.git import Git
from clawspec.reports.model import RunSource
from tests.history.factory import git, past_run
from tests.reports.factory import report, scenario

NO_CI = CIContext.from_environ({})  # a run outside CI


def big_run(index: int, scenarios: int, commit: str):
    base = report(*(scenario(f"s{i:05d}", "pass") for i in range(scenarios)))
    small = past_run("main", commit, "2026-01-01T00:00:00+00:00", f"run-{index:04d}")
    day = f"2026-{1 + index // 28:02d}-{1 + index % 28:02d}T03:17:00+00:00"
    return base.model_copy(
        update={"run_id": small.run_id, "source": small.source, "started_at": day}
    )


def timed(label: str, action, count: int = 1) -> object:
    start = time.perf_counter()
    result = action()
    elapsed = time.perf_counter() - start
    per = f"  {elapsed * 1000 / count:8.2f} ms each" if count > 1 else ""
    print(f"{label:<44} {elapsed * 1000:9.1f} ms{per}")
    return result


if __name__ == "__main__":
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    scenarios = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = root / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        commits = []
        for i in range(runs):
            git(repo, "commit", "-q", "--allow-empty", "-m", f"c{i}")
            commits.append(git(repo, "rev-parse", "HEAD"))
        git(repo, "update-ref", "refs/remotes/origin/main", commits[-1])
        git(repo, "checkout", "-q", "-b", "feature", commits[runs // 2])
        git(repo, "commit", "-q", "--allow-empty", "-m", "pr")
        head = git(repo, "rev-parse", "HEAD")
        store = dir_store("hist", root)
        reports = [big_run(i, scenarios, commits[i]) for i in range(runs)]
        print(f"{runs} stored runs of {scenarios} scenarios each")
        timed("save every run", lambda: [store.save(r) for r in reports], runs)
        timed("list the branch (index)", lambda: store.runs("main"))
        index = root / "hist/main/index.json"
        saved = index.read_bytes()
        index.write_text('{"runs": []}', encoding="utf-8")
        timed("list the branch (index lost: read reports)", lambda: store.runs("main"))
        index.write_bytes(saved)
        settings = Settings(baseline="dir:hist")
        source = RunSource(commit=head, branch="feature", base_branch="main", pull_request=1)
        import os

        os.chdir(root)
        timed(
            "choose + load the PR baseline (git ancestry)",
            lambda: find_baseline("dir:hist", source, settings, NO_CI, git=Git(repo)),
        )
        schedule = RunSource(commit=commits[-1], branch="main", event="schedule")
        timed(
            "choose + load the nightly baseline",
            lambda: find_baseline("dir:hist", schedule, settings, NO_CI),
        )
        timed(
            "load the trend window (14 runs)",
            lambda: recent_runs("dir:hist", "main", 14, settings, NO_CI),
        )
