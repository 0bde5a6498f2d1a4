"""init, lint and coverage on a large workspace: 300 skills and 100 agents.

Run: .venv/bin/python benchmarks/bench_authoring.py [skills] [agents]
Prints wall times per command and per file; asserts nothing.
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clawspec.cli import main
from tests.support.openclaw_workspace import BRAND, NEWSLETTER


def build(root: Path, skills: int, agents: int) -> None:
    for i in range(skills):
        folder = root / "skills" / f"skill-{i:04d}"
        folder.mkdir(parents=True)
        text = NEWSLETTER.replace("send-newsletter", f"skill-{i:04d}")
        (folder / "SKILL.md").write_text(text + "\n```bash\ngh pr list | jq .\n```\n" * 20, "utf-8")
    for i in range(agents):
        folder = root / "agents" / f"agent-{i:04d}"
        folder.mkdir(parents=True)
        (folder / "SOUL.md").write_text(BRAND * 10, "utf-8")


def timed(label: str, args: list[str], files: int) -> None:
    sink = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(sink):
        code = main(args)
    elapsed = time.perf_counter() - start
    print(
        f"{label:<10} {elapsed * 1000:8.0f} ms  {elapsed * 1e6 / files:8.0f} µs/file  exit {code}"
    )


if __name__ == "__main__":
    skills = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    agents = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root, skills, agents)
        files = skills + agents
        print(f"workspace: {skills} skills, {agents} agents")
        timed("init", ["init", str(root)], files)
        timed("init again", ["init", str(root)], files)
        timed("lint", ["lint", str(root)], files)
        timed("coverage", ["coverage", str(root)], files)
