"""Each tool call's arguments in the report, from OpenClaw's run record (the log has none).

A call the log (or the trace) lists is matched to the record's call by its tool call id, else by
its place among its run's calls of that tool; a call that matches none keeps `args` null: the
report never guesses. Without a log or a trace the record's own calls are listed (refused ones
left out, as the log leaves them out).

The arguments are masked first (a secret cut in two would no longer be found), then cut at
`limits.tool_args_bytes` bytes of their JSON text: a cut call's `args` is that start of the
text, a string, with `args_cut` true and `args_bytes` the whole text's size. A scenario keeps at
most ARGS_TOTAL_BYTES of arguments in all (never less than one call's `tool_args_bytes`): the
calls after that budget are cut shorter, down to an empty string, each cut marked.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from clawspec.reports.model import ToolCallRecord
from clawspec.secrets import mask
from clawspec.text import valid_unicode

if TYPE_CHECKING:
    from clawspec.evidence.record import RunRecords
    from clawspec.gateway.trajectory.values import ToolCall, Trajectory

DEFAULT_ARGS_BYTES = 64 * 1024  # limits.tool_args_bytes' default
ARGS_TOTAL_BYTES = 1 << 20  # a scenario's arguments in all, bytes of JSON text
# Deeper arguments are kept as text: the report's own checks walk every value recursively.
MAX_DEPTH = 64


def with_args(
    tools: Sequence[ToolCallRecord],
    call_ids: Sequence[str | None],
    found: RunRecords | None,
    limit: int = DEFAULT_ARGS_BYTES,
    most: int | None = None,
) -> list[ToolCallRecord]:
    """`tools` with the arguments the record gives them (masked, cut), `call_ids` their tool
    call ids in the same order (None: not known); the record's own calls (the first `most`)
    when `tools` is empty. Unchanged without a record."""
    if found is None:
        return list(tools)
    from clawspec.evidence.record import runs_of

    runs = list(runs_of(found.runs))
    budget = _Budget(limit)
    if not tools:
        own = [(run, call) for run in runs for call in run.tool_calls if not call.refused]
        return [_record_call(run, call, budget) for run, call in own[:most]]
    matched = _match(tools, call_ids, runs)
    return [
        _with(tool, call, budget) if call is not None else tool
        for tool, call in zip(tools, matched, strict=True)
    ]


def _match(
    tools: Sequence[ToolCallRecord], call_ids: Sequence[str | None], runs: Iterable[Trajectory]
) -> list[ToolCall | None]:
    """The record's call for each of `tools`: by (run, id), by an id no other run uses, else the
    next unmatched call of the same tool in the same run."""
    by_id: dict[str, list[tuple[str, ToolCall]]] = {}
    by_run: dict[str, list[ToolCall]] = {}
    for run in runs:
        for call in run.tool_calls:
            by_id.setdefault(call.tool_call_id, []).append((run.run_id, call))
            by_run.setdefault(run.run_id, []).append(call)
    used: set[int] = set()
    out: list[ToolCall | None] = []
    for position, tool in enumerate(tools):
        call_id = call_ids[position] if position < len(call_ids) else None
        pick: ToolCall | None = None
        if call_id:
            same = by_id.get(call_id, [])
            ours = [call for run_id, call in same if run_id == tool.run_id]
            if len(ours) == 1:
                pick = ours[0]
            elif len(same) == 1:
                pick = same[0][1]
        if pick is None and tool.run_id is not None:
            pick = next(
                (
                    call for call in by_run.get(tool.run_id, ())
                    if id(call) not in used and call.name == tool.name and not call.refused
                ),
                None,
            )  # fmt: skip
        if pick is not None and (id(pick) in used or pick.name != tool.name):
            pick = None  # one record call answers one log call, and only a call of its tool
        if pick is not None:
            used.add(id(pick))
        out.append(pick)
    return out


def _with(tool: ToolCallRecord, call: ToolCall, budget: _Budget) -> ToolCallRecord:
    if not call.args_known:
        return tool
    return tool.model_copy(update=budget.take(call.args))


def _record_call(run: Trajectory, call: ToolCall, budget: _Budget) -> ToolCallRecord:
    fields = budget.take(call.args) if call.args_known else {}
    return ToolCallRecord(
        name=call.name, agent=run.agent, run_id=run.run_id, error=call.success is False, **fields
    )


class _Budget:
    """What is left of the scenario's arguments budget."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.left = max(ARGS_TOTAL_BYTES, limit)

    def take(self, args: Any) -> dict[str, Any]:
        """`args` masked, whole or cut, as ToolCallRecord fields."""
        masked = _masked(args, 0)
        try:
            if masked is _TOO_DEEP:
                text = json.dumps(args, ensure_ascii=False, separators=(",", ":"), default=str)
                masked, whole = None, mask(valid_unicode(text))
            else:
                whole = json.dumps(masked, ensure_ascii=False, separators=(",", ":"))
        except (RecursionError, ValueError, TypeError):
            return {}  # not representable as JSON text: left out, never guessed
        data = whole.encode("utf-8", "replace")
        room = min(self.limit, self.left)
        if masked is not None and len(data) <= room:
            self.left -= len(data)
            return {"args": masked}
        # Cut on a character boundary: "ignore" drops the half of a character at the end.
        head = data[:room].decode("utf-8", "ignore")
        self.left -= len(head.encode("utf-8"))
        return {"args": mask(head), "args_cut": True, "args_bytes": len(data)}


_TOO_DEEP = object()


def _masked(value: Any, depth: int) -> Any:
    """`value` with every string in it (keys too) masked; _TOO_DEEP past MAX_DEPTH."""
    if depth > MAX_DEPTH:
        return _TOO_DEEP
    if isinstance(value, str):
        return mask(valid_unicode(value))
    if isinstance(value, list | tuple):
        items = [_masked(item, depth + 1) for item in value]
        return _TOO_DEEP if any(item is _TOO_DEEP for item in items) else items
    if isinstance(value, dict):
        pairs = [(mask(valid_unicode(str(k))), _masked(v, depth + 1)) for k, v in value.items()]
        return _TOO_DEEP if any(v is _TOO_DEEP for _, v in pairs) else dict(pairs)
    return value
