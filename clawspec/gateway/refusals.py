"""Tool calls the gateway refused: answered with an error before the tool ran.

OpenClaw logs `embedded run tool start` / `tool end` lines for every call the model makes, also
for one it refuses without running the tool: with Tool Search on (the default since 2026.9.6) a
tool called by name that is not offered directly (`sessions_spawn`) is answered "Tool
sessions_spawn not found"; a plugin's `before_tool_call` block or arguments that do not
validate are answered the same way. Those lines are the same as a real call's. What tells them
apart is what ClawSpec's plugin records (openclaw_plugin/FORMAT.md):

- `tool_result` (the `after_tool_call` hook, for every call): the gateway's answer, `isError`
  and its `error` text;
- `tool` (the `tool.execution.*` events): `started` when the tool's execution begins, so a
  refused call has none; a `before_tool_call` block has a `blocked` record (with its `reason`)
  instead.

A refusal is a call answered with an error (or blocked) whose execution never started
(checked on OpenClaw 2026.9.6 for "not found" and a plugin's block; 2026.9.5 records real calls
the same way). The events reach the plugin later than the hook (OpenClaw queues them): a run's
refusals are known once its `harness` run has ended, the plugin's last record of a run. Before
that, and without plugin records at all, no call counts as refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from clawspec.gateway.plugin_records import PluginRecord, read_plugin_file

CallKey = tuple[str, str]  # (run id, tool call id)


@dataclass(frozen=True)
class Refusal:
    """A call the gateway answered without running the tool: its name and the answer."""

    tool: str
    run_id: str
    tool_call_id: str
    answer: str


@dataclass
class ToolAnswers:
    """What the plugin's records say about a set of runs' tool calls, fed record by record."""

    executed: set[CallKey] = field(default_factory=set)  # calls the tool ran for
    # calls answered with an error, or blocked before they ran
    errors: dict[CallKey, Refusal] = field(default_factory=dict)
    harness: dict[str, int] = field(default_factory=dict)  # run id -> harness runs still open
    ended: set[str] = field(default_factory=set)  # runs with a finished harness run

    def add(self, record: PluginRecord) -> None:
        run, call = record.run_id, record.tool_call_id
        if record.kind == "tool" and run and call:
            if record.phase != "blocked":
                self.executed.add((run, call))  # a later phase always follows `started`
            elif (run, call) not in self.errors:  # the hook's answer text comes first
                reason = record.extra.get("reason") or record.extra.get("deniedReason")
                answer = f"blocked: {reason}" if isinstance(reason, str) else "blocked"
                self.errors[(run, call)] = Refusal(record.tool_name or "?", run, call, answer)
        elif record.kind == "tool_result" and record.is_error and run and call:
            answer = record.error or "the gateway answered with an error"
            self.errors[(run, call)] = Refusal(record.tool_name or "?", run, call, answer)
        elif record.kind == "harness" and run:
            step = 1 if record.phase == "started" else -1
            self.harness[run] = self.harness.get(run, 0) + step
            if step < 0:
                self.ended.add(run)

    def refusals(self) -> dict[CallKey, Refusal]:
        """The refused calls of the runs whose records are complete."""
        return {
            key: refusal
            for key, refusal in self.errors.items()
            if key not in self.executed and self.settled(key[0])
        }

    def settled(self, run_id: str) -> bool:
        """The run's harness run ended: every record of its calls is in."""
        return run_id in self.ended and self.harness.get(run_id, 0) <= 0

    def open_runs(self, run_ids: Iterable[str]) -> list[str]:
        """The runs among `run_ids` the plugin saw start whose records are not complete yet."""
        return [r for r in run_ids if r in self.harness and not self.settled(r)]


def refusals(records: Iterable[PluginRecord]) -> dict[CallKey, Refusal]:
    """The refused calls in `records` (of the runs whose records are complete)."""
    answers = ToolAnswers()
    for record in records:
        answers.add(record)
    return answers.refusals()


class AnswerReader:
    """The plugin output from `offset` on, read forward only: each `read` adds the lines written
    since the last one (a half-written last line waits for the next read)."""

    def __init__(self, path: Path, offset: int = 0) -> None:
        self.path = path
        self.offset = offset
        self.answers = ToolAnswers()

    def read(self) -> ToolAnswers:
        result = read_plugin_file(self.path, self.offset)
        for record in result.records:
            self.answers.add(record)
        self.offset = result.next_offset
        return self.answers
