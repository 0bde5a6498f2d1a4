"""`clawspec bless` on replayed runs: record a repeated scenario on the real gateway (each
attempt keeps a recording of its own), then bless it from the replay with the provider stopped.

The two recorded runs differ (the second also calls `edit`), so a replay that gave every attempt
the same recording would propose `edit` or nothing apart: the proposal shows `edit` held in 1 of
2 runs. Two `--bring-up` processes; runs inside the loopback-only namespace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import provider_config
from tests.support.scripted_provider import ScriptedProvider

REPO = Path(__file__).resolve().parents[2]
TODAY = "2026-11-29"
NOTES = f"notes/{TODAY}.md"
WRITE = {"tool": "write", "args": {"path": NOTES, "content": "# Notes\n\n## Sources\n"}}
RUNS = [
    [WRITE, {"text": "The notes are saved."}],
    [
        WRITE,
        {"tool": "edit", "args": {"path": NOTES, "oldText": "Sources", "newText": "Sources read"}},
        {"text": "The notes are saved. I checked them."},
    ],
]
CONTRACT = """\
version: "1.0"
target: {type: agent, path: agents/main}
defaults: {timeout: 60}
scenarios:
  - name: notes
    when: {invoke: "Write today's notes [script:bless-replay] ({{run_id}})"}
    then:
      - {type: artifact_exists, path: "notes/{{today}}.md", timeout: 10}
"""

pytestmark = pytest.mark.e2e


def _cli(work: Path, launcher: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAWSPEC_", "GITHUB_"))}
    env.update({"CLAWSPEC_OPENCLAW_BIN": launcher, "PYTHONPATH": str(REPO)})
    argv = [sys.executable, "-m", "clawspec", *args, "--cassette-dir", "cassettes"]
    argv += ["--today", TODAY]
    return subprocess.run(
        argv, check=False, capture_output=True, text=True, timeout=600, env=env, cwd=work
    )


@pytest.fixture(scope="module")
def replayed(openclaw_launcher: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("bless-replay")
    contract = work / "agents" / "main" / "tests" / "notes.yaml"
    contract.parent.mkdir(parents=True)
    contract.write_text(CONTRACT, "utf-8")
    (work / "clawspec.yaml").write_text(
        "report_dir: reports\n"
        "gateway: {mode: bring_up, config: openclaw.json, ready_timeout: 180}\n",
        "utf-8",
    )
    with ScriptedProvider({"bless-replay": {"runs": RUNS}}) as provider:
        (work / "openclaw.json").write_text(json.dumps(provider_config(provider.base_url)), "utf-8")
        record = _cli(
            work, openclaw_launcher, "run", str(contract), "--model-traffic", "record",
            "--repeat", "2",
        )  # fmt: skip
    recorded = json.loads((work / "reports" / "clawspec-report.json").read_text("utf-8"))
    # The provider is stopped: only the recordings can answer.
    bless = _cli(
        work, openclaw_launcher, "bless", str(contract), "--scenario", "notes", "--runs", "2",
        "--model-traffic", "replay",
    )  # fmt: skip
    report = json.loads((work / "reports" / "clawspec-report.json").read_text("utf-8"))
    return {"work": work, "record": record, "recorded": recorded, "bless": bless, "report": report}


def test_record_keeps_one_recording_per_attempt(replayed: dict[str, Any]) -> None:
    assert replayed["record"].returncode == 0, replayed["record"].stdout + replayed["record"].stderr
    (scenario,) = replayed["recorded"]["scenarios"]
    recordings = [run["recording"] for run in scenario["attempts"]["runs"]]
    assert [r.rsplit("/", 1)[-1] for r in recordings] == ["attempt-1", "attempt-2"], recordings
    for folder in recordings:
        assert sorted((replayed["work"] / folder).glob("*.json")), folder


def test_bless_on_the_replay_sees_each_attempts_own_run(replayed: dict[str, Any]) -> None:
    bless = replayed["bless"]
    assert bless.returncode == 0, bless.stdout + bless.stderr
    (scenario,) = replayed["report"]["scenarios"]
    assert scenario["model_traffic"]["mode"] == "replay"
    assert {run["status"] for run in scenario["attempts"]["runs"]} == {"pass"}
    out = bless.stdout
    assert "2 good runs of 2" in out
    assert "  - {type: tool_was_called, tool: write}  # held in 2 of 2 runs" in out
    assert "#   - {type: tool_was_called, tool: edit}  # held in 1 of 2 runs" in out
    assert "  - {type: reply_contains, text: The notes are saved.}" in out
    assert "I checked them" not in out.split("# not held in every run")[0]
