"""The scripted model provider: steps answered directly or through Tool Search's `tool_call`."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from tests.support.scripted_provider import ScriptedProvider, offered_tools, through_tool_search

SPAWN_ARGS = {"task": "Review it [script:review]", "taskName": "review", "agentId": "brand"}
SCRIPTS = {
    "spawn": [{"tool": "sessions_spawn", "args": SPAWN_ARGS}, {"text": "Delegated."}],
    "write": [{"tool": "write", "args": {"path": "a.md", "content": "a\n"}}],
    "direct": [{"tool": "sessions_spawn", "args": SPAWN_ARGS, "direct": True}],
    "explicit": [{"tool": "tool_call", "args": {"id": "sessions_spawn", "args": SPAWN_ARGS}}],
    "several": [
        {
            "tool_calls": [
                {"name": "write", "arguments": {"path": "b.md", "content": "b\n"}},
                {"name": "sessions_spawn", "arguments": json.dumps(SPAWN_ARGS)},
            ]
        }
    ],
}

# What OpenClaw 2026.9.6 offers with Tool Search on (its default) and off (`toolSearch: false`).
TOOL_SEARCH_ON = [
    "apply_patch",
    "edit",
    "exec",
    "ls",
    "process",
    "read",
    "write",
    "tool_call",
    "tool_describe",
    "tool_search",
]
TOOL_SEARCH_OFF = ["exec", "read", "write", "sessions_spawn", "sessions_list"]


def _body(script: str, tools: list[str] | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "fake-model",
        "stream": True,
        "messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": f"Do it [script:{script}]"},
        ],
    }
    if tools is not None:
        body["tools"] = [
            {"type": "function", "function": {"name": name, "parameters": {}}} for name in tools
        ]
    return body


def _calls(provider: ScriptedProvider, body: dict[str, Any]) -> list[dict[str, Any]]:
    """POST one chat request and put the streamed tool calls back together, as the SDK does."""
    request = urllib.request.Request(
        f"{provider.base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        text = answer.read().decode()
    calls: dict[int, dict[str, Any]] = {}
    for line in text.splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        for choice in json.loads(line[6:])["choices"]:
            for delta in choice["delta"].get("tool_calls", []):
                call = calls.setdefault(delta["index"], {"id": None, "name": "", "arguments": ""})
                call["id"] = delta.get("id", call["id"])
                call["name"] += delta.get("function", {}).get("name", "")
                call["arguments"] += delta.get("function", {}).get("arguments", "")
    return [
        {"id": c["id"], "name": c["name"], "arguments": json.loads(c["arguments"])}
        for _, c in sorted(calls.items())
    ]


@pytest.fixture
def provider():
    with ScriptedProvider(SCRIPTS) as running:
        yield running


def test_a_tool_not_offered_goes_through_tool_call(provider: ScriptedProvider) -> None:
    calls = _calls(provider, _body("spawn", TOOL_SEARCH_ON))
    assert calls == [
        {
            "id": "call_spawn_0_0",
            "name": "tool_call",
            "arguments": {"id": "sessions_spawn", "args": SPAWN_ARGS},
        }
    ]
    assert provider.chat_requests("spawn")[-1].wrapped == ("sessions_spawn",)


def test_a_tool_offered_directly_is_called_directly(provider: ScriptedProvider) -> None:
    calls = _calls(provider, _body("spawn", TOOL_SEARCH_OFF))
    assert calls == [{"id": "call_spawn_0_0", "name": "sessions_spawn", "arguments": SPAWN_ARGS}]
    assert provider.chat_requests("spawn")[-1].wrapped == ()


def test_a_core_tool_stays_direct_with_tool_search_on(provider: ScriptedProvider) -> None:
    calls = _calls(provider, _body("write", TOOL_SEARCH_ON))
    assert [c["name"] for c in calls] == ["write"]
    assert provider.chat_requests("write")[-1].wrapped == ()


def test_a_direct_step_calls_the_tool_by_name_even_when_not_offered(
    provider: ScriptedProvider,
) -> None:
    # A model that does not know Tool Search: the gateway gets the hidden tool's name.
    calls = _calls(provider, _body("direct", TOOL_SEARCH_ON))
    assert calls == [{"id": "call_direct_0_0", "name": "sessions_spawn", "arguments": SPAWN_ARGS}]
    assert provider.chat_requests("direct")[-1].wrapped == ()


def test_an_explicit_tool_call_step_is_sent_as_written(provider: ScriptedProvider) -> None:
    calls = _calls(provider, _body("explicit", TOOL_SEARCH_ON))
    assert calls == [
        {
            "id": "call_explicit_0_0",
            "name": "tool_call",
            "arguments": {"id": "sessions_spawn", "args": SPAWN_ARGS},
        }
    ]
    assert provider.chat_requests("explicit")[-1].wrapped == ()


def test_only_the_calls_not_offered_are_wrapped(provider: ScriptedProvider) -> None:
    calls = _calls(provider, _body("several", TOOL_SEARCH_ON))
    assert [(c["id"], c["name"]) for c in calls] == [
        ("call_several_0_0", "write"),
        ("call_several_0_1", "tool_call"),
    ]
    assert calls[1]["arguments"] == {"id": "sessions_spawn", "args": SPAWN_ARGS}
    assert provider.chat_requests("several")[-1].wrapped == ("sessions_spawn",)


@pytest.mark.parametrize("tools", [None, ["write", "exec"]])
def test_without_tool_call_offered_the_step_is_sent_as_written(
    provider: ScriptedProvider, tools: list[str] | None
) -> None:
    calls = _calls(provider, _body("spawn", tools))
    assert [c["name"] for c in calls] == ["sessions_spawn"]


def test_offered_tools_reads_the_request() -> None:
    assert offered_tools({}) is None
    assert offered_tools(_body("x", ["write", "tool_call"])) == {"write", "tool_call"}
    calls, wrapped = through_tool_search([{"name": "write", "arguments": {}}], None)
    assert calls == [{"name": "write", "arguments": {}}] and wrapped == ()


def test_a_step_may_say_something_before_its_tool_calls() -> None:
    """`say` streams assistant text first, then the calls: the model's commentary."""
    step = {"say": "Let me write it.", "tool": "write", "args": {"path": "a.md", "content": "a"}}
    with ScriptedProvider({"say": [step]}) as running:
        request = urllib.request.Request(
            f"{running.base_url}/chat/completions",
            data=json.dumps(_body("say", ["write"])).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            chunks = [
                json.loads(line[6:])
                for line in answer.read().decode().splitlines()
                if line.startswith("data: {")
            ]
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    texts = [d["content"] for d in deltas if d.get("content")]
    first_call = next(i for i, d in enumerate(deltas) if d.get("tool_calls"))
    said = next(i for i, d in enumerate(deltas) if d.get("content"))
    assert texts == ["Let me write it."] and said < first_call
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "tool_calls"


# --- conversations: each turn's marker, and answers from the history sent -----------------------

CONVERSATION = {
    "intro": [{"text": "Nice to meet you."}],
    "ask": [
        {
            "recall": r"[Mm]y name is (\w+)",
            "template": "Your name is {}.",
            "else": "I do not know your name.",
        }
    ],
    "two-steps": [{"tool": "write", "args": {"path": "t.md", "content": "t"}}, {"text": "Done."}],
}


def _text(provider: ScriptedProvider, messages: list[dict[str, Any]]) -> str:
    """POST a chat request with `messages` and put the streamed text back together."""
    body = {"model": "fake-model", "stream": True, "messages": messages}
    request = urllib.request.Request(
        f"{provider.base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        lines = answer.read().decode().splitlines()
    chunks = [json.loads(line[6:]) for line in lines if line.startswith("data: {")]
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": f"[Sun 2026-11-29 04:36 UTC] {text}"}


def _assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


@pytest.fixture
def conversation():
    with ScriptedProvider(CONVERSATION) as running:
        yield running


def test_recall_answers_from_an_earlier_turn(conversation: ScriptedProvider) -> None:
    history = [
        {"role": "system", "content": "You are helpful."},
        _user("My name is Zed. [script:intro]"),
        _assistant("Nice to meet you."),
        _user("What is my name? [script:ask]"),
    ]
    assert _text(conversation, history) == "Your name is Zed."
    assert conversation.chat_requests("ask")[-1].step == 0


def test_recall_without_the_earlier_turn_answers_else(conversation: ScriptedProvider) -> None:
    """A session that lost its history: the current message alone is never searched."""
    alone = [_user("My name is Zed, what is my name? [script:ask]")]
    assert _text(conversation, alone) == "I do not know your name."


def test_recall_takes_the_latest_earlier_mention(conversation: ScriptedProvider) -> None:
    history = [
        _user("My name is Ann. [script:intro]"),
        _assistant("Nice to meet you."),
        _user("Sorry, my name is Bo. [script:intro]"),
        _assistant("Nice to meet you."),
        _user("Who am I? [script:ask]"),
    ]
    assert _text(conversation, history) == "Your name is Bo."


def test_each_turn_s_marker_picks_its_script_from_its_first_step(
    conversation: ScriptedProvider,
) -> None:
    first_turn = [
        _user("Write it [script:two-steps]"),
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c0", "type": "function"}]},
        {"role": "tool", "tool_call_id": "c0", "content": "ok"},
    ]
    assert _text(conversation, first_turn) == "Done."  # step 1: one tool step taken
    second_turn = [*first_turn, _assistant("Done."), _user("Hello again [script:intro]")]
    assert _text(conversation, second_turn) == "Nice to meet you."
    third_turn = [*second_turn, _assistant("Nice to meet you."), _user("Again [script:two-steps]")]
    calls = _calls(conversation, {"model": "fake-model", "stream": True, "messages": third_turn})
    assert [c["name"] for c in calls] == ["write"]  # step 0 again: counted from this turn
    assert [(r.script, r.step) for r in conversation.chat_requests()] == [
        ("two-steps", 1),
        ("intro", 0),
        ("two-steps", 0),
    ]


def test_a_marker_routed_in_from_a_sub_agent_does_not_switch_scripts(
    conversation: ScriptedProvider,
) -> None:
    """OpenClaw's completion announce quotes the child's task, marker included."""
    announce = (
        "A background task completed.\ntask: Write kid.md [script:two-steps]\n\n"
        "[Inter-session message] sourceSession=agent:main:subagent:x isUser=false"
    )
    history = [_user("Hi [script:intro]"), _assistant("Nice to meet you."), _user(announce)]
    assert _text(conversation, history) == "Nice to meet you."
    assert conversation.chat_requests()[-1].script == "intro"


def test_a_sub_agents_task_queued_into_the_parents_running_turn_does_not_switch_scripts(
    conversation: ScriptedProvider,
) -> None:
    """A child that ends while its parent's run is still going reaches that run as a queued user
    message quoting its task: the parent's script goes on at its next step."""
    spawn = {
        "id": "c0",
        "type": "function",
        "function": {"name": "sessions_spawn", "arguments": '{"task": "Kid [script:kid]"}'},
    }
    history = [
        _user("Delegate it [script:two-steps]"),
        {"role": "assistant", "content": None, "tool_calls": [spawn]},
        {"role": "tool", "tool_call_id": "c0", "content": "spawned"},
        _user("Queued: the task Kid [script:kid] is done."),
    ]
    assert _text(conversation, history) == "Done."  # two-steps, step 1
    assert [(r.script, r.step) for r in conversation.chat_requests()] == [("two-steps", 1)]
    # A turn of its own naming a script nobody handed on still switches.
    again = [*history, _assistant("Done."), _user("Hello [script:intro]")]
    assert _text(conversation, again) == "Nice to meet you."


def test_a_runs_script_gives_each_run_its_own_steps() -> None:
    """`{"runs": [...]}`: the n-th run (its own marker message) follows the n-th script, cycling;
    a run's later requests (same marker message) stay on its script."""
    runs = {"runs": [[{"tool": "read", "args": {"path": "a"}}], [{"tool": "ls", "args": {}}]]}
    with ScriptedProvider({"vary": runs}) as provider:

        def first_call(run: str) -> str:
            body = _body("vary", [*TOOL_SEARCH_OFF, "ls"])
            body["messages"][-1]["content"] += f" ({run})"
            return _calls(provider, body)[0]["name"]

        assert [first_call(r) for r in ("r1", "r2", "r1", "r3")] == ["read", "ls", "read", "read"]
