"""Hermetic runs on the real OpenClaw gateway: record once with the scripted provider,
replay with the provider stopped, and refuse a changed prompt with a diff.

Two `clawspec run --bring-up` processes, each in its own fresh workspace (so the recording is
also proven to replay from another checkout path). The replay's workspace changes the prompt of
one scenario (`changed-note`): it is an error with a diff, and the others replay beside it.
That scenario's recording is made to name an earlier OpenClaw release, as after an upgrade: its
error names both releases.
Runs inside the loopback-only namespace.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import kept_gateway_log, provider_config
from tests.support.scripted_provider import ScriptedProvider

REPO = Path(__file__).resolve().parents[2]
EARLIER_RELEASE = "2000.1.1"  # what the changed scenario's recording is made to name
RUN_ID = re.compile(r"\b[0-9a-f]{16}\b")
PROVIDER_KEY = "sk-clawspec-e2e-RECOGNISABLE-provider-key"
TODAY = "2026-01-31"
SCRIPTS: dict[str, list[dict[str, Any]]] = {
    "hermetic-write": [
        {
            "tool": "write",
            "args": {"path": f"notes/{TODAY}.md", "content": "# Notes\n\nAll quiet.\n"},
            "usage": {"prompt_tokens": 1500, "completion_tokens": 60},
        },
        {"text": "Wrote today's note.", "usage": {"prompt_tokens": 1600, "completion_tokens": 9}},
    ],
    "hermetic-changed": [
        {"tool": "write", "args": {"path": "notes/changed.md", "content": "changed\n"}},
        {"text": "Wrote the note."},
    ],
    "hermetic-spawn": [
        {
            "tool": "sessions_spawn",
            "args": {"task": "Write child.md [script:hermetic-child]", "taskName": "child"},
            "usage": {"prompt_tokens": 700, "completion_tokens": 25},
        },
        {"text": "Delegated.", "usage": {"prompt_tokens": 800, "completion_tokens": 4}},
    ],
    "hermetic-child": [
        {
            "tool": "write",
            "args": {"path": "child.md", "content": "from the child\n"},
            "usage": {"prompt_tokens": 300, "completion_tokens": 30},
        },
        {"text": "Child done.", "usage": {"prompt_tokens": 310, "completion_tokens": 3}},
    ],
    **{
        f"hermetic-topic-{word}": [
            {"tool": "write", "args": {"path": f"topics/{word}.md", "content": f"{word}\n"}},
            {"text": f"Wrote the {word} note."},
        ]
        for word in ("Alpha", "Beta")
    },
}
CONTRACT = """\
version: "1.0"
target: {type: agent, path: agents/main, agent_id: main}
defaults: {timeout: 60, poll_interval: 0.5}
scenarios:
  - name: writes-note
    when: {invoke: "WRITE_PROMPT [script:hermetic-write]"}
    then:
      - {type: artifact_exists, path: "notes/{{today}}.md", timeout: 10}
      - {type: tool_was_called, tool: write}
      - {type: tool_not_called, tool: exec}
      - {type: token_budget, max_total_tokens: 5000}
  - name: changed-note
    when: {invoke: "CHANGED_PROMPT [script:hermetic-changed]"}
    then:
      - {type: tool_was_called, tool: write}
  - name: delegates
    when: {invoke: "Delegate the summary [script:hermetic-spawn]"}
    then:
      - {type: tool_was_called, tool: sessions_spawn}
      - {type: artifact_exists, path: child.md, timeout: 30}
  - name: topics
    examples:
      - {id: alpha, word: Alpha}
      - {id: beta, word: Beta}
    when: {invoke: "Write the {{vars.word}} note [script:hermetic-topic-{{vars.word}}]"}
    then:
      - {type: artifact_exists, path: "topics/{{vars.word}}.md", timeout: 10}
"""
ROWS = ("topics[alpha]", "topics[beta]")

pytestmark = pytest.mark.e2e


def _workspace(root: Path, provider_port: int, changed_prompt: str) -> Path:
    work = root
    (work / "agents" / "main" / "tests").mkdir(parents=True)
    contract = CONTRACT.replace("WRITE_PROMPT", "Write today's note")
    (work / "agents" / "main" / "tests" / "scenarios.yaml").write_text(
        contract.replace("CHANGED_PROMPT", changed_prompt), "utf-8"
    )
    (work / "clawspec.yaml").write_text(
        "concurrency: 2\ngateway: {mode: bring_up, config: openclaw.json, ready_timeout: 180}\n",
        "utf-8",
    )
    openclaw = provider_config(f"http://127.0.0.1:{provider_port}/v1")
    openclaw["models"]["providers"]["fake"]["apiKey"] = PROVIDER_KEY  # recognisable in a leak
    (work / "openclaw.json").write_text(json.dumps(openclaw, indent=2), "utf-8")
    return work


def _run(work: Path, launcher: str, mode: str, cassettes: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAWSPEC_", "GITHUB_"))}
    env.update({"CLAWSPEC_OPENCLAW_BIN": launcher, "PYTHONPATH": str(REPO)})
    argv = [sys.executable, "-m", "clawspec", "run", str(work), "--no-color"]
    argv += ["--model-traffic", mode, "--cassette-dir", str(cassettes), "--today", TODAY]
    argv += ["--report-dir", str(work / "reports")]
    proc = subprocess.run(
        argv, check=False, capture_output=True, text=True, timeout=600, env=env, cwd=work
    )
    report_path = work / "reports" / "clawspec-report.json"
    assert report_path.is_file(), proc.stdout + proc.stderr
    report = json.loads(report_path.read_text("utf-8"))
    return {
        "proc": proc,
        "work": work,
        "report": report,
        "scenarios": {s["name"]: s for s in report["scenarios"]},
    }


@pytest.fixture(scope="module")
def hermetic(openclaw_launcher: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Record with the provider running; then replay with it stopped and one prompt changed."""
    cassettes = tmp_path_factory.mktemp("cassettes")
    with ScriptedProvider(SCRIPTS) as provider:
        port = provider.port
        record_work = _workspace(tmp_path_factory.mktemp("record"), port, "Write a note")
        recorded = _run(record_work, openclaw_launcher, "record", cassettes)
        calls = provider.chat_requests()
        # A scenario's calls carry its script marker; the gateway's own runs (a heartbeat of the
        # main session may fire during the run) carry none and belong to no scenario.
        recorded["provider_calls"] = sum(1 for call in calls if call.script)
        recorded["gateway_own_calls"] = sum(1 for call in calls if not call.script)
    recorded["releases"] = {
        json.loads(path.read_text("utf-8"))["openclaw_version"]
        for path in cassettes.rglob("*.json")
    }
    # As if recorded before an upgrade of OpenClaw: its replay misses (the prompt changed).
    changed = cassettes / "agents" / "main" / "tests" / "scenarios" / "changed-note"
    for path in changed.glob("*.json"):
        data = json.loads(path.read_text("utf-8"))
        path.write_text(json.dumps({**data, "openclaw_version": EARLIER_RELEASE}), "utf-8")
    # The provider is stopped: nothing listens on its port any more.
    replay_work = _workspace(tmp_path_factory.mktemp("replay"), port, "Write another note")
    replayed = _run(replay_work, openclaw_launcher, "replay", cassettes)
    # ClawSpec's own install (scripts/install-openclaw.sh): <folder>/bin/openclaw.
    manifest = Path(openclaw_launcher).resolve().parents[1] / "app/node_modules/openclaw"
    release = json.loads((manifest / "package.json").read_text("utf-8"))["version"]
    return {"record": recorded, "replay": replayed, "cassettes": cassettes, "release": release}


def _summary(scenario: dict[str, Any]) -> dict[str, Any]:
    evidence = scenario.get("evidence") or {}
    tokens = evidence.get("tokens") or {}
    return {
        "status": scenario["status"],
        # messages name the run's id ("in run 72243c6bca6f49ed"), which differs on every run
        "verdicts": [
            (a["type"], a["status"], RUN_ID.sub("<run id>", a["message"]))
            for a in scenario["assertions"]
        ],
        "tools": sorted(t["name"] for t in evidence.get("tools") or []),
        "tokens": (tokens.get("input"), tokens.get("output"), tokens.get("total")),
    }


def test_recording_passes_and_writes_one_cassette_per_model_call(hermetic: dict) -> None:
    recorded = hermetic["record"]
    proc = recorded["proc"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in ("writes-note", "changed-note", "delegates"):
        assert recorded["scenarios"][name]["status"] == "pass", recorded["scenarios"][name]
    root = hermetic["cassettes"] / "agents" / "main" / "tests" / "scenarios"
    writes = sorted(p.name for p in (root / "writes-note").glob("*.json"))
    assert writes == ["1.json", "2.json"]
    assert sorted(p.name for p in (root / "changed-note").glob("*.json")) == writes
    # parent (2 calls), its sub-agent (2 calls) and the parent's run on the sub-agent's announced
    # result (a new trace, often after the scenario ended) are all the delegating scenario's
    delegates = sorted(p.name for p in (root / "delegates").glob("*.json"))
    assert len(delegates) >= 4, delegates
    assert recorded["provider_calls"] == 2 * len(writes) + len(delegates) + 2 * len(ROWS)
    own = recorded["gateway_own_calls"]
    if own:  # never recorded as a scenario's, and said
        assert f"{own} model call(s) could not be attributed" in recorded["proc"].stderr
    else:
        assert "could not be attributed" not in recorded["proc"].stderr
    traffic = recorded["scenarios"]["delegates"]["model_traffic"]
    assert traffic["mode"] == "record" and 4 <= traffic["calls"] <= len(delegates)
    # Every call names the release the gateway ran (the installed package's own manifest).
    assert recorded["releases"] == {hermetic["release"]}
    for row, folder in zip(ROWS, ("topics_alpha", "topics_beta"), strict=True):
        assert recorded["scenarios"][row]["status"] == "pass", recorded["scenarios"][row]
        assert sorted(p.name for p in (root / folder).glob("*.json")) == ["1.json", "2.json"]
        assert recorded["scenarios"][row]["model_traffic"]["cassette"].endswith(folder)


def test_replay_without_the_provider_gives_the_same_verdicts_tools_and_tokens(
    hermetic: dict,
) -> None:
    recorded, replayed = hermetic["record"], hermetic["replay"]
    proc = replayed["proc"]
    # Every scenario but the one whose prompt changed (the next test) replays as recorded.
    assert proc.returncode == 1, proc.stdout + proc.stderr
    statuses = {name: s["status"] for name, s in replayed["scenarios"].items()}
    assert statuses == {
        "writes-note": "pass", "changed-note": "error", "delegates": "pass",
        "topics[alpha]": "pass", "topics[beta]": "pass",
    }, proc.stdout  # fmt: skip
    for name in ("writes-note", "delegates", *ROWS):  # each outline row from its own cassettes
        before, after = _summary(recorded["scenarios"][name]), _summary(replayed["scenarios"][name])
        if name in ROWS:  # no row assertion reads the log: its tools and tokens may come late
            before, after = ((s["status"], s["verdicts"]) for s in (before, after))
        assert after == before
        traffic = replayed["scenarios"][name]["model_traffic"]
        assert traffic["mode"] == "replay" and traffic["unmatched"] == 0
        assert traffic["calls"] >= 2 and traffic["used"][:2] == [1, 2]
    note = _summary(replayed["scenarios"]["writes-note"])
    assert note["tokens"] == (3100, 69, 3169)
    assert (replayed["work"] / "notes" / f"{TODAY}.md").read_text("utf-8").startswith("# Notes")
    assert (replayed["work"] / "child.md").is_file()
    assert "no model call reached the proxy" not in proc.stderr
    # only the gateway's own heartbeat runs are nobody's (refused, and said); a heartbeat turn
    # may also end before it calls the model (seen when the gateway stops right after it fired)
    log = kept_gateway_log(replayed["work"] / "reports").read_text("utf-8")
    if "could not be attributed" in proc.stderr:
        assert "trigger=heartbeat" in log, proc.stderr


def test_a_changed_prompt_is_an_error_with_a_diff_naming_the_message(hermetic: dict) -> None:
    replayed = hermetic["replay"]
    scenario = replayed["scenarios"]["changed-note"]
    assert scenario["status"] == "error", scenario
    assert scenario["message"].startswith(
        "model traffic replay: model call 1 differs from the closest recording 1.json "
        f"(recorded on OpenClaw {EARLIER_RELEASE}, replayed on {hermetic['release']}: record "
        "again after an upgrade, --model-traffic record): messages[1] (user) changed:"
    ), scenario["message"]
    diff = scenario["model_traffic"]["diff"]
    assert any(line.startswith("  -") and "Write a note" in line for line in diff), diff
    assert any(line.startswith("  +") and "Write another note" in line for line in diff), diff
    # the scenarios beside it are untouched by the change
    assert replayed["scenarios"]["writes-note"]["status"] == "pass"
    assert replayed["scenarios"]["delegates"]["status"] == "pass"
    assert replayed["proc"].returncode == 1


def test_no_secret_reaches_any_cassette(hermetic: dict) -> None:
    files = sorted(hermetic["cassettes"].rglob("*.json"))
    assert files
    text = "\n".join(p.read_text("utf-8") for p in files)
    assert PROVIDER_KEY not in text
    assert "RECOGNISABLE" not in text
    assert '"authorization"' not in text.lower()
    # recorded streams keep their SSE data lines verbatim
    first = json.loads(files[0].read_text("utf-8"))
    lines = [line for event in first["response"]["events"] for line in event["lines"]]
    assert lines[-1] == "data: [DONE]"
    assert all(line.startswith("data: ") for line in lines)
