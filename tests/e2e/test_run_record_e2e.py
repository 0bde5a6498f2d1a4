"""Run record assertions on the real OpenClaw gateway, through the real `clawspec run` CLI.

tests/e2e/contracts/run_record: hook scenarios driven by the scripted provider, judged on
OpenClaw's run record in the brought-up gateway's state folder (the gateway's default Tool
Search, ClawSpec's plugin installed by bring-up). `acts` writes a file and calls a tool the
gateway does not know (refused: not a call); `loops` reads a missing file four times in a row
(failed calls that ran: calls); `cut` ends on an answer cut at the model's output limit;
`notifies` and `stays-quiet` send a message through OpenClaw's Telegram channel, whose Bot API
is a fake on loopback (tests/support/telegram_bot_api.py). Runs inside the loopback-only
namespace.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from clawspec.gateway.plugin_records import read_plugin_records
from tests.e2e.conftest import run_clawspec
from tests.support.scripted_provider import ScriptedProvider, load_scripts
from tests.support.telegram_bot_api import BOT_TOKEN, FakeTelegramBotApi

CONTRACTS = Path(__file__).resolve().parent / "contracts" / "run_record"
PROVIDER_PORT = 18099  # the port contracts/run_record/openclaw.json names
BOT_API_PORT = 18094  # the Telegram apiRoot's port there

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def record_run(openclaw_launcher: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("run-record") / "suite"
    shutil.copytree(CONTRACTS, work)
    # Bring-up makes its state folder under the temporary folder and removes it at the end: a
    # hard link to its plugin output, made as soon as the file appears, keeps what it wrote.
    temp = work.parent / "tmp"
    temp.mkdir()
    kept = work.parent / "clawspec-plugin.jsonl"
    done = threading.Event()
    linker = threading.Thread(target=_keep_plugin_output, args=(temp, kept, done))
    linker.start()
    bot_api = FakeTelegramBotApi(port=BOT_API_PORT)
    try:
        with (
            ScriptedProvider(load_scripts(work / "provider-scripts.json"), port=PROVIDER_PORT),
            bot_api,
        ):
            proc = run_clawspec(work, openclaw_launcher, extra_env={"TMPDIR": str(temp)})
    finally:
        done.set()
        linker.join()
    report_path = work / "reports" / "clawspec-report.json"
    assert report_path.is_file(), proc.stdout + proc.stderr
    report = json.loads(report_path.read_text("utf-8"))
    return {
        "proc": proc,
        "scenarios": {s["name"]: s for s in report["scenarios"]},
        "plugin": kept,
        "bot_api": bot_api,
    }


def _keep_plugin_output(temp: Path, kept: Path, done: threading.Event) -> None:
    while not done.wait(0.05):
        for found in temp.glob("clawspec-gateway-*/logs/clawspec-plugin.jsonl"):
            os.link(found, kept)
            return


def _verdicts(scenario: dict[str, Any]) -> list[tuple[str, str]]:
    return [(a["type"], a["status"]) for a in scenario["assertions"]]


def test_what_the_agent_did_passes_as_written(record_run: dict[str, Any]) -> None:
    acts = record_run["scenarios"]["acts"]
    assert _verdicts(acts) == [
        ("tool_called_with", "pass"),
        ("tool_call_count", "pass"),
        ("tool_call_count", "pass"),  # the refused call is not a call
        ("no_tool_loop", "pass"),
        ("message_not_sent", "pass"),
        ("run_completed", "pass"),
        ("token_budget", "pass"),
    ], acts["assertions"]
    refused = acts["assertions"][2]["message"]
    assert "'no_such_tool' was attempted 1 time but refused" in refused, refused


def test_the_reports_tokens_come_from_the_record_and_the_plugin_agrees(
    record_run: dict[str, Any],
) -> None:
    """`acts` makes three model calls with usage of their own (1,201/41, 1,302/52, 1,403/63
    input/output tokens); the plugin's events count the same, so no disagreement is named, and
    `token_budget` counts the record and says so."""
    acts = record_run["scenarios"]["acts"]
    tokens = acts["evidence"]["tokens"]
    assert tokens["source"] == "run record", tokens
    assert (tokens["input"], tokens["output"], tokens["total"]) == (3906, 156, 4062), tokens
    assert tokens["disagreement"] is None, tokens
    budget = acts["assertions"][-1]
    assert budget["message"] == (
        "total tokens 4,062 ≤ 5,000; output tokens 156 ≤ 156 (from the run record, 1 run)"
    ), budget


def test_the_records_tokens_equal_the_plugins_events(record_run: dict[str, Any]) -> None:
    """Agreement on the real gateway: each scenario's tokens from OpenClaw's run record equal
    what ClawSpec's plugin counted for its run, read straight from the plugin's output."""
    path = record_run["plugin"]
    assert path.is_file(), "the brought-up gateway's plugin output was not seen"
    per_run: dict[str, list[int]] = {}
    for rec in read_plugin_records(path, 0):
        if (rec.session_key or "").endswith(":main"):
            # OpenClaw's own run in the agent's main session (a heartbeat, when the machine is
            # slow enough for one to come due): a hook run never runs there.
            continue
        if rec.kind == "model_call" and rec.phase in ("completed", "error") and rec.run_id:
            counted = per_run.setdefault(rec.run_id, [0, 0, 0])
            counted[0] += rec.input_tokens or 0
            counted[1] += rec.output_tokens or 0
            counted[2] += rec.total_tokens or 0
    recorded = sorted(
        (t["input"], t["output"], t["total"])
        for t in (s["evidence"]["tokens"] for s in record_run["scenarios"].values())
    )
    assert sorted(tuple(c) for c in per_run.values()) == recorded, (per_run, recorded)
    # `cut`: one call, `notifies` and `stays-quiet` two each, `loops` five, at the scripted
    # provider's default usage (100 input, 10 output).
    assert recorded == [
        (100, 10, 110),
        (200, 20, 220),
        (200, 20, 220),
        (500, 50, 550),
        (3906, 156, 4062),
    ], recorded
    for scenario in record_run["scenarios"].values():
        assert scenario["evidence"]["tokens"]["source"] == "run record", scenario["evidence"]


def test_a_loop_fails_and_names_the_closest_call(record_run: dict[str, Any]) -> None:
    proc, loops = record_run["proc"], record_run["scenarios"]["loops"]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _verdicts(loops) == [
        ("tool_call_count", "pass"),  # failed reads ran: calls
        ("no_tool_loop", "fail"),
        ("tool_called_with", "fail"),
        ("run_completed", "pass"),
        ("tool_call_count", "fail"),
        ("message_sent", "fail"),
    ], loops["assertions"]
    too_many, silent = loops["assertions"][4]["message"], loops["assertions"][5]["message"]
    assert "4" in too_many and "read" in too_many, too_many
    assert "not sent" in silent, silent
    loop, closest = loops["assertions"][1]["message"], loops["assertions"][2]["message"]
    assert "called 'read' with the same arguments 4 times in a row (calls 1 to 4)" in loop, loop
    assert "the closest, tool call 1 of run" in closest, closest
    assert 'path: expected "other.md", found "missing.md"' in closest, closest


def test_a_reply_cut_at_the_output_limit_is_not_a_completed_run(record_run: dict[str, Any]) -> None:
    """The model stopped at its output limit (finish_reason "length"): OpenClaw records the
    run's stop reason 'length' and its status as a success; `run_completed` fails and says
    what happened, and the cut reply is still what the agent said."""
    cut = record_run["scenarios"]["cut"]
    assert _verdicts(cut) == [("run_completed", "fail"), ("reply_contains", "pass")], cut
    said = cut["assertions"][0]["message"]
    assert "1 run of 1 did not complete" in said, said
    assert "stop reason 'length' (the model's answer was cut at its output limit)" in said, said
    assert "final status 'success'" in said, said


# --- messages sent through OpenClaw's Telegram channel -----------------------------------------


def test_the_contracts_bot_token_is_the_fake_bot_apis() -> None:
    assert BOT_TOKEN in (CONTRACTS / "openclaw.json").read_text("utf-8")


def test_a_message_sent_through_telegram_passes_message_sent(record_run: dict[str, Any]) -> None:
    """The agent's `message` call went through the real Telegram channel to the fake Bot API;
    OpenClaw recorded it with its target and text, and `message_sent` passes on that."""
    notifies = record_run["scenarios"]["notifies"]
    assert notifies["status"] == "pass", notifies
    assert _verdicts(notifies) == [
        ("message_sent", "pass"),
        ("message_sent", "pass"),
        ("message_not_sent", "pass"),
        ("run_completed", "pass"),
    ], notifies["assertions"]
    said = notifies["assertions"][0]["message"]
    assert said.startswith(
        "a message to 'telegram:123456789' containing 'ready for pickup' was sent: run "
    ), said
    assert said.endswith(
        " via message to 'telegram:123456789': \"Order 4521 is ready for pickup.\""
    ), said


def test_a_message_sent_fails_message_not_sent(record_run: dict[str, Any]) -> None:
    quiet = record_run["scenarios"]["stays-quiet"]
    assert quiet["status"] == "fail", quiet
    assert _verdicts(quiet) == [("message_not_sent", "fail"), ("message_sent", "fail")], quiet
    sent, other = quiet["assertions"][0]["message"], quiet["assertions"][1]["message"]
    assert sent.startswith("a message to 'telegram:123456789' was sent: run "), sent
    assert sent.endswith(': "Order 4521 is ready for pickup."'), sent
    assert "a message containing 'delayed' was not sent in run " in other, other
    assert "(1 message sent: run " in other, other


def test_the_fake_bot_api_received_each_message(record_run: dict[str, Any]) -> None:
    """What the record says was sent is what Telegram's Bot API was asked to send: one
    `sendMessage` per scenario that sent, on the real wire format."""
    bot_api: FakeTelegramBotApi = record_run["bot_api"]
    assert [(m["chat_id"], m["text"]) for m in bot_api.sent_messages()] == [
        ("123456789", "Order 4521 is ready for pickup.")
    ] * 2, bot_api.requests
    # The channel really started against it (the bot's identity, then its update poll).
    methods = [r.method for r in bot_api.requests]
    assert methods[0] == "getMe" and "getUpdates" in methods, methods
    assert {r.token for r in bot_api.requests} == {BOT_TOKEN}


# --- each tool call with its arguments in the JSON report -------------------------------------


def _tools(scenario: dict[str, Any]) -> list[tuple[str, Any, bool]]:
    return [(t["name"], t["args"], t["args_cut"]) for t in scenario["evidence"]["tools"]]


def test_the_report_lists_each_call_with_its_arguments(record_run: dict[str, Any]) -> None:
    acts = record_run["scenarios"]["acts"]
    assert _tools(acts) == [
        ("write", {"path": "notes/order.md", "content": "order 4521\nconfirmed\n"}, False)
    ], acts["evidence"]
    loops = record_run["scenarios"]["loops"]
    assert _tools(loops) == [("read", {"path": "missing.md"}, False)] * 4, loops["evidence"]
    # Matched to the log's calls: the log's timing stays.
    assert all(t["started_at"] for t in loops["evidence"]["tools"])
    notifies = record_run["scenarios"]["notifies"]
    send = {
        "action": "send",
        "channel": "telegram",
        "target": "123456789",
        "message": "Order 4521 is ready for pickup.",
    }
    assert _tools(notifies) == [("message", send, False)], notifies["evidence"]
