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
