"""`--summary FILE`: the job summary's Markdown written to a file, a local preview of GitHub's,
through the real CLI against the local hooks server (127.0.0.1), for `run` and for `merge`."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawspec.cli import main
from tests.sharding.conftest import TOKEN, RunShards, write_suite
from tests.support.hooks_api import HooksServer


@pytest.fixture(autouse=True)
def _not_on_github(monkeypatch: pytest.MonkeyPatch) -> None:
    # A developer's machine: none of the runner's variables.
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"):
        monkeypatch.delenv(name, raising=False)


def test_run_writes_the_summary_to_a_file_without_workflow_commands(
    workspace: Path, hooks: HooksServer, capsys: pytest.CaptureFixture[str]
) -> None:
    write_suite(workspace)
    code = main(["run", ".", "--tag", "smoke", "--summary", "preview/summary.md"])
    assert code == 1  # the suite has failures
    out, err = capsys.readouterr()
    text = (workspace / "preview/summary.md").read_text("utf-8")
    assert text.startswith("## ClawSpec results\n\n❌ **Failed**")
    assert "| Status | Scenario | Contract | Duration | Trace |" in text
    assert "| ❌ FAIL | case-1-1 | `skills/skill-1/tests/scenarios.yaml:" in text
    assert "### Not passing" in text
    assert TOKEN not in text
    # Nothing for a runner: no workflow command anywhere, no mask printed.
    assert not [line for line in (out + err).splitlines() if line.startswith("::")]
    assert "report: preview/summary.md" in out


def test_merge_writes_the_summary_of_the_whole_run(
    workspace: Path, run_shards: RunShards, capsys: pytest.CaptureFixture[str]
) -> None:
    write_suite(workspace, failing=False)
    run_shards(2)
    capsys.readouterr()
    assert main(["merge", "reports/shards", "--summary", "merged.md"]) == 0
    text = (workspace / "merged.md").read_text("utf-8")
    assert text.startswith("## ClawSpec results\n\n✅ **Passed**")
    assert "**44 scenarios**" in text  # both shards: 48 less the 4 tagged manual
    assert "report: merged.md" in capsys.readouterr().out
