"""Conversations on the real OpenClaw gateway, through the real `clawspec run` CLI.

tests/e2e/contracts/conversations: every conversation runs on two model variants (a per-request
model override). The scripted provider answers the last turn of `remembers` from the history it
is sent (`recall` steps), so its pass proves the session carried turn 1, not that the script
knew the name; model-b answers in its own words, so the variant's model is seen to answer.
`remembers` writes a file in turn 2 and delegates in turn 3, and each turn's tool assertions see
only that turn's calls; `middle-fails` fails its second turn and its third is still judged.

The first run records the model traffic with the provider running; the second replays it with
the provider stopped and must give the same verdicts. Runs inside the loopback-only namespace.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from clawspec.reports.json_report import schema_path
from tests.support.scripted_provider import ScriptedProvider, load_scripts

REPO = Path(__file__).resolve().parents[2]
CONTRACTS = Path(__file__).resolve().parent / "contracts" / "conversations"
PROVIDER_PORT = 18097  # the port contracts/conversations/openclaw.json names
RUN_ID = re.compile(r"\b[0-9a-f]{16}\b")

pytestmark = pytest.mark.e2e


def _run(work: Path, launcher: str, mode: str, cassettes: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAWSPEC_", "GITHUB_"))}
    env.update({"CLAWSPEC_OPENCLAW_BIN": launcher, "PYTHONPATH": str(REPO)})
    argv = [sys.executable, "-m", "clawspec", "run", str(work), "--no-color"]
    argv += ["--model-traffic", mode, "--cassette-dir", str(cassettes)]
    argv += ["--junit", str(work / "reports" / "junit.xml")]
    proc = subprocess.run(
        argv, check=False, capture_output=True, text=True, timeout=600, env=env, cwd=work
    )
    report_path = work / "reports" / "clawspec-report.json"
    assert report_path.is_file(), proc.stdout + proc.stderr
    report = json.loads(report_path.read_text("utf-8"))
    by_key = {(s["name"], s["variant"]): s for s in report["scenarios"]}
    return {"proc": proc, "work": work, "report": report, "scenarios": by_key}


@pytest.fixture(scope="module")
def runs(openclaw_launcher: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    cassettes = tmp_path_factory.mktemp("cassettes")
    record_work = tmp_path_factory.mktemp("record") / "suite"
    shutil.copytree(CONTRACTS, record_work)
    with ScriptedProvider(load_scripts(record_work / "provider-scripts.json"), port=PROVIDER_PORT):
        recorded = _run(record_work, openclaw_launcher, "record", cassettes)
    # The provider is stopped: the replay can only answer from the recordings.
    replay_work = tmp_path_factory.mktemp("replay") / "suite"
    shutil.copytree(CONTRACTS, replay_work)
    replayed = _run(replay_work, openclaw_launcher, "replay", cassettes)
    return {"record": recorded, "replay": replayed}


def _turn_tools(turn: dict[str, Any]) -> list[str]:
    evidence = turn.get("evidence") or {}
    return [f"{t['name']}@{t['agent']}" for t in evidence.get("tools") or []]


def _verdicts(checks: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(a["type"], a["status"]) for a in checks]


@pytest.mark.parametrize("variant", ["model-a", "model-b"])
def test_the_session_carries_earlier_turns_and_each_turn_sees_only_its_own_calls(
    runs: dict[str, Any], variant: str
) -> None:
    recorded = runs["record"]
    scenario = recorded["scenarios"][("remembers[zed]", variant)]
    turns = scenario["turns"]
    assert scenario["status"] == "pass", recorded["proc"].stdout
    assert [t["index"] for t in turns] == [0, 1, 2, 3]
    # Turn 4's answer names what only turn 1 said: the history reached the provider.
    expected = "Your name is Zed." if variant == "model-a" else "Model B recalls: your name is Zed."
    assert turns[3]["reply"] == expected
    assert turns[0]["say"] == "Hello, my name is Zed. [script:intro]"  # the row's value
    # Each turn's evidence is its own run (and its sub-agent's), not the conversation's.
    assert [_turn_tools(t) for t in turns] == [
        [],
        ["write@main"],
        ["sessions_spawn@main", "write@notary"],
        [],
    ]
    assert turns[2]["evidence"]["delegations"] == ["notary"]
    assert _verdicts(turns[3]["assertions"]) == [
        ("reply_contains", "pass"),
        ("tool_not_called", "pass"),  # turns 2 and 3 wrote; turn 4's scope does not see it
        ("tool_not_called", "pass"),
    ]
    assert all(a["turn"] == 3 for a in turns[3]["assertions"])
    # The scenario's own `then` sees the whole conversation.
    assert _verdicts(scenario["assertions"]) == [
        ("tool_was_called", "pass"),
        ("reply_contains", "pass"),
    ]
    assert "(turn 3)" in scenario["assertions"][1]["message"]
    ids = [t["gateway_run_id"] for t in turns]
    assert all(i and i.startswith("chatcmpl") for i in ids) and len(set(ids)) == 4
    assert all(t["tokens"] for t in turns)
    # Turn 3's sub-agent's result is announced in the session by a run of OpenClaw's own: its
    # model call is the conversation's spend (not the turn's), so the run record counts what
    # the plugin counts at both levels, and the conversation's total is more than its turns'.
    for tokens in (scenario["evidence"]["tokens"], turns[2]["evidence"]["tokens"]):
        assert tokens["source"] == "run record" and tokens["disagreement"] is None, tokens
    assert scenario["evidence"]["tokens"]["total"] > sum(t["tokens"] for t in turns)
    # One figure per turn: its evidence's, sub-agent included (not the chat answer's own run).
    assert turns[2]["tokens"] == turns[2]["evidence"]["tokens"]["total"]


def test_a_failing_middle_turn_fails_the_scenario_and_later_turns_are_still_judged(
    runs: dict[str, Any],
) -> None:
    recorded = runs["record"]
    scenario = recorded["scenarios"][("middle-fails", "model-a")]
    assert scenario["status"] == "fail"
    assert [t["status"] for t in scenario["turns"]] == ["pass", "fail", "pass"]
    assert scenario["message"].startswith(
        "turn 2, then[0] (reply_contains): the reply does not contain 'raining'"
    )
    assert scenario["restates"] == {"phase": "then", "index": 0, "turn": 1}
    assert scenario["turns"][2]["reply"] == "Your name is Ada."
    proc = recorded["proc"]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "turn 2, then[0]" in proc.stdout
    assert "turn 2 replied: It is sunny." in proc.stdout
    assert "Traceback" not in proc.stderr
    junit = (recorded["work"] / "reports" / "junit.xml").read_text("utf-8")
    assert "turn 2, then[0] (reply_contains)" in junit


def test_the_report_with_turns_validates_against_the_shipped_schema(
    runs: dict[str, Any],
) -> None:
    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(runs["record"]["report"])


def test_replay_without_the_provider_gives_the_same_turns_and_verdicts(
    runs: dict[str, Any],
) -> None:
    recorded, replayed = runs["record"], runs["replay"]
    assert replayed["proc"].returncode == 1, replayed["proc"].stdout + replayed["proc"].stderr
    for key, before in recorded["scenarios"].items():
        after = replayed["scenarios"][key]
        traffic = after["model_traffic"]
        assert traffic["mode"] == "replay" and traffic["unmatched"] == 0, traffic
        assert recorded["scenarios"][key]["model_traffic"]["calls"] == traffic["calls"]
        assert after["status"] == before["status"], key
        shown = [
            (t["status"], t["reply"], [RUN_ID.sub("<run>", a["message"]) for a in t["assertions"]])
            for t in after["turns"]
        ]
        expected = [
            (t["status"], t["reply"], [RUN_ID.sub("<run>", a["message"]) for a in t["assertions"]])
            for t in before["turns"]
        ]
        assert shown == expected, key
