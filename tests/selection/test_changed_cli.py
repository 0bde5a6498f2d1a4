"""`clawspec run --changed-since` end to end: the CLI in a subprocess, against the local hooks
server (127.0.0.1), in a real git repository; the comparison and shards with a partial
selection; what the summary and the PR comment say."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clawspec.reports.github.pr_comment import render_pr_comment
from clawspec.reports.github.summary import render_summary
from clawspec.reports.model import RunReport
from tests.selection.conftest import ALL, NEWS, Suite
from tests.support.hooks_api import HooksServer

TOKEN = "hook-token-changed-3e5f"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def server(suite: Suite) -> Iterator[HooksServer]:
    with HooksServer(TOKEN, suite.root) as running:
        yield running


def clawspec(suite: Suite, server: HooksServer, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "CLAWSPEC_HOOKS_TOKEN": TOKEN,
        "CLAWSPEC_GATEWAY_BASE_URL": server.base_url,
        "PYTHONPATH": str(REPO),
    }
    return subprocess.run(
        [sys.executable, "-m", "clawspec", *args],
        cwd=suite.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def report(suite: Suite, name: str) -> dict[str, Any]:
    return json.loads((suite.root / "reports" / name).read_text(encoding="utf-8"))


def test_only_the_touched_scenarios_run_and_every_output_says_so(
    suite: Suite, server: HooksServer
) -> None:
    suite.append("golden/news.md", "An edit not yet committed.\n")
    done = clawspec(
        suite, server, "run", "--changed-since", "HEAD", "--report-json", "reports/r.json"
    )
    assert done.returncode == 0, done.stderr
    assert len(server.requests) == 1
    data = report(suite, "r.json")
    assert [s["id"] for s in data["scenarios"]] == [f"{NEWS}::draft"]
    selection = data["selection"]
    assert (selection["changed_since"], selection["commit"]) == ("HEAD", suite.base)
    assert (selection["selected"], selection["total"], selection["changed_files"]) == (1, 7, 1)
    assert sorted(selection["left_out"]) == sorted(set(ALL) - {f"{NEWS}::draft"})
    said = f"ran 1 of 7 scenarios: 6 unaffected by changes since {suite.base[:7]}"
    assert said in done.stdout
    parsed = RunReport.model_validate(data)
    # The commit as code: GitHub would otherwise link it.
    note = f"> Ran 1 of 7 scenarios: 6 unaffected by changes since `{suite.base[:7]}`."
    assert note in render_summary(parsed)
    assert note in render_pr_comment(parsed, "<!-- clawspec:w:j -->")


def test_a_dry_run_says_what_would_run_not_what_ran(suite: Suite, server: HooksServer) -> None:
    suite.append("golden/news.md", "An edit not yet committed.\n")
    done = clawspec(suite, server, "run", "--changed-since", "HEAD", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert server.requests == []
    said = f"would run 1 of 7 scenarios: 6 unaffected by changes since {suite.base[:7]}"
    assert done.stdout.splitlines()[0] == said
    assert "ran 1 of 7" not in done.stdout.replace("would run", "")


def test_nothing_touched_is_a_passing_run_that_says_why(suite: Suite, server: HooksServer) -> None:
    suite.append("README.md", "Docs only.\n")
    suite.commit("docs")
    done = clawspec(suite, server, "run", "--changed-since", suite.base)
    assert done.returncode == 0, done.stderr
    assert server.requests == []
    assert (
        f"ran 0 of 7 scenarios: none is affected by the 1 file changed since {suite.base[:7]}"
        in done.stdout
    )
    data = report(suite, "clawspec-report.json")
    assert data["scenarios"] == []
    assert data["selection"]["selected"] == 0


def test_an_unknown_ref_runs_everything_with_the_warning(suite: Suite, server: HooksServer) -> None:
    done = clawspec(suite, server, "run", "--changed-since", "origin/main")
    assert done.returncode == 0, done.stderr
    assert len(server.requests) == len(ALL)
    assert "warning: --changed-since: 'origin/main' is not in this repository; every " in (
        done.stderr
    )
    assert report(suite, "clawspec-report.json")["selection"] is None


def test_the_comparison_does_not_count_left_out_scenarios_as_removed(
    suite: Suite, server: HooksServer
) -> None:
    whole = clawspec(suite, server, "run", "--report-json", "reports/base.json")
    assert whole.returncode == 0, whole.stderr
    suite.append("skills/news/SKILL.md", "A new rule.\n")
    done = clawspec(
        suite, server, "run", "--changed-since", "HEAD", "--baseline", "reports/base.json",
        "--save-baseline",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    comparison = report(suite, "clawspec-report.json")["comparison"]
    assert sorted(c["id"] for c in comparison["scenarios"]) == [
        f"{NEWS}::draft",
        f"{NEWS}::plain",
    ]
    assert comparison["counts"]["removed"] == 0
    assert comparison["counts"]["unchanged"] == 2
    assert "note: baseline not saved: --changed-since left out 5 scenarios" in done.stderr


def test_shards_split_only_the_selection_and_merge_back_with_it(
    suite: Suite, server: HooksServer
) -> None:
    suite.append("skills/news/SKILL.md", "A new rule.\n")  # touches draft and plain
    for index in (1, 2):
        done = clawspec(
            suite, server, "run", "--changed-since", "HEAD", "--shard", f"{index}/2",
            "--report-json", f"reports/shards/{index}.json",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    shards = [report(suite, f"shards/{i}.json") for i in (1, 2)]
    assert [len(s["scenarios"]) for s in shards] == [1, 1]
    assert {s["shard"]["selected"] for s in shards} == {2}
    assert {s["selection"]["selected"] for s in shards} == {2}
    assert len(server.requests) == 2
    merged = clawspec(suite, server, "merge", "reports/shards", "--report-json", "reports/m.json")
    assert merged.returncode == 0, merged.stderr
    data = report(suite, "m.json")
    assert [s["id"] for s in data["scenarios"]] == [f"{NEWS}::draft", f"{NEWS}::plain"]
    assert data["selection"] == shards[0]["selection"]
