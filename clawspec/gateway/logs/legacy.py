"""What older ClawSpec setups' `key=value` lines say about a run: tools, delegations, tokens.

Those setups write one `key=value` line per event carrying `run_id=` (`facts.facts_of` splits
the fields once per process). They have no run starts, hooks or sessions: a line belongs to the
run when its `run_id` is one ClawSpec asked for, and the run counts as found and complete as
soon as such a line is there (there is no completion marker to wait for). This module reads
the lines of the run: the tools they started, the agents they delegated to, and the tokens
they report (`total` is input + output when not given).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from clawspec.gateway.logs.model import ToolCall
from clawspec.gateway.plugin_records import TokenUsage

_LEGACY_TOKENS = {
    "input_tokens": "input", "prompt_tokens": "input", "output_tokens": "output",
    "completion_tokens": "output", "total_tokens": "total",
}  # fmt: skip
_TOOL_END_EVENTS = ("_end", "_result", "_done", "_error", "_completed")


@dataclass(frozen=True)
class LegacyLine:
    """A legacy line naming a run: its run id, its fields, its line number."""

    run_id: str
    fields: dict[str, str]
    line: int


@dataclass(frozen=True)
class LegacyRun:
    """What the legacy lines of a run say, in line order."""

    calls: list[ToolCall]  # tool starts (end events are not calls)
    agents: list[str]  # agents delegated to, repeats included
    usage: TokenUsage | None  # None: no line reports tokens


def read_legacy(entries: Iterable[LegacyLine]) -> LegacyRun:
    """Read the tools, delegations and token usage of `entries` (the run's legacy lines)."""
    calls: list[ToolCall] = []
    agents: list[str] = []
    usage = {"input": 0, "output": 0, "total": 0}
    has_usage = False
    usage_lines = 0
    for entry in entries:
        f = entry.fields
        event = f.get("event", "")
        if f.get("tool") and not event.endswith(_TOOL_END_EVENTS):
            calls.append(ToolCall(f["tool"], entry.run_id, _legacy_time(f), entry.line))
        target = f.get("to_agent") or f.get("delegate")
        if not target and any(w in event for w in ("deleg", "spawn", "handoff")):
            target = f.get("agent")
        if target:
            agents.append(target)
        tokens = {slot: 0 for slot in usage}
        for name, slot in _LEGACY_TOKENS.items():
            if f.get(name, "").isdigit():
                tokens[slot] += int(f[name])
                has_usage = True
        tokens["total"] = tokens["total"] or tokens["input"] + tokens["output"]
        usage_lines += any(tokens.values())
        for slot, value in tokens.items():
            usage[slot] += value
    total = (
        TokenUsage(usage["input"], usage["output"], usage["total"], usage_lines)
        if has_usage
        else None
    )
    return LegacyRun(calls, agents, total)


def _legacy_time(fields: dict[str, str]) -> str | None:
    return fields.get("ts") or fields.get("time")
