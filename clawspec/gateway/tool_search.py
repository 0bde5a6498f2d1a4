"""OpenClaw's Tool Search: a wrapper call counts as the tool it calls.

With Tool Search on (OpenClaw's default since 2026.9.6) the model sees a few control tools and
calls most real tools through one of them: `tool_call {id: "sessions_spawn", args: …}` in the
structured mode, or `openclaw.tools.call(…)` inside `tool_search_code`. The gateway then logs
(and traces) the wrapper and, nested in it, the real call, whose call id names the wrapper's:

    tool=tool_call      toolCallId=call_7
    tool=sessions_spawn toolCallId=tool_search_code:call_7:sessions_spawn:1

(seen on OpenClaw 2026.9.6, for `tool_call` as well as `tool_search_code`). What a run did is
the real calls: a wrapper is replaced by the calls it made; `tool_search` / `tool_describe` only
look tools up and call nothing. A wrapper that ended without an inner call executed nothing
(its target was refused before it ran); one that has not ended yet may still call something.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

WRAPPERS = frozenset({"tool_call", "tool_search_code"})  # call another tool
LOOKUPS = frozenset({"tool_search", "tool_describe"})  # only find and describe tools
CONTROLS = WRAPPERS | LOOKUPS
INNER_PREFIX = "tool_search_code:"
# The tool that starts a sub-agent, once wrappers are unwrapped (the log and the trace alike).
SPAWN_TOOL = "sessions_spawn"

Call = TypeVar("Call")


def wrapper_call_id(call_id: str | None, name: str) -> str | None:
    """The call id of the wrapper an inner call was made through, else None.

    Inner ids read `tool_search_code:<wrapper id>:<tool name>:<n>`; a tool name may itself hold
    colons (`mcp:calendar:create_event`), so the known name is cut off the end, not split on.
    """
    if not call_id or not call_id.startswith(INNER_PREFIX):
        return None
    rest = call_id[len(INNER_PREFIX) :]
    head, sep, number = rest.rpartition(":")
    if sep and number.isdigit() and head.endswith(f":{name}"):
        return head[: -len(name) - 1] or None
    return rest.split(":", 1)[0] or None


@dataclass(frozen=True)
class Unwrapped(Generic[Call]):
    """A run's tool calls with Tool Search's controls taken out."""

    calls: list[Call]  # the real calls, in the order they started
    controls: list[Call]  # the control calls (wrappers and look-ups), in order
    open_wrappers: list[Call]  # wrappers with no inner call that have not ended yet


def unwrap(
    calls: Sequence[Call],
    name: Callable[[Call], str],
    call_id: Callable[[Call], str | None],
    ended: Callable[[Call], bool],
) -> Unwrapped[Call]:
    """Split `calls` (in start order) into real calls and Tool Search's controls.

    A wrapper's inner calls are real calls of their own (their lines and spans are there), so
    the wrapper only needs taking out; one without an inner call that has not ended yet is
    returned in `open_wrappers` (it may still call a tool).
    """
    real = [c for c in calls if name(c) not in CONTROLS]
    controls = [c for c in calls if name(c) in CONTROLS]
    wrapped = {outer for c in real if (outer := wrapper_call_id(call_id(c), name(c)))}
    open_wrappers = [
        c
        for c in controls
        if name(c) in WRAPPERS and not ended(c) and (call_id(c) or "") not in wrapped
    ]
    return Unwrapped(real, controls, open_wrappers)
