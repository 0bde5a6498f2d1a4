"""Scenario outlines: what a table of 1,000 rows costs to load and to run.

Load: `clawspec validate` on one contract holding an outline of 1,000 rows (inline, and read from
a CSV file), next to the same contract written as 1,000 plain scenarios (the command's start-up
included, in its own process). Run: `clawspec run` against the fake gateway
(benchmarks/gateway_fake.py) over 1,000 rows in 20 outlines and over 1,000 plain scenarios, each
side by side with the bare hook loop; the ratios run / bare loop should match. Asserts nothing.

    .venv/bin/python benchmarks/bench_outlines.py [--quick] [--repeats N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import (
    CLAWSPEC,
    LOG,
    QUICK,
    ChildRun,
    Figure,
    bare_loop,
    child_env,
    clawspec_run,
    fresh,
    report_of,
    row,
    run_child,
    write_suite,
)

# The harness's plain scenario (harness.SCENARIO), its number taken from the row.
OUTLINE = """  - name: s
    examples: {rows}
    when: {{invoke: "go [write:out/s{{{{vars.i}}}}.md]"}}
    then:
      - {{type: artifact_exists, path: "out/s{{{{vars.i}}}}.md"}}
      - {{type: artifact_contains, path: "out/s{{{{vars.i}}}}.md", sections: [hook, cta],
          fields: [title]}}
      - {{type: log_entry, path: {log}, pattern: "hook:clawspec:{{{{run_id}}}}"}}
      - {{type: tool_was_called, tool: write}}
      - {{type: log_entry, path: {log}, pattern: "embedded run done", run_id: "{{{{run_id}}}}"}}
"""


def _inline_rows(numbers: range) -> str:
    return "\n" + "".join(f"      - {{id: {i}, i: {i}}}\n" for i in numbers)


def write_outline_suite(root: Path, rows: int, targets: int = 20, csv: bool = False) -> None:
    """Like harness.write_suite, but each target's scenarios are the rows of one outline (row id
    = the plain suite's scenario number, so both suites send the same hook requests)."""
    write_suite(root, 0)  # the shared files (SKILL.md, state.yaml, clawspec.yaml)
    per = -(-rows // targets)
    for t in range(targets):
        numbers = range(t * per, min(rows, (t + 1) * per))
        if not numbers:
            break
        folder = root / "skills" / f"skill-{t:02d}" / "tests"
        folder.mkdir(parents=True, exist_ok=True)
        if csv:
            (folder / "rows.csv").write_text("id,i\n" + "".join(f"{i},{i}\n" for i in numbers))
            examples = "{file: rows.csv}"
        else:
            examples = _inline_rows(numbers)
        (folder / "scenarios.yaml").write_text(
            f'version: "1.0"\ntarget: {{type: skill, path: skills/skill-{t:02d}}}\n'
            f"scenarios:\n{OUTLINE.format(rows=examples, log=LOG)}"
        )


def _validate(workspace: Path) -> ChildRun:
    result = run_child([*CLAWSPEC, "validate", "."], workspace, child_env())
    if result.returncode != 0:
        raise SystemExit(f"validate failed:\n{result.stdout[-2000:]}")
    return result


def load_case(rows: int, repeats: int) -> None:
    print(f"clawspec validate, one contract of {rows} scenarios ({repeats} repeats, start-up in)")
    with tempfile.TemporaryDirectory() as folder:
        suites = {
            "plain scenarios": lambda w: write_suite(w, rows, targets=1),
            "outline, inline rows": lambda w: write_outline_suite(w, rows, targets=1),
            "outline, rows from CSV": lambda w: write_outline_suite(w, rows, targets=1, csv=True),
        }
        figures: dict[str, Figure] = {}
        for label, write in suites.items():
            workspace = fresh(Path(folder), label.replace(" ", "-").replace(",", ""))
            write(workspace)
            figures[label] = Figure([_validate(workspace).seconds for _ in range(repeats)])
        plain = figures["plain scenarios"].median
        for label, figure in figures.items():
            row(label, f"{figure.median:.2f} s", figure.spread("s"), "< 1 s",
                f"(x{figure.median / plain:.2f} plain)")  # fmt: skip


def run_case(rows: int, concurrency: int, repeats: int) -> None:
    print(f"{rows} scenarios, concurrency {concurrency}, 200 ms/run: run / bare loop")
    ratios: dict[str, list[float]] = {"plain scenarios": [], "outline rows": []}
    with tempfile.TemporaryDirectory() as folder:
        for attempt in range(repeats):
            for label, write in (("plain scenarios", write_suite),
                                 ("outline rows", write_outline_suite)):  # fmt: skip
                tag = f"{label.split()[0]}{attempt}"
                loop = bare_loop(fresh(Path(folder), f"bare-{tag}"), rows, concurrency, 0.2)
                workspace = fresh(Path(folder), f"run-{tag}")
                write(workspace, rows)
                result = clawspec_run(workspace, concurrency, 0.2)
                totals = report_of(workspace).get("totals", {})
                if result.returncode != 0 or totals.get("passed") != rows:
                    raise SystemExit(f"{label}: run failed: {totals}\n{result.stdout[-2000:]}")
                ratios[label].append(result.seconds / loop.seconds)
    for label, samples in ratios.items():
        figure = Figure(samples)
        row(f"ratio run / bare loop, {label}", f"{figure.median:.3f}",
            figure.spread("", digits=3), "same")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--repeats", type=int, default=1 if QUICK else 3)
    args = parser.parse_args()
    load_case(1000, max(args.repeats, 3))
    run_case(1000, 16, args.repeats)


if __name__ == "__main__":
    main()
