"""How a conversation's turns run, through the real `clawspec run` CLI in target mode against a
local server speaking OpenClaw's chat wire format (127.0.0.1): a turn without a reply (5xx, a cut
answer) ends the conversation and leaves the scenario's `then` unjudged; `stop_on_failure`
(scenario or `defaults`) governs turns that replied and failed; an interrupt signal lets the
running turn finish and sends no later turn; a reply holding a secret is masked in every output;
a long reply is judged whole and cut everywhere but the JSON report; hostile text breaks no
output; `--dry-run` lists the turns without contacting anything."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clawspec.cli import main
from clawspec.reports.turns import REPLY_CHARS
from tests.support.chat_api import ChatServer
from tests.support.hang_guard import wait_until

TOKEN = "gw-token-turns-cli-4e8b2d"
HOOKS_TOKEN = "hooks-token-turns-cli-91c3aa"
HEADER = """\
version: "1.0"
target: {type: skill, path: skills/news}
"""
ROOT = Path(__file__).parents[2]


def _target(monkeypatch: pytest.MonkeyPatch, server: ChatServer) -> None:
    monkeypatch.setenv("CLAWSPEC_GATEWAY_BASE_URL", server.base_url)
    monkeypatch.setenv("CLAWSPEC_HOOKS_TOKEN", HOOKS_TOKEN)
    monkeypatch.setenv("CLAWSPEC_GATEWAY_AUTH_TOKEN", TOKEN)


def _report(workspace: Path) -> dict[str, Any]:
    return json.loads((workspace / "reports" / "clawspec-report.json").read_text("utf-8"))


def _chats(server: ChatServer) -> list[str]:
    """The user's messages the server was sent, in order."""
    return [
        str(r.body["messages"][-1]["content"])
        for r in server.requests
        if r.method == "POST" and isinstance(r.body, dict)
    ]


def _run(
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *argv: str,
) -> tuple[int, str, ChatServer]:
    """`clawspec run .` against a fresh chat server: exit code, terminal output, the server."""
    with ChatServer(TOKEN) as server:
        _target(monkeypatch, server)
        code = main(["run", ".", *argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, captured.out + captured.err, server


def _turns(result: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(t["index"], t["say"], t["reply"], t["status"], t["message"]) for t in result["turns"]]


def _checks(records: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(a["turn"], a["phase"], a["index"], a["type"], a["status"]) for a in records]


# --- a turn without a reply ends the conversation -------------------------------------------

NO_REPLY = (
    HEADER
    + """defaults: {timeout: 5}
scenarios:
  - name: breaks
    turns:
      - say: "hello there"
        then:
          - {type: reply_contains, text: "echo: hello"}
      - say: "%s"%s
      - say: "never sent"
        then:
          - {type: reply_contains, text: "never"}
    then:
      - {type: reply_contains, text: "hello"}
"""
)
CHAT = "POST {url}/v1/chat/completions"


@pytest.mark.parametrize(
    ("say", "turn_timeout", "cause"),
    [
        (
            "boom [status:502][said:upstream exploded]",
            None,
            CHAT + ' → 502: the gateway answered "upstream exploded" (its log says why)',
        ),
        ("boom [cut]", None, CHAT + ": the gateway's answer was cut off ("),
        (
            "gone [status:404][said:Not Found]",
            None,
            CHAT + " → 404 (Not Found): the gateway's OpenAI-compatible chat endpoint is off",
        ),
        # The turn's own timeout, not the scenario's 5 s: 1 s plus the HTTP grace (5 s).
        ("slow [sleep:6.6]", 1, "no reply within 1 s (" + CHAT + "; waited 6."),
    ],
    ids=["5xx", "cut answer", "404", "turn timeout"],
)
def test_a_turn_without_a_reply_ends_the_conversation_and_errors_the_scenario(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    say: str,
    turn_timeout: int | None,
    cause: str,
) -> None:
    timeout = "" if turn_timeout is None else f"\n        timeout: {turn_timeout}"
    write_contract(NO_REPLY % (say, timeout))
    code, out, server = _run(workspace, monkeypatch, capsys)
    assert code == 1
    assert _chats(server) == ["hello there", say]  # turn 3 was never sent
    (result,) = _report(workspace)["scenarios"]
    first, second = result["turns"]  # turn 3 is left out of the report
    assert (first["index"], first["reply"], first["status"]) == (0, "echo: hello there", "pass")
    assert _checks(first["assertions"]) == [(0, "then", 0, "reply_contains", "pass")]
    assert (second["index"], second["say"], second["reply"], second["status"]) == (
        1,
        say,
        None,
        "error",
    )
    why = "no reply: " + cause.format(url=server.base_url)
    assert second["message"].startswith(why), second["message"]
    assert second["assertions"] == []
    # The scenario's `then` was not judged on part of the conversation.
    assert result["assertions"] == []
    assert result["status"] == "error"
    assert result["message"] == f"turn 2: {second['message']}"
    assert result["restates"] is None
    assert "ERROR case.clawspec.yaml::breaks" in out
    assert f"turn 2: {why}" in out
    assert "turn 2 replied: (no reply)" in out
    assert "turn 3" not in out
    if turn_timeout is not None:
        # The server still holds the answer ClawSpec gave up on; let its write to the closed
        # connection fail (socketserver prints that) here rather than in the next test.
        time.sleep(1.0)


# --- stop_on_failure governs turns that replied and failed ----------------------------------

FAILING_MIDDLE = """\
  - name: middle-fails%s
    turns:
      - say: "first"
        then:
          - {type: reply_contains, text: "echo: first"}
      - say: "second"
        then:
          - {type: reply_contains, text: "goodbye"}
      - say: "third"
        then:
          - {type: reply_contains, text: "nope"}
    then:
      - {type: reply_contains, text: "echo: first"}
"""


@pytest.mark.parametrize("setting", ["unset", "false over defaults"])
def test_a_failed_turn_does_not_stop_the_conversation_by_default(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    setting: str,
) -> None:
    if setting == "unset":
        text = "defaults: {timeout: 5}\nscenarios:\n" + FAILING_MIDDLE % ""
    else:  # the scenario's own setting wins over the defaults'
        text = "defaults: {timeout: 5, stop_on_failure: true}\nscenarios:\n" + FAILING_MIDDLE % (
            "\n    stop_on_failure: false"
        )
    write_contract(HEADER + text)
    code, out, server = _run(workspace, monkeypatch, capsys)
    assert code == 1
    assert _chats(server) == ["first", "second", "third"]
    (result,) = _report(workspace)["scenarios"]
    goodbye = "then[0] (reply_contains): the reply does not contain 'goodbye' (ignoring case): "
    nope = "then[0] (reply_contains): the reply does not contain 'nope' (ignoring case): "
    assert _turns(result) == [
        (0, "first", "echo: first", "pass", ""),
        (1, "second", "echo: second", "fail", goodbye + '"echo: second"'),
        (2, "third", "echo: third", "fail", nope + '"echo: third"'),
    ]
    assert [_checks(t["assertions"]) for t in result["turns"]] == [
        [(0, "then", 0, "reply_contains", "pass")],
        [(1, "then", 0, "reply_contains", "fail")],
        [(2, "then", 0, "reply_contains", "fail")],
    ]
    # The scenario's `then` is judged on the whole conversation.
    assert _checks(result["assertions"]) == [(None, "then", 0, "reply_contains", "pass")]
    assert result["status"] == "fail"
    assert result["message"] == "turn 2, " + goodbye + '"echo: second"'
    assert result["restates"] == {"phase": "then", "index": 0, "turn": 1}
    assert "FAIL  case.clawspec.yaml::middle-fails" in out
    failures = [line.strip() for line in out.splitlines() if "middle-fails > turn" in line]
    assert [line.split(" middle-fails > ", 1)[1] for line in failures] == [
        "turn 2, then[0] reply_contains: " + goodbye.split(": ", 1)[1] + '"echo: second"',
        "turn 3, then[0] reply_contains: " + nope.split(": ", 1)[1] + '"echo: third"',
    ]


def test_a_turns_assertion_is_reported_at_its_own_line(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(HEADER + "defaults: {timeout: 5}\nscenarios:\n" + FAILING_MIDDLE % "")
    _run(workspace, monkeypatch, capsys)
    (result,) = _report(workspace)["scenarios"]
    assert [t["line"] for t in result["turns"]] == [7, 10, 13]  # each turn's `say`
    assert [a["line"] for t in result["turns"] for a in t["assertions"]] == [9, 12, 15]


@pytest.mark.parametrize("where", ["scenario", "defaults"])
def test_stop_on_failure_leaves_the_later_turns_out(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    where: str,
) -> None:
    if where == "scenario":
        text = "defaults: {timeout: 5}\nscenarios:\n" + FAILING_MIDDLE % (
            "\n    stop_on_failure: true"
        )
    else:
        text = "defaults: {timeout: 5, stop_on_failure: true}\nscenarios:\n" + FAILING_MIDDLE % ""
    write_contract(HEADER + text)
    code, out, server = _run(workspace, monkeypatch, capsys)
    assert code == 1
    assert _chats(server) == ["first", "second"]  # turn 3 was never sent
    (result,) = _report(workspace)["scenarios"]
    goodbye = "then[0] (reply_contains): the reply does not contain 'goodbye' (ignoring case): "
    assert _turns(result) == [
        (0, "first", "echo: first", "pass", ""),
        (1, "second", "echo: second", "fail", goodbye + '"echo: second"'),
    ]
    # The status stays the worst verdict; the message says what was left out, and the
    # scenario's `then` is not judged on part of the conversation.
    assert result["status"] == "fail"
    left_out = "turn 3 of 3 was left out: turn 2 failed and stop_on_failure is set"
    assert result["message"] == left_out
    assert result["restates"] is None
    assert result["assertions"] == []
    assert f"middle-fails: {left_out}" in out
    assert "middle-fails > turn 2, then[0] reply_contains" in out


# --- an interrupt signal during a turn ------------------------------------------------------

SLOW_FIRST_TURN = (
    HEADER
    + """defaults: {timeout: 30}
scenarios:
  - name: interrupted
    turns:
      - say: "slow [sleep:2]"
        then:
          - {type: reply_contains, text: "echo: slow"}
      - say: "second"
        then:
          - {type: reply_contains, text: "second"}
      - say: "third"
        then:
          - {type: reply_contains, text: "third"}
    then:
      - {type: reply_contains, text: "slow"}
"""
)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_a_turn_lets_it_finish_and_sends_no_later_turn(
    workspace: Path,
    write_contract: Callable[..., Path],
    sig: signal.Signals,
) -> None:
    write_contract(SLOW_FIRST_TURN)
    with ChatServer(TOKEN) as server:
        env = {
            **os.environ,
            "CLAWSPEC_GATEWAY_BASE_URL": server.base_url,
            "CLAWSPEC_HOOKS_TOKEN": HOOKS_TOKEN,
            "CLAWSPEC_GATEWAY_AUTH_TOKEN": TOKEN,
            "PYTHONPATH": str(ROOT),
        }
        process = subprocess.Popen(
            [sys.executable, "-m", "clawspec", "run", ".", "--junit", "reports/junit.xml"],
            cwd=workspace,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until(lambda: _chats(server) or process.poll() is not None, poll_s=0.02)
        assert _chats(server) == ["slow [sleep:2]"], "turn 1 never reached the server"
        process.send_signal(sig)  # while the server holds turn 1's answer
        out, err = process.communicate(timeout=60)
        time.sleep(0.2)  # a turn sent after the signal would have reached the server by now
        chats = _chats(server)
    assert process.returncode == 130
    assert f"{sig.name}: starting no more scenarios" in err
    assert "Traceback" not in out + err
    assert chats == ["slow [sleep:2]"]  # the server saw exactly one chat request
    report = _report(workspace)
    assert report["interrupted"] is True
    (result,) = report["scenarios"]
    (turn,) = result["turns"]  # turn 1 finished and was judged; turns 2 and 3 are left out
    assert (turn["index"], turn["reply"], turn["status"], turn["message"]) == (
        0,
        "echo: slow [sleep:2]",
        "pass",
        "",
    )
    assert _checks(turn["assertions"]) == [(0, "then", 0, "reply_contains", "pass")]
    assert turn["duration_ms"] >= 1500
    assert result["assertions"] == []  # the scenario's `then` is not judged on part of it
    assert (result["status"], result["message"]) == (
        "error",
        "interrupted: turns 2 to 3 of 3 were not sent",
    )
    assert "interrupted: turns 2 to 3 of 3 were not sent" in out
    junit = ET.parse(workspace / "reports" / "junit.xml").getroot()
    assert "interrupted: turns 2 to 3 of 3 were not sent" in ET.tostring(junit, "unicode")


# --- what the agent said, in every output ---------------------------------------------------

SECRET = "svc-token-7f3a9c1e5d2b"
# The say carries the secret only JSON-escaped (`\u0074` is "t"), so the secret reaches the
# outputs through the reply the server decodes, not through what the user said.
SECRET_SAY = r'tell me [reply:"the key is svc-\u0074oken-7f3a9c1e5d2b"]'


def _outputs(workspace: Path, out: str) -> dict[str, str]:
    reports = workspace / "reports"
    return {
        "json": (reports / "clawspec-report.json").read_text("utf-8"),
        "terminal": out,
        "junit": (reports / "junit.xml").read_text("utf-8"),
        "html": (reports / "report.html").read_text("utf-8"),
    }


ALL_OUTPUTS = ("--junit", "reports/junit.xml", "--report-html", "reports/report.html")


def test_a_reply_holding_a_secret_is_masked_in_every_output(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("REPLY_SVC_TOKEN", SECRET)
    monkeypatch.setenv("CLAWSPEC_SECRET_ENV", "REPLY_SVC_TOKEN")
    write_contract(
        HEADER
        + f"""defaults: {{timeout: 5}}
scenarios:
  - name: leaks
    turns:
      - say: '{SECRET_SAY}'
        then:
          - {{type: reply_contains, text: "the key is"}}
          - {{type: reply_contains, text: "no such words"}}
"""
    )
    code, out, server = _run(workspace, monkeypatch, capsys, *ALL_OUTPUTS)
    assert code == 1
    (sent,) = _chats(server)
    assert SECRET not in sent  # the secret came back only in the reply
    outputs = _outputs(workspace, out)
    for name, text in outputs.items():
        assert SECRET not in text, name
    (result,) = json.loads(outputs["json"])["scenarios"]
    (turn,) = result["turns"]
    assert turn["reply"] == "the key is ***"
    assert turn["say"] == SECRET_SAY  # as written: escaped, so not the secret
    assert [a["status"] for a in turn["assertions"]] == ["pass", "fail"]
    assert "turn 1 replied: the key is ***" in out
    assert "the key is ***" in outputs["junit"]
    assert "the key is ***" in outputs["html"]


def test_a_long_reply_is_judged_whole_and_cut_everywhere_but_the_json_report(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The server echoes the message: the reply is "echo: " and the say, the needle at its end.
    say = "a" * (REPLY_CHARS + 200) + " NEEDLE-AT-THE-END"
    write_contract(
        HEADER
        + f"""defaults: {{timeout: 5}}
scenarios:
  - name: long
    turns:
      - say: "{say}"
        then:
          - {{type: reply_contains, text: "needle-at-the-end"}}
          - {{type: reply_contains, text: "absent words"}}
"""
    )
    code, out, _ = _run(workspace, monkeypatch, capsys, *ALL_OUTPUTS)
    assert code == 1
    outputs = _outputs(workspace, out)
    (result,) = json.loads(outputs["json"])["scenarios"]
    (turn,) = result["turns"]
    assert len(turn["reply"]) > REPLY_CHARS
    assert (turn["say"], turn["reply"]) == (say, f"echo: {say}")  # whole in the JSON report
    assert [(a["type"], a["status"]) for a in turn["assertions"]] == [
        ("reply_contains", "pass"),  # judged on the whole reply
        ("reply_contains", "fail"),
    ]
    assert turn["assertions"][0]["message"] == "the reply contains 'needle-at-the-end'"
    # Every other output shows it cut (the terminal to its own, shorter, line length): the
    # needle past the cut shows nowhere but in the JSON report.
    (replied,) = [line for line in out.splitlines() if "turn 1 replied: " in line]
    shown = replied.split("turn 1 replied: ", 1)[1]
    assert shown.startswith("echo: aaaa") and shown.endswith("…")
    assert len(shown) < REPLY_CHARS
    assert "NEEDLE-AT-THE-END" not in out
    for name in ("junit", "html"):
        text = outputs[name]
        assert "NEEDLE-AT-THE-END" not in text, name
        # The say, cut to REPLY_CHARS: all but the last character kept, then the cut mark.
        longest = max(len(run) for run in re.findall("a+", text))
        assert longest == REPLY_CHARS - 1, name
        assert "a" * (REPLY_CHARS - 1) + "…" in text, name
    junit = ET.fromstring(outputs["junit"])
    assert "echo: aaaa" in ET.tostring(junit, "unicode")


def test_hostile_text_in_say_and_reply_breaks_no_output(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A lone surrogate, control characters and markup, JSON-escaped in the reply the server
    # sends; markup and control characters in what the user says.
    hostile_reply = r'[reply:"\ud800 bell\u0007 nul\u0000 <script>alert(1)</script> ]]>"]'
    write_contract(
        HEADER
        + f"""defaults: {{timeout: 5}}
scenarios:
  - name: hostile
    turns:
      - say: '<script>alert(2)</script> {hostile_reply}'
        then:
          - {{type: reply_contains, text: "bell"}}
          - {{type: reply_matches, pattern: "never there"}}
      - say: "<b>second</b> \\x1b[31mred\\x07 ]]> & more"
        then:
          - {{type: reply_not_contains, text: "<b>"}}
"""
    )
    code, out, server = _run(workspace, monkeypatch, capsys, *ALL_OUTPUTS)
    assert code == 1
    assert len(_chats(server)) == 2
    outputs = _outputs(workspace, out)
    (result,) = json.loads(outputs["json"])["scenarios"]
    first, second = result["turns"]
    assert first["say"] == f"<script>alert(2)</script> {hostile_reply}"
    # The lone surrogate became U+FFFD; the control characters are gone.
    assert first["reply"] == "\ufffd bell nul <script>alert(1)</script> ]]>"
    assert [a["status"] for a in first["assertions"]] == ["pass", "fail"]
    # The report keeps the text, without the terminal's escape sequences and control characters.
    assert second["say"] == "<b>second</b> red ]]> & more"
    assert (second["status"], second["reply"]) == ("fail", "echo: " + second["say"])
    assert (result["status"], result["restates"]) == (
        "fail",
        {"phase": "then", "index": 1, "turn": 0},
    )
    junit = ET.fromstring(outputs["junit"])  # well-formed XML
    assert "turn 1" in ET.tostring(junit, "unicode")
    # Markup the agent or the user wrote is text in the page, never an element.
    assert "<script>alert(" not in outputs["html"] and "<b>second" not in outputs["html"]
    assert "alert(1)" in outputs["html"] and "alert(2)" in outputs["html"]
    assert "\x1b" not in out and "\x07" not in out  # no control character reaches the terminal
    assert "turn 2, then[0] reply_not_contains: the reply contains '<b>'" in out
    assert "turn 1 replied: \ufffd bell nul <script>alert(1)</script> ]]>" in out


def test_a_say_that_renders_to_text_that_is_not_unicode_is_that_turns_error(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # YAML refuses a lone surrogate, but a variable holding bytes that are not UTF-8 gives one.
    monkeypatch.setenv("HOSTILE_SAY", "\udced")
    write_contract(
        HEADER
        + """defaults: {timeout: 5}
scenarios:
  - name: undecodable
    turns:
      - say: "first"
        then:
          - {type: reply_contains, text: "first"}
      - say: "second {{env.HOSTILE_SAY}}"
        then:
          - {type: reply_contains, text: "second"}
"""
    )
    code, out, server = _run(workspace, monkeypatch, capsys, *ALL_OUTPUTS)
    assert code == 1  # not an internal error
    assert _chats(server) == ["first"]
    (result,) = _report(workspace)["scenarios"]
    first, second = result["turns"]
    assert first["status"] == "pass"
    why = (
        "cannot render the turn: 'say' after rendering templates: "
        "Input should be a valid string, unable to parse raw data as a unicode string"
    )
    assert (second["say"], second["reply"], second["status"], second["message"]) == (
        "second {{env.HOSTILE_SAY}}",
        None,
        "error",
        why,
    )
    assert (result["status"], result["message"]) == ("error", f"turn 2: {why}")
    assert f"turn 2: {why}" in out
    ET.parse(workspace / "reports" / "junit.xml")
    assert (workspace / "reports" / "report.html").is_file()


def test_dry_run_lists_each_turn_and_its_assertions_without_contacting_the_server(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_contract(HEADER + "defaults: {timeout: 5}\nscenarios:\n" + FAILING_MIDDLE % "")
    code, out, server = _run(workspace, monkeypatch, capsys, "--dry-run")
    assert code == 0
    assert server.requests == []
    plan = [line for line in out.splitlines() if line.startswith("  ")]
    assert plan == [
        "  turn 1  chat: first",
        "    then[0] reply_contains: text='echo: first'",
        "  turn 2  chat: second",
        "    then[0] reply_contains: text='goodbye'",
        "  turn 3  chat: third",
        "    then[0] reply_contains: text='nope'",
        "  then[0] reply_contains: text='echo: first'",
    ]
    assert not (workspace / "reports" / "clawspec-report.json").exists()


# --- tokens from the chat responses, when nothing else counts them ------------------------------

COUNTED = (
    HEADER
    + """defaults: {timeout: 5}
scenarios:
  - name: counted
    turns:
      - say: "first"
        then:
          - {type: reply_contains, text: "first"}
      - say: "second"
"""
)


def test_without_the_record_or_the_plugin_the_report_counts_the_chat_responses_usage(
    workspace: Path,
    write_contract: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Your own gateway, no openclaw_state_dir and no plugin output: each chat response's
    # `usage` (110 tokens here) is what the report shows for the turns and the conversation.
    write_contract(COUNTED)
    code, out, _ = _run(workspace, monkeypatch, capsys)
    result = _report(workspace)["scenarios"][0]
    tokens = result["evidence"]["tokens"]
    assert (tokens["input"], tokens["output"], tokens["total"], tokens["source"]) == (
        200,
        20,
        220,
        "chat responses",
    )
    assert [t["tokens"] for t in result["turns"]] == [110, 110]
    assert code == 0, out
