"""What a run index keeps of the lines it read: runs, tool calls, and where each line is.

`index.LogIndex` records these while it reads (one per run start, tool start, line naming ids);
`scope` and `legacy` work on them afterwards. They live apart from the index so that those
modules can use them without importing the index that uses them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from clawspec.gateway.logs.facts import Hook, LineFacts

if TYPE_CHECKING:
    from clawspec.gateway.logs.legacy import LegacyLine


@dataclass(frozen=True)
class ToolCall:
    """One tool start: name (exact), the run that called it, when, and where in the log."""

    name: str
    run_id: str
    time: str | None
    line: int  # 1-based, counted from the start offset of the indexed slice
    tool_call_id: str | None = None


@dataclass(frozen=True)
class RefusedCall:
    """A call the gateway answered without running the tool (`gateway.refusals`)."""

    call: ToolCall
    answer: str  # the gateway's answer, e.g. "Tool sessions_spawn not found"


@dataclass
class Run:
    """An embedded run seen starting in the slice (a run may log several start lines)."""

    run_id: str
    session_id: str
    trace_id: str | None
    spans: set[str]
    parent_spans: set[str | None]
    line: int
    done: bool = False


# Where a line is and what it names, read back only for log_entry: (line number, segment,
# offset, length, the line's facts). A plain tuple: one per line per run index, and a run index
# reads a few hundred lines at concurrency 16 (a named tuple is built by a Python function).
Ref = tuple[int, int, int, int, LineFacts]


@dataclass
class Gathered:
    """The raw material a run index gathers while it reads, kept whole so that `scope` can
    work the run's scope out again each time more lines come in."""

    runs: dict[str, Run] = field(default_factory=dict)  # run id -> its start
    keys: dict[str, str] = field(default_factory=dict)  # session id -> session key
    hooks: list[Hook] = field(default_factory=list)  # hook completions
    tools: list[ToolCall] = field(default_factory=list)  # every tool start, wrappers included
    failures: list[tuple[str, str]] = field(default_factory=list)  # (run id, the failure)
    legacy: list[LegacyLine] = field(default_factory=list)  # `key=value` lines with a run id
    refs: list[Ref] = field(default_factory=list)  # where every line is
    ended: set[str] = field(default_factory=set)  # runs whose agent-end line was seen
    tool_ends: dict[tuple[str, str], str | None] = field(default_factory=dict)  # when calls ended
