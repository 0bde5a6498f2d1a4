"""Normalisation, matching and diffs on requests captured from the real OpenClaw gateway."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from clawspec.traffic.attribution import Attributor, trace_id
from clawspec.traffic.diff import Candidate, closest, explain
from clawspec.traffic.normalize import Normalizer, conversation, endpoint_of

FIXTURE = Path(__file__).parent / "fixtures" / "gateway-requests.json"
CAPTURED_WORKSPACE = "/tmp/cap10/state/workspace"
CHAT = "chat/completions"


@pytest.fixture(scope="module")
def captured() -> dict[str, dict[str, Any]]:
    data = json.loads(FIXTURE.read_text("utf-8"))
    return {item["label"]: item for item in data["requests"]}


@pytest.fixture(scope="module")
def normalizer() -> Normalizer:
    return Normalizer.build(literals={CAPTURED_WORKSPACE: "<clawspec:workspace>"})


def test_two_runs_of_the_same_hook_message_have_the_same_key(
    captured: dict, normalizer: Normalizer
) -> None:
    first, again = captured["run-1/1"]["body"], captured["run-3/1"]["body"]
    assert first != again  # job id, times, random content id differ on the real gateway
    assert normalizer.key(CHAT, first) == normalizer.key(CHAT, again)


def test_volatile_parts_of_the_gateway_prompt_are_removed(
    captured: dict, normalizer: Normalizer
) -> None:
    text = normalizer.body(captured["run-1/1"]["body"])["messages"][1]["content"]
    assert text.startswith("Job ID: <volatile> | Received: <volatile>\n")
    assert "session=agent:main:cron:<volatile>" in text
    assert "repo=" not in text  # only inside a git checkout: see the next test
    assert "Reference UTC: <volatile>\n" in text  # the zone is clock text too
    assert "Write it [script:write-file] run 1" in text  # the hook message itself stays
    system = normalizer.body(captured["run-1/1"]["body"])["messages"][0]["content"]
    assert CAPTURED_WORKSPACE not in system and "Current date: <volatile>" in system
    # OpenClaw lists its bundled skills by absolute path, and only those whose binaries the
    # machine has: they do not count at all (see the machine test below)
    raw = captured["run-1/1"]["body"]["messages"][0]["content"]
    assert "/.cache/openclaw/app/node_modules/openclaw/skills/weather/SKILL.md" in raw
    assert "<name>weather</name>" not in system and "node_modules" not in system


PROJECT_MEMORY = (
    "For every repository-specific memory entry you write, add <!-- project: path:{root} --> "
    "on the same line. Do not project-scope user-level preferences, standing intents, or facts "
    "that are not specific to this repository."
)


def _outside_git(body: dict[str, Any]) -> dict[str, Any]:
    """The captured request as OpenClaw sends it when the workspace is not in a git checkout."""
    plain = json.loads(json.dumps(body))
    user = plain["messages"][1]["content"]
    plain["messages"][1]["content"] = user.replace(f"repo={CAPTURED_WORKSPACE} | ", "")
    assert plain["messages"][1]["content"] != user
    return plain


def _inside_git(body: dict[str, Any], root: str, extra_context: str = "") -> dict[str, Any]:
    """... and inside a clone at `root` (seen on openclaw@2026.9.6): `repo=` in the Runtime
    line and the project-memory instruction as a context section before `## Runtime`."""
    cloned = _outside_git(body)
    user = cloned["messages"][1]["content"]
    cloned["messages"][1]["content"] = user.replace("| host=vm | ", f"| host=vm | repo={root} | ")
    system = cloned["messages"][0]["content"]
    memory = PROJECT_MEMORY.format(root=root)
    section = f"{extra_context}\n\n{memory}" if extra_context else memory
    cloned["messages"][0]["content"] = system.replace(
        "\n## Runtime Context\n", f"\n## Subagent Context\n{section}\n## Runtime Context\n", 1
    )
    assert "## Subagent Context" in cloned["messages"][0]["content"]
    return cloned


def test_a_recording_made_outside_a_git_checkout_replays_inside_one(
    captured: dict, normalizer: Normalizer
) -> None:
    """The example workflow replays from a clone: OpenClaw then names the git root in its
    Runtime line and adds a project-memory instruction, neither of which was recorded."""
    body = captured["run-1/1"]["body"]
    recorded = normalizer.key(CHAT, _outside_git(body))
    assert normalizer.key(CHAT, _inside_git(body, "/github/workspace")) == recorded
    assert normalizer.key(CHAT, _inside_git(body, "/home/u/repo")) == recorded
    # other context in the same section stays, and still has to match
    with_context = _inside_git(body, "/github/workspace", extra_context="Task: review the draft")
    without_memory = json.loads(json.dumps(with_context))
    without_memory["messages"][0]["content"] = without_memory["messages"][0]["content"].replace(
        "\n\n" + PROJECT_MEMORY.format(root="/github/workspace"), ""
    )
    assert normalizer.key(CHAT, with_context) == normalizer.key(CHAT, without_memory)
    assert normalizer.key(CHAT, with_context) != recorded


def test_a_recording_replays_on_a_machine_with_other_binaries_and_no_shell(
    captured: dict, normalizer: Normalizer
) -> None:
    """OpenClaw lists its bundled skills only where their binaries are installed, and names the
    shell only where SHELL is set: a container (the action's image) differs from the machine
    that recorded. The user's own skills still count."""
    body = captured["run-1/1"]["body"]
    recorded = normalizer.key(CHAT, body)
    system = body["messages"][0]["content"]
    bundled = re.search(
        r"  <skill>\n    <name>weather</name>\n.*?</skill>\n", system, flags=re.DOTALL
    )
    assert bundled and "/node_modules/openclaw/skills/weather/" in bundled.group(0)
    container = json.loads(json.dumps(body))
    container["messages"][0]["content"] = system.replace(bundled.group(0), "")
    user = container["messages"][1]["content"]
    container["messages"][1]["content"] = user.replace(" | shell=bash", "")
    assert container["messages"][1]["content"] != user
    assert normalizer.key(CHAT, container) == recorded
    # a skill of the workspace is the user's: dropping it is a change
    workspace_skill = system.replace(
        "</available_skills>",
        "  <skill>\n    <name>mine</name>\n    <description>d</description>\n"
        f"    <location>{CAPTURED_WORKSPACE}/skills/mine/SKILL.md</location>\n  </skill>\n"
        "</available_skills>",
    )
    changed = json.loads(json.dumps(body))
    changed["messages"][0]["content"] = workspace_skill
    assert normalizer.key(CHAT, changed) != recorded


def test_a_conversation_runtime_line_without_a_shell_matches_one_with_it(
    normalizer: Normalizer,
) -> None:
    """In a conversation's first message the shell is not the line's last field: the line
    recorded where SHELL was set reads, normalised, exactly as the same line from a container
    (no SHELL); another channel is still a change."""
    line = (
        "Runtime: agent=concierge | session=agent:concierge:clawspec:6591e93a334845a0 | "
        "host=vm | os=Linux 6.18 (x64) | node=v24.22.3 | model=fake/fake-model | "
        "default_model=fake/fake-model{shell} | channel={channel} | capabilities=markdowndetails"
    )

    def key(shell: str, channel: str = "webchat") -> str:
        text = line.format(shell=shell, channel=channel)
        return normalizer.key(CHAT, {"messages": [{"role": "user", "content": text}]})

    assert key(" | shell=bash") == key("") == key(" | shell=/usr/bin/zsh")
    assert key("", channel="telegram") != key("")
    normalised = normalizer.body({"content": line.format(shell=" | shell=bash", channel="x")})
    assert "default_model=fake/fake-model | channel=x" in normalised["content"]


def test_tool_call_ids_and_spawned_session_ids_do_not_count(
    captured: dict, normalizer: Normalizer
) -> None:
    body = normalizer.body(captured["spawn/2"]["body"])
    assert "id" not in body["messages"][2]["tool_calls"][0]
    assert "tool_call_id" not in body["messages"][3]
    assert '"childSessionKey": "agent:main:subagent:<volatile>"' in body["messages"][3]["content"]


def test_a_different_tool_result_is_a_different_key_and_the_diff_names_it(
    captured: dict, normalizer: Normalizer
) -> None:
    now, then = captured["run-3/2"]["body"], captured["run-1/2"]["body"]
    assert normalizer.key(CHAT, now) != normalizer.key(CHAT, then)
    lines = explain(CHAT, normalizer.body(now), Candidate("2.json", CHAT, normalizer.body(then)))
    assert lines == [
        "messages[3] (tool) changed:",
        "  -Successfully wrote 20 bytes to out.md",
        "  +No changes made to out.md. The file already has identical content.",
    ]


def test_the_closest_recording_is_the_one_sharing_most_messages(
    captured: dict, normalizer: Normalizer
) -> None:
    recorded = [
        Candidate(name, CHAT, normalizer.body(captured[label]["body"]))
        for name, label in (("1.json", "run-1/1"), ("2.json", "run-1/2"), ("3.json", "spawn/3"))
    ]
    changed = normalizer.body(captured["run-3/2"]["body"])
    best = closest(CHAT, changed, recorded)
    assert best is not None and best.name == "2.json"


def test_changed_model_tools_and_missing_messages_are_each_named() -> None:
    then = {
        "model": "a",
        "tools": [{"function": {"name": "read"}}, {"function": {"name": "exec"}}],
        "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
    }
    now = {
        "model": "b",
        "tools": [{"function": {"name": "read"}}, {"function": {"name": "write"}}],
        "messages": [{"role": "system", "content": "s"}],
    }
    assert explain(CHAT, now, Candidate("1.json", CHAT, then)) == [
        'model: recorded "a", now "b"',
        "tools: added 'write'; removed 'exec'",
        "messages[1] (user) is missing (recorded, not sent now)",
    ]


@pytest.mark.parametrize(
    ("path", "endpoint"),
    [
        ("/v1/chat/completions", "chat/completions"),
        ("/v1/responses", "responses"),
        ("/v1/messages?beta=true", "messages"),
        ("/v1/models", None),
        ("/v1/embeddings", None),
    ],
)
def test_endpoint_is_told_by_the_path(path: str, endpoint: str | None) -> None:
    assert endpoint_of(path) == endpoint


def test_conversation_labels_of_the_three_apis() -> None:
    anthropic = {"system": "be brief", "messages": [{"role": "user", "content": "hi"}]}
    assert [i.label for i in conversation("messages", anthropic)] == [
        "system",
        "messages[0] (user)",
    ]
    responses = {
        "instructions": "x",
        "input": [{"role": "user", "content": "a"}, {"type": "function_call_output"}],
    }
    assert [i.label for i in conversation("responses", responses)] == [
        "instructions",
        "input[0] (user)",
        "input[1] (function_call_output)",
    ]


def test_literals_are_substituted_for_storage_and_restored_for_replay() -> None:
    normalizer = Normalizer.build(literals={"/w/a": "<clawspec:workspace>"})
    stored = normalizer.substitute({"lines": ['data: {"path": "/w/a/out.md"}']})
    assert stored == {"lines": ['data: {"path": "<clawspec:workspace>/out.md"}']}
    other = Normalizer.build(literals={"/w/b": "<clawspec:workspace>"})
    assert other.restore(stored) == {"lines": ['data: {"path": "/w/b/out.md"}']}


# -- attribution -------------------------------------------------------------------------------
def test_sub_agent_calls_follow_their_parents_trace(captured: dict) -> None:
    attributor = Attributor()
    spawn = attributor.register("c::spawn", "Delegate [script:spawn]")
    write = attributor.register("c::write", "Write it [script:write-file] run 1")
    parent, child = captured["spawn/2"], captured["spawn/3"]
    assert trace_id(parent["headers"]) == trace_id(child["headers"])
    assert attributor.attribute(parent["headers"], parent["body"]) is spawn
    # the child's own messages never mention the parent's hook message
    assert "Delegate [script:spawn]" not in json.dumps(child["body"])
    assert attributor.attribute(child["headers"], child["body"]) is spawn
    writer = captured["run-1/1"]
    assert attributor.attribute(writer["headers"], writer["body"]) is write


def test_the_longest_matching_hook_message_wins() -> None:
    attributor = Attributor()
    short = attributor.register("c::a", "do X")
    long = attributor.register("c::b", "do X and Y")
    body = {"messages": [{"role": "user", "content": "Task: b\n---\ndo X and Y"}]}
    assert attributor.attribute({}, body) is long
    assert attributor.attribute({}, {"messages": [{"role": "user", "content": "do X"}]}) is short


def test_a_lone_running_scenario_gets_requests_nobody_else_claims() -> None:
    attributor = Attributor()
    assert attributor.attribute({}, {"messages": []}) is None
    only = attributor.register("c::a", "hello")
    assert attributor.attribute({}, {"messages": []}) is only
    attributor.register("c::b", "other")
    assert attributor.attribute({}, {"messages": []}) is None


def test_a_new_trace_with_no_scenarios_message_is_the_gateways_own_run() -> None:
    # One scenario's hook run failed; the gateway reports it to the main session, whose run
    # calls the model in a new trace while another scenario is the only one still running.
    attributor = Attributor()
    running = attributor.register("c::delegates", "Delegate the summary")
    tp = {"traceparent": "00-" + "4" * 32 + "-" + "b" * 16 + "-01"}
    event = "System: Hook writes-note (error): LLM request failed"
    assert attributor.attribute(tp, {"messages": [{"role": "user", "content": event}]}) is None
    # the same request from a gateway that propagates no trace context: the lone scenario's
    assert attributor.attribute({}, {"messages": [{"role": "user", "content": event}]}) is running


def test_a_second_scenario_with_the_same_message_waits_until_the_first_is_bound() -> None:
    attributor = Attributor()
    first = attributor.register("c::a", "same")
    started: list[float] = []

    def second() -> None:
        attributor.register("d::a", "same", wait_s=10)
        started.append(time.monotonic())

    thread = threading.Thread(target=second)
    thread.start()
    time.sleep(0.3)
    assert started == []  # still waiting: a new trace could belong to either
    bound_at = time.monotonic()
    tp = {"traceparent": "00-" + "a" * 32 + "-" + "b" * 16 + "-01"}
    assert attributor.attribute(tp, {"messages": [{"content": "same"}]}) is first
    thread.join(5)
    assert started and started[0] >= bound_at


def test_a_conversation_holds_its_first_message_until_it_ends() -> None:
    # Every turn's request carries the first turn's message in its history, with no unique id
    # beside it: a second scenario with that message starts only once the conversation ended.
    attributor = Attributor()
    talk = attributor.register("c::talk", "My name is Zed.", whole=True)
    started: list[float] = []

    def second() -> None:
        attributor.register("c::talk@b", "My name is Zed.", wait_s=10, whole=True)
        started.append(time.monotonic())

    thread = threading.Thread(target=second)
    thread.start()
    tp = {"traceparent": "00-" + "c" * 32 + "-" + "b" * 16 + "-01"}
    assert attributor.attribute(tp, {"messages": [{"content": "My name is Zed."}]}) is talk
    time.sleep(0.3)
    assert started == []  # bound, but the conversation's later turns would still be ambiguous
    ended_at = time.monotonic()
    attributor.release(talk)
    thread.join(5)
    assert started and started[0] >= ended_at
    # The next conversation's requests are its own, although the ended one sent the same text.
    (later,) = [r for r in attributor._registrations if r.scenario == "c::talk@b"]
    tp2 = {"traceparent": "00-" + "d" * 32 + "-" + "b" * 16 + "-01"}
    assert attributor.attribute(tp2, {"messages": [{"content": "My name is Zed."}]}) is later


def test_a_new_trace_continuing_a_finished_scenario_stays_with_it() -> None:
    # the sub-agent's result announced back to the parent: a new trace, after the scenario ended
    attributor = Attributor()
    first = attributor.register("c::a", "Review it")
    opening = "Job ID: 1111 | Task: a\n---\nReview it"
    tp1 = {"traceparent": "00-" + "1" * 32 + "-" + "b" * 16 + "-01"}
    assert attributor.attribute(tp1, {"messages": [{"content": opening}]}) is first
    attributor.release(first)
    second = attributor.register("d::a", "Review it")  # same hook message, still running
    tp2 = {"traceparent": "00-" + "2" * 32 + "-" + "b" * 16 + "-01"}
    assert (
        attributor.attribute(tp2, {"messages": [{"content": "Job ID: 2222\nReview it"}]}) is second
    )
    announce = {"messages": [{"content": opening}, {"content": "child finished"}]}
    tp3 = {"traceparent": "00-" + "3" * 32 + "-" + "b" * 16 + "-01"}
    assert attributor.attribute(tp3, announce) is first


def test_a_sub_agent_prompt_made_in_a_git_checkout_matches_one_made_outside(
    normalizer: Normalizer,
) -> None:
    """In a sub-agent's prompt OpenClaw puts the project-memory instruction of a git checkout
    after blank lines, right before `## Runtime`: outside a checkout the line follows at once."""
    instruction = (
        "For every repository-specific memory entry you write, add <!-- project: path:/w/brand"
        " --> on the same line. Do not project-scope user-level preferences, standing intents, "
        "or facts that are not specific to this repository."
    )
    outside = "- Your session: agent:brand:subagent:1.\n## Runtime\nCurrent model identity: m"
    inside = outside.replace(".\n## Runtime", f".\n\n\n{instruction}\n## Runtime")
    assert inside != outside
    assert normalizer.text(inside) == normalizer.text(outside)


def test_a_sub_agents_runtime_in_the_announced_result_is_volatile() -> None:
    # OpenClaw announces a finished sub-agent to the conversation's session with its runtime,
    # which differs between recording and replay.
    normalizer = Normalizer.build()
    text = "Filed.\n\nStats: runtime {} • tokens 220 (in 200 / out 20)"
    body = {"messages": [{"role": "user", "content": text.format("3s")}]}
    again = {"messages": [{"role": "user", "content": text.format("2s")}]}
    other = {"messages": [{"role": "user", "content": text.format("2s").replace("220", "221")}]}
    assert normalizer.key("/v1/chat", body) == normalizer.key("/v1/chat", again)
    assert normalizer.key("/v1/chat", body) != normalizer.key("/v1/chat", other)


def test_a_prompt_naming_a_secret_matches_its_masked_recording(normalizer: Normalizer) -> None:
    """A cassette holds `***` where the live request has the secret: both read the same."""
    from clawspec import secrets
    from clawspec.traffic.cassette import redact_data

    live = {"messages": [{"role": "user", "content": "Use token hunt-secret-0123456789 now"}]}
    with secrets.scope({}) as registry:
        registry.add("hunt-secret-0123456789")
        recorded = redact_data(live)
        assert recorded["messages"][0]["content"] == "Use token *** now"
        assert normalizer.key("chat", live) == normalizer.key("chat", recorded)
    other = {"messages": [{"role": "user", "content": "Use token *** later"}]}
    assert normalizer.key("chat", live) != normalizer.key("chat", other)
