"""The behaviour diff: what the agent did now against the baseline, even when both passed.

Tool names are compared as sets (added, removed), then the order of their first calls among the
tools both runs used (reordered), then how often each was called. Delegations (the agent ids
handed work to) are compared the same way. Nothing is reported when either run has no evidence:
a report without evidence says nothing about what the agent did.

Arguments: the n-th call of a tool now is compared with its n-th call in the baseline, after the
volatile patterns (config `volatile_patterns`, and the clock's dates and times) are replaced in
every string, so ids and timestamps are not changes. Only calls whose arguments both reports
hold are compared: against a baseline stored without them (an older ClawSpec, or a run whose
record was not read) names alone are compared, and arguments cut for size on either side are
compared only when both are cut. `tools_args_changed` names, per tool, the call (1-based) and
each top-level argument that differs with both values (`{"write": [{"call": 1, "changed":
{"path": {"baseline": "a.md", "current": "b.md"}}}]}`); an argument one side lacks has no value
on that side. At most MAX_ARG_CHANGES calls per tool are listed, values cut to VALUE_CHARS.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from clawspec.reports.model import ScenarioEvidence, ToolCallRecord
from clawspec.text import cut
from clawspec.traffic.volatile import DEFAULT_VOLATILE_PATTERNS

if TYPE_CHECKING:
    from collections.abc import Callable

    from clawspec.traffic.normalize import Normalizer

MAX_ARG_CHANGES = 5  # calls listed per tool; a loop that changed every call says so once
VALUE_CHARS = 200  # an argument's value in the diff, as JSON text when not a string
WHOLE = "(arguments)"  # the key for arguments that are not a mapping (or were cut)


def behaviour_diff(
    current: ScenarioEvidence | None,
    baseline: ScenarioEvidence | None,
    volatile_patterns: Sequence[str] = DEFAULT_VOLATILE_PATTERNS,
) -> dict[str, Any]:
    """Return the differences (empty when the behaviour is the same or unknown)."""
    if current is None or baseline is None:
        return {}
    diff = _sequence_diff(
        [t.name for t in current.tools], [t.name for t in baseline.tools], "tools"
    )
    if changed := _args_diff(current.tools, baseline.tools, tuple(volatile_patterns)):
        diff["tools_args_changed"] = changed
    diff |= _sequence_diff(current.delegations, baseline.delegations, "delegations")
    return diff


def _args_diff(
    current: Sequence[ToolCallRecord], baseline: Sequence[ToolCallRecord], patterns: tuple[str, ...]
) -> dict[str, list[dict[str, Any]]]:
    """Per tool, its calls whose arguments differ (both known) after the volatile parts."""
    now, before = _calls_by_tool(current), _calls_by_tool(baseline)
    if not now or not before:
        return {}  # the common cases: no arguments on one side (an older baseline)
    text = _normalizer(patterns).text
    found: dict[str, list[dict[str, Any]]] = {}
    for name, calls in now.items():
        for position, (mine, theirs) in enumerate(zip(calls, before.get(name, []), strict=False)):
            if mine is None or theirs is None or mine.args_cut != theirs.args_cut:
                continue
            changed = _changed(_strings(mine.args, text), _strings(theirs.args, text))
            if changed and len(found.setdefault(name, [])) < MAX_ARG_CHANGES:
                found[name].append({"call": position + 1, "changed": changed})
    return found


def _calls_by_tool(tools: Sequence[ToolCallRecord]) -> dict[str, list[ToolCallRecord | None]]:
    """Each tool's calls in order (None: arguments not known); {} when none has arguments."""
    if all(tool.args is None for tool in tools):
        return {}
    calls: dict[str, list[ToolCallRecord | None]] = {}
    for tool in tools:
        calls.setdefault(tool.name, []).append(tool if tool.args is not None else None)
    return calls


def _changed(current: Any, baseline: Any) -> dict[str, dict[str, Any]]:
    if current == baseline:
        return {}
    if not isinstance(current, dict) or not isinstance(baseline, dict):
        return {WHOLE: {"baseline": _shown(baseline), "current": _shown(current)}}
    out: dict[str, dict[str, Any]] = {}
    for key in list(dict.fromkeys([*baseline, *current])):
        if baseline.get(key, _ABSENT) == current.get(key, _ABSENT):
            continue
        sides = {}
        if key in baseline:
            sides["baseline"] = _shown(baseline[key])
        if key in current:
            sides["current"] = _shown(current[key])
        out[key] = sides
    return out


_ABSENT = object()


def _shown(value: Any) -> Any:
    """`value`, or its JSON text cut to VALUE_CHARS when that is longer."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if len(text) <= VALUE_CHARS:
        return value
    return cut(text, VALUE_CHARS)


def _strings(value: Any, text: Callable[[str], str]) -> Any:
    """`value` with `text` applied to every string in it (keys too)."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, list):
        return [_strings(item, text) for item in value]
    if isinstance(value, dict):
        return {text(str(k)): _strings(v, text) for k, v in value.items()}
    return value


@functools.lru_cache(maxsize=8)
def _normalizer(patterns: tuple[str, ...]) -> Normalizer:
    # Built once per pattern list: a comparison of thousands of scenarios shares it.
    from clawspec.traffic.normalize import Normalizer

    return Normalizer.build(fields=(), patterns=patterns)


def _sequence_diff(current: Sequence[str], baseline: Sequence[str], what: str) -> dict[str, Any]:
    if current == baseline:
        return {}  # the common case, and the cheap one (5,000-scenario comparisons)
    now, before = _counts(current), _counts(baseline)
    first_now = list(dict.fromkeys(current))
    first_before = list(dict.fromkeys(baseline))
    diff: dict[str, Any] = {}
    added = [name for name in first_now if name not in before]
    removed = [name for name in first_before if name not in now]
    if added:
        diff[f"{what}_added"] = added
    if removed:
        diff[f"{what}_removed"] = removed
    common_now = [name for name in first_now if name in before]
    common_before = [name for name in first_before if name in now]
    if common_now != common_before:
        diff[f"{what}_reordered"] = {"baseline": common_before, "current": common_now}
    calls = {name: [before[name], now[name]] for name in common_now if before[name] != now[name]}
    if calls:
        diff[f"{what}_calls"] = calls
    return diff


def _counts(names: Sequence[str]) -> dict[str, int]:
    # A plain dict: for a handful of names it is several times cheaper than Counter.
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return counts
