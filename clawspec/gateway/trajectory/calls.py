"""A run's tool calls, from its `tool.call` and `tool.result` events, Tool Search's wrappers
taken out (`clawspec.gateway.tool_search`): the calls the gateway refused as not found, the
sub-agents `sessions_spawn` started, and the calls OpenClaw recorded cut whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from clawspec.gateway.tool_search import CONTROLS, SPAWN_TOOL, WRAPPERS, wrapper_call_id
from clawspec.gateway.trajectory.cuts import (
    EVENT_SIZE_LIMIT,
    args_cuts,
    bound_detail,
    bound_marker,
)
from clawspec.gateway.trajectory.events import Event, ToolCallData, ToolResultData, event_data
from clawspec.gateway.trajectory.layout import agent_of
from clawspec.gateway.trajectory.values import SubagentRef, ToolCall

# The answer OpenClaw gives a call to a tool it does not offer; no tool ran.
_NOT_FOUND = "Tool {name} not found"
# What a tool call is named when OpenClaw recorded it without its name (an event it cut whole).
UNKNOWN_TOOL = "(name not recorded)"


def _result_text(result: Any) -> str | None:
    """The text parts of a tool result's `content`, joined."""
    content = result.get("content") if isinstance(result, dict) else None
    if not isinstance(content, list):
        return None
    parts = [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n".join(parts) if parts else None


def _code_call_count(text: str | None) -> int | None:
    """How many tools a `tool_search_code` call's code called, from the telemetry its answer
    carries (`{"telemetry": {"callCount": N, …}, …}` on 2026.9.6), else None."""
    try:
        answer = json.loads(text) if text else None
    except json.JSONDecodeError:
        return None
    telemetry = answer.get("telemetry") if isinstance(answer, dict) else None
    count = telemetry.get("callCount") if isinstance(telemetry, dict) else None
    return count if type(count) is int else None


def _spawned(name: str, result: ToolResultData | None) -> SubagentRef | None:
    if name != SPAWN_TOOL or result is None or not result.success:
        return None
    details = result.result.get("details") if isinstance(result.result, dict) else None
    if not isinstance(details, dict):
        return None
    key, run = details.get("childSessionKey"), details.get("runId")
    agent = agent_of(key) if isinstance(key, str) else None
    if not isinstance(key, str) or agent is None:
        return None
    return SubagentRef(agent, key, run if isinstance(run, str) else None)


def whole_cut(event: Event) -> str | None:
    """How OpenClaw cut the event, when it kept only its marker as the data, else None."""
    data = event.envelope.data
    if data is None or bound_marker(data) != EVENT_SIZE_LIMIT:
        return None
    return "cut by OpenClaw " + bound_detail(EVENT_SIZE_LIMIT, data)


def read_tool_calls(
    events: Iterable[Event],
    results: Mapping[str, ToolResultData],
    where: str,
    cap: int,
) -> list[ToolCall]:
    """The run's calls with Tool Search's controls taken out (clawspec.gateway.tool_search):
    a wrapper whose inner call is recorded is that call; a `tool_call` without one is its
    target, refused (nothing ran); a `tool_search_code` without one is kept, its arguments
    unknown, unless its answer says its code called nothing; `tool_search`/`tool_describe`
    only look tools up."""
    records: list[tuple[Event, ToolCallData | None]] = [
        (e, None if whole_cut(e) is not None else event_data(e, ToolCallData, where))
        for e in events
    ]
    wrapped = {
        outer
        for _, call in records
        if call is not None
        and call.name not in CONTROLS
        and (outer := wrapper_call_id(call.toolCallId, call.name))
    }
    names = {call.toolCallId: call.name for _, call in records if call is not None}
    out: list[ToolCall] = []
    for event, call in records:
        if call is None:  # OpenClaw cut the event whole: a call, of a tool not known
            out.append(
                ToolCall(
                    tool_call_id=f"(event {event.seq})",
                    name=UNKNOWN_TOOL,
                    args=None,
                    args_known=False,
                    success=None,
                    refused=False,
                    result_text=None,
                    note=f"recorded without its name and arguments, its event {whole_cut(event)}",
                    name_known=False,
                )
            )
            continue
        result = results.get(call.toolCallId)
        text = _result_text(result.result) if result else None
        success = result.success if result else None
        cut_note = f"arguments over {cap} bytes: not read" if event.cut else None
        outer = wrapper_call_id(call.toolCallId, call.name)
        through = names.get(outer) if outer else None
        if call.name in WRAPPERS and call.toolCallId in wrapped:
            continue  # its inner calls are recorded: they are the calls
        if call.name in CONTROLS and call.name not in WRAPPERS:
            continue  # a look-up
        if call.name == "tool_call":
            args = call.args if isinstance(call.args, dict) else {}
            target = args.get("id")
            inner = None if event.cut else args.get("args", {})
            out.append(
                ToolCall(
                    tool_call_id=call.toolCallId,
                    name=target if isinstance(target, str) else "tool_call",
                    args=inner,
                    args_known=not event.cut,
                    success=success,
                    refused=result is not None,  # ended without an inner call: nothing ran
                    result_text=text,
                    through="tool_call",
                    note=cut_note,
                    cuts=args_cuts(inner),
                )
            )
            continue
        if call.name == "tool_search_code":
            if _code_call_count(text) == 0:
                continue  # its code only searched and described tools
            out.append(
                ToolCall(
                    tool_call_id=call.toolCallId,
                    name=call.name,
                    args=None,
                    args_known=False,
                    success=success,
                    refused=False,
                    result_text=text,
                    note="code mode: the calls its code made are not recorded one by one",
                )
            )
            continue
        refused = success is False and text == _NOT_FOUND.format(name=call.name)
        out.append(
            ToolCall(
                tool_call_id=call.toolCallId,
                name=call.name,
                args=None if event.cut else call.args,
                args_known=not event.cut,
                success=success,
                refused=refused,
                result_text=text,
                through=through,
                spawned=_spawned(call.name, result),
                note=cut_note,
                cuts=() if event.cut else args_cuts(call.args),
            )
        )
    return out
