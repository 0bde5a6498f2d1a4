"""What a run index keeps of the lines it read: runs, tool calls, and where each line is.

`index.LogIndex` records these while it reads (one per run start, tool start, line naming ids);
`scope` and `legacy` work on them afterwards. They live apart from the index so that those
modules can use them without importing the index that uses them.
"""

from __future__ import annotations

from dataclasses import dataclass

from clawspec.gateway.logs.facts import LineFacts


@dataclass(frozen=True)
class ToolCall:
    """One tool start: name (exact), the run that called it, when, and where in the log."""

    name: str
    run_id: str
    time: str | None
    line: int  # 1-based, counted from the start offset of the indexed slice
    tool_call_id: str | None = None


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
