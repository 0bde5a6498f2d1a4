"""What `--changed-since` costs before the first agent runs: a git repository with N contracts of
10 scenarios each (every one in its own skill folder, a golden file each), one SKILL.md edited;
prints the time to load, to list the changes and to select, and how many scenarios were kept.

    .venv/bin/python benchmarks/bench_changed.py [N]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from clawspec import api
from clawspec.ci_context import CIContext
from clawspec.selection.changed import select_changed

SCENARIO = """  - name: case-{i}
    when: {{invoke: "x"}}
    then:
      - {{type: artifact_matches_golden, path: "out/{{{{run_id}}}}.md", golden: golden/{n}.md}}
"""


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@example.invalid", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def main(contracts: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "clawspec.yaml").write_text("report_dir: reports\n")
        (root / "golden").mkdir()
        for n in range(contracts):
            skill = root / "skills" / f"s{n}"
            (skill / "tests").mkdir(parents=True)
            (skill / "SKILL.md").write_text(f"# skill {n}\n")
            (root / "golden" / f"{n}.md").write_text("gold\n")
            body = "".join(SCENARIO.format(i=i, n=n) for i in range(10))
            (skill / "tests" / "scenarios.yaml").write_text(
                f'version: "1.0"\ntarget: {{type: skill, path: skills/s{n}}}\nscenarios:\n{body}'
            )
        _git(root, "init", "-q")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "suite")
        (root / "skills" / "s7" / "SKILL.md").write_text("# edited\n")
        start = time.perf_counter()
        loaded = api.load([root], flags={"changed_since": "HEAD"})
        plans = api.plan(loaded)
        loaded_s = time.perf_counter() - start
        start = time.perf_counter()
        chosen = select_changed(plans, loaded.settings, loaded.workspace, CIContext())
        select_s = time.perf_counter() - start
        print(
            f"{len(plans):,} scenarios: load {loaded_s:.2f} s, select {select_s:.2f} s "
            f"({select_s / len(plans) * 1e6:.0f} µs a scenario, git included); kept "
            f"{len(chosen.plans)}"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
