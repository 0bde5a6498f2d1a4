"""One suite with variants, run three ways through the real `clawspec` CLI against the local
hooks server (127.0.0.1, OpenClaw's hooks wire format): once as one run; as one job per
`--variant NAME` joined by `clawspec merge`; as `--shard i/2` (which splits the (scenario,
variant) pairs) joined by `clawspec merge`. The merged reports must be the one run's: the
same verdicts per (scenario id, variant), in the same order, the same variant comparisons,
the same side-by-side table and the same exit code under `fail_on: regression`. Run ids,
durations and timestamps differ by nature and are left out of the comparison."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from clawspec.cli import main
from clawspec.reports.json_report import schema_path
from clawspec.reports.model import RunReport
from clawspec.reports.variants import VariantTable, text_table, variant_table
from tests.support.hooks_api import HooksServer

TOKEN = "hook-token-variant-jobs-7c2d1e"
# Alphabetical order (budget, next, pinned) is not the configured order: a merge that kept
# the order its files were read in would show here.
CONFIG = """\
report_dir: reports
fail_on: regression
concurrency: 3
variants:
  - name: pinned
    model: test/pinned-model
  - name: next
    model: test/next-model
  - name: budget
    model: test/budget-model
    required: false
"""
VARIANTS = ("pinned", "next", "budget")
CONTRACT = """\
version: "1.0"
target: {type: skill, path: skills/news}
defaults: {timeout: 5, poll_interval: 0.02}
scenarios:
  - name: smoke
    when: {invoke: "/case smoke [write:out/{{run_id}}.md]"}
    then:
      - {type: artifact_exists, path: "out/{{run_id}}.md"}
  - name: tools
    when: {invoke: "/case tools [write:out/{{run_id}}.md]"}
    then:
      - {type: artifact_exists, path: "out/{{run_id}}.md"}
  - name: broken
    when: {invoke: "/case broken [write:out/{{run_id}}.md]"}
    then:
      - {type: artifact_exists, path: "out/{{run_id}}.md"}
  - name: drafts
    examples:
      - {id: easter, topic: easter}
      - {id: advent, topic: advent}
    when: {invoke: "/case drafts-{{vars.topic}} [write:out/{{run_id}}.md]"}
    then:
      - {type: artifact_exists, path: "out/{{run_id}}.md"}
"""
# (case, model) pairs whose runs complete without writing their artifact: they fail.
# `broken` fails on the reference too (still failing, never a regression); `tools` regresses
# on `budget`, which is advisory, and in the gating suites on `next`, which is required.
QUIET_ALWAYS = {
    ("tools", "test/budget-model"),
    ("broken", "test/pinned-model"),
    ("broken", "test/next-model"),
    ("drafts-advent", "test/budget-model"),
}
GATING = QUIET_ALWAYS | {("tools", "test/next-model")}


@dataclass(frozen=True)
class Suite:
    quiet: frozenset[tuple[str, str]]
    code: int  # what one run exits with under fail_on: regression
    repeat: int = 1
    # (case, model) pairs whose every second run is quiet: with repeats, a pass rate of 1/2
    alternate: frozenset[tuple[str, str]] = frozenset()


SUITES = {
    "a required variant regresses": Suite(frozenset(GATING), 1),
    "only the advisory one regresses": Suite(frozenset(QUIET_ALWAYS), 0),
    "repeated, with pass rates": Suite(
        frozenset(GATING), 1, repeat=2, alternate=frozenset({("smoke", "test/next-model")})
    ),
}


@pytest.fixture(params=list(SUITES))
def suite(
    request: pytest.FixtureRequest, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[HooksServer, Suite]]:
    """The hooks server failing the suite's (case, model) pairs, and the suite."""
    suite = SUITES[request.param]
    seen: dict[tuple[str, str], int] = {}
    lock = threading.Lock()

    def on_run(body: dict[str, Any], run_id: str) -> dict[str, Any] | None:
        case = re.search(r"/case ([\w-]+)", str(body.get("message", "")))
        key = (case.group(1) if case else "", str(body.get("model")))
        with lock:
            seen[key] = seen.get(key, 0) + 1
            # Every way of running runs each pair `repeat` times, one run after another.
            second = key in suite.alternate and seen[key] % 2 == 0
        if key in suite.quiet or second:
            return {"ok": True, "runId": run_id, "completion": {"status": "ok"}}
        return None  # the markers: write the artifact

    config = CONFIG + f"repeat: {suite.repeat}\n"
    (workspace / "clawspec.yaml").write_text(config, encoding="utf-8")
    (workspace / "news.clawspec.yaml").write_text(CONTRACT, encoding="utf-8")
    with HooksServer(TOKEN, workspace, on_run=on_run) as server:
        monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", TOKEN)
        monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", server.base_url)
        yield server, suite


def read(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text("utf-8"))
    jsonschema.validate(data, json.loads(schema_path().read_text("utf-8")))
    return data


def verdicts(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Each result's key, verdict and assertion verdicts, in report order."""
    return [
        (
            s["id"],
            s["variant"],
            s["example"],
            s["status"],
            [(a["type"], a["status"]) for a in s["assertions"]],
        )
        for s in report["scenarios"]
    ]


# What differs between runs by nature (ids, clocks) or by how the report came to be (a merge
# of shards names them); every other top-level field must be equal.
BY_NATURE = {"run_id", "started_at", "duration_ms", "merged", "scenarios", "variant_comparisons"}


def rest(report: dict[str, Any]) -> dict[str, Any]:
    found = {k: v for k, v in report.items() if k not in BY_NATURE}
    found["budget"] = {k: v for k, v in found["budget"].items() if k != "duration_s"}
    return found


def gates(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The variant comparisons without run ids and timings (the sides' durations, tokens and
    cost deltas come from different runs)."""
    return [
        {
            "variant": g["variant"],
            "reference": g["reference"],
            "required": g["required"],
            "counts": g["counts"],
            "regressions": g["regressions"],
            "scenarios": [(c["id"], c["variant"], c["change"]) for c in g["scenarios"]],
        }
        for g in report["variant_comparisons"]
    ]


def table(report: dict[str, Any]) -> tuple[list[str], VariantTable]:
    """The terminal's side-by-side table (without the median durations, which differ from run
    to run) and the table itself."""
    found = variant_table(RunReport.model_validate(report))
    assert found is not None
    lines = [line for line in text_table(found) if "median duration" not in line]
    return lines, found


def gate_lines(out: str) -> list[str]:
    """The terminal's lines on each variant against the reference, and its regressions."""
    return [
        line.strip()
        for line in out.splitlines()
        if " against pinned: " in line or line.strip().startswith("REGRESSED")
    ]


def same_table(merged: dict[str, Any], whole: dict[str, Any]) -> None:
    (merged_lines, merged_table), (whole_lines, whole_table) = table(merged), table(whole)
    assert merged_lines == whole_lines
    assert merged_table.rows == whole_table.rows  # every cell: verdict and change
    for mine, theirs in zip(merged_table.columns, whole_table.columns, strict=True):
        assert (mine.info, mine.scenarios, mine.passed, mine.passes, mine.attempts) == (
            theirs.info,
            theirs.scenarios,
            theirs.passed,
            theirs.passes,
            theirs.attempts,
        )


def test_variant_jobs_and_variant_shards_merge_into_the_report_of_one_run(
    workspace: Path, suite: tuple[HooksServer, Suite], capsys: pytest.CaptureFixture[str]
) -> None:
    server, expected = suite
    # 1. One run of every variant.
    capsys.readouterr()
    assert main(["run", ".", "--report-dir", "one"]) == expected.code
    said = gate_lines(capsys.readouterr().out)
    against = [line for line in said if " against " in line]
    assert [line.split(" against ")[0] for line in against] == ["next", "budget"]
    assert ("fails the job under fail_on: regression" in against[0]) == bool(expected.code)
    assert against[1].endswith("advisory: never fails the job")
    whole = read(workspace / "one" / "clawspec-report.json")
    assert len(whole["scenarios"]) == 5 * 3
    assert [(s["name"], s["variant"]) for s in whole["scenarios"][:3]] == [
        ("smoke", v) for v in VARIANTS
    ]
    regressed = {(g["variant"], g["counts"]["regressed"]) for g in whole["variant_comparisons"]}
    assert regressed == {("next", expected.code), ("budget", 2)}
    if expected.alternate:
        smoke_next = whole["scenarios"][1]
        assert (smoke_next["attempts"]["passes"], smoke_next["attempts"]["attempts"]) == (1, 2)

    # 2. One job per variant, then merge. Alone, a variant has no reference to be compared
    # with: the normal policy decides (`broken` fails; an advisory variant never fails).
    for variant, alone in zip(VARIANTS, (1, 1, 0), strict=True):
        code = main(["run", ".", "--variant", variant, "--report-dir", f"jobs/{variant}"])
        assert code == alone
        job = read(workspace / "jobs" / variant / "clawspec-report.json")
        assert {s["variant"] for s in job["scenarios"]} == {variant}
    capsys.readouterr()
    assert main(["merge", "jobs", "--report-json", "jobs-merged.json"]) == expected.code
    assert gate_lines(capsys.readouterr().out) == said  # what the gate decided, as the run

    # 3. Two shards of the (scenario, variant) pairs, then merge.
    sizes = []
    for index in (1, 2):
        code = main(["run", ".", "--shard", f"{index}/2", "--fail-on", "never"])
        assert code == 0
        path = workspace / "reports" / "clawspec-report.json"
        sizes.append(len(read(path)["scenarios"]))
        path.rename(workspace / f"shard-{index}.json")
    assert sorted(sizes) == [7, 8]  # 15 pairs split; the variants of a scenario may part
    capsys.readouterr()
    code = main(["merge", "shard-1.json", "shard-2.json", "--report-json", "shards-merged.json"])
    assert code == expected.code
    assert gate_lines(capsys.readouterr().out) == said

    # 4. A matrix of variants and shards: `--variant V --shard i/2`, then merge.
    for variant in VARIANTS:
        for index in (1, 2):
            argv = ["--variant", variant, "--shard", f"{index}/2", "--fail-on", "never"]
            report = workspace / "matrix" / f"{variant}-{index}.json"
            assert main(["run", ".", *argv, "--report-json", str(report)]) == 0
    capsys.readouterr()
    assert main(["merge", "matrix", "--report-json", "matrix-merged.json"]) == expected.code
    assert gate_lines(capsys.readouterr().out) == said

    for name in ("jobs-merged.json", "shards-merged.json", "matrix-merged.json"):
        merged = read(workspace / name)
        assert verdicts(merged) == verdicts(whole), name
        assert rest(merged) == rest(whole), name  # totals, variants, selection, spend, …
        assert gates(merged) == gates(whole), name
        same_table(merged, whole)
    runs = [r for r in server.requests if r["path"] == "/hooks/agent"]
    assert len(runs) == 4 * 15 * expected.repeat
