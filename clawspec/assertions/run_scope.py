"""The scope a run-record assertion judges, and how its messages name what it found.

The scope is the assertion's: a plain scenario's run or a turn's run, every turn's runs for a
conversation's `then`, each with the sub-agents it spawned, read from OpenClaw's record of its
runs (`clawspec.evidence.record`) with the gateway's refusals applied. A failed call whose
refusal cannot be told yet makes a verdict it could change `error` (`judged`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from clawspec.assertions.base import EvalContext, Verdict
from clawspec.status import Status
from clawspec.text import clean, one_line, pluralize, quote_list, valid_unicode

# The record's reader is needed only to evaluate: `clawspec validate` builds the assertion
# models without importing it (tests/test_startup.py).
if TYPE_CHECKING:
    from clawspec.gateway.trajectory.values import ToolCall, Trajectory

CODE_MODE = "tool_search_code"
SHOWN_CHARS = 160  # of a value, in a verdict's message


def plain(text: str, limit: int = 80) -> str:
    """A recorded name (a key, a stop reason) as a message shows it, unquoted."""
    return one_line(clean(valid_unicode(text)), limit)


def shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """A value as a message quotes it: JSON on one line, masked, without control characters,
    lone surrogates replaced, cut to `limit`."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    quoted = json.dumps(text, ensure_ascii=False) if isinstance(value, str) else text
    return one_line(clean(valid_unicode(quoted)), limit)


@dataclass(frozen=True)
class Run:
    """A run of the scope and what a message names it by."""

    label: str
    run: Trajectory


@dataclass(frozen=True)
class Scope:
    """The scope's runs (refusals applied) and the failed calls whose refusal is not known."""

    runs: tuple[Trajectory, ...]
    labels: tuple[str, ...]  # one per top-level run: "run <id>", "turn 2"
    undecided: frozenset[tuple[str, str]]
    waited_s: float

    def each(self) -> Iterator[Run]:
        """Every run, each sub-agent's run on its own after its parent's."""

        def walk(run: Trajectory, label: str) -> Iterator[Run]:
            yield Run(label, run)
            for child in run.children:
                yield from walk(child, f"sub-agent '{child.agent}' run {child.run_id}")

        for run, label in zip(self.runs, self.labels, strict=True):
            yield from walk(run, label)

    def calls(self) -> Iterator[tuple[Run, ToolCall]]:
        """Every executed call of every run, in order."""
        for run in self.each():
            for call in run.run.calls:
                yield run, call

    def refused(self) -> list[tuple[Run, ToolCall]]:
        return [(run, call) for run in self.each() for call in run.run.tool_calls if call.refused]

    def without_undecided(self) -> Scope:
        """The scope with every undecided call taken as refused."""
        runs = tuple(run.with_refusals(self.undecided) for run in self.runs)
        return replace(self, runs=runs, undecided=frozenset())

    @property
    def subject(self) -> str:
        """What a message calls the whole scope."""
        if len(self.labels) == 1:
            return self.labels[0]
        return f"the {len(self.labels)} turns"


def scope_of(ctx: EvalContext) -> Scope | Verdict:
    from clawspec.evidence.record import executed, run_records

    found = run_records(ctx)
    if isinstance(found, Verdict):
        return found
    done = executed(ctx, found)
    if ctx.run.transcript is not None:
        labels = tuple(f"turn {entry.turn + 1}" for entry in ctx.run.transcript)
        if len(labels) != len(done.runs):  # a turn without a run id: name the runs instead
            labels = tuple(f"run {run.run_id}" for run in done.runs)
    else:
        labels = tuple(f"run {run.run_id}" for run in done.runs)
    return Scope(done.runs, labels, done.undecided, done.waited_s)


def judged(ctx: EvalContext, judge: Callable[[Scope], Verdict]) -> Verdict:
    """`judge` on the scope; when failed calls whose refusal is not known yet could change the
    verdict, `error` saying which and why."""
    scope = scope_of(ctx)
    if isinstance(scope, Verdict):
        return scope
    verdict = judge(scope)
    if not scope.undecided or verdict.status is Status.ERROR:
        return verdict
    other = judge(scope.without_undecided())
    if other.status is verdict.status:
        return verdict
    names = quote_list(
        sorted(
            {
                c.name
                for r in scope.each()
                for c in r.run.tool_calls
                if call_key(r, c) in scope.undecided
            }
        )
    )
    return Verdict.errored(
        f"{verdict.message}, but {pluralize(len(scope.undecided), 'failed call')} of {names} may "
        f"have been refused by the gateway (not calls): ClawSpec's plugin records of "
        f"{'that run' if len({k[0] for k in scope.undecided}) == 1 else 'those runs'} were not "
        f"complete after waiting {scope.waited_s:.1f} s (raise the scenario's `timeout` if the "
        "gateway is slow)"
    )


def call_key(run: Run, call: ToolCall) -> tuple[str, str]:
    return run.run.run_id, call.tool_call_id


def is_code_mode(call: ToolCall) -> bool:
    """A Tool Search code-mode call whose inner calls are not recorded: its tools are unknown."""
    return call.name == CODE_MODE and not call.args_known


def hidden_reasons(scope: Scope, tool: str, *, code_mode: bool = True) -> list[str]:
    """Why calls of `tool` could be missing from the scope's calls (each reason a clause):
    code-mode calls (unless `code_mode` is False), calls recorded without their tool's name,
    runs read only in part."""
    reasons = []
    code = sum(1 for _, call in scope.calls() if is_code_mode(call))
    if code and code_mode and tool != CODE_MODE:
        reasons.append(
            f"{pluralize(code, 'Tool Search code-mode call')} ({CODE_MODE}) made calls the "
            f"record does not hold one by one: they could be calls of '{tool}'"
        )
    nameless = sum(1 for _, call in scope.calls() if not call.name_known)
    if nameless:
        reasons.append(
            f"OpenClaw recorded {pluralize(nameless, 'call')} without the tool's name (the "
            f"event was over its size limit): {'it' if nameless == 1 else 'they'} could be "
            f"'{tool}'"
        )
    capped = [run for run in scope.each() if run.run.capped]
    if capped:
        reasons.append(capped_note(capped))
    return reasons


def capped_note(runs: list[Run]) -> str:
    notes = "; ".join(dict.fromkeys(n for r in runs for n in r.run.cut if n.startswith("more")))
    return (
        f"the record of {quote_list([r.label for r in runs])} has more events than ClawSpec "
        f"reads ({notes}): the calls after those were not read"
    )


def call_place(run: Run, call: ToolCall) -> str:
    index = next(i for i, c in enumerate(run.run.calls, 1) if c is call)
    return f"tool call {index} of {run.label}"  # of every call of the run, whatever the tool


def times_called(count: int) -> str:
    """'called once', 'called 3 times': how often the tool of the message was called."""
    return "called once" if count == 1 else f"called {count:,} times"


def tools_called(scope: Scope) -> str:
    """The tools the scope called, with their counts, for a message."""
    counts: dict[str, int] = {}
    for _, call in scope.calls():
        counts[call.name] = counts.get(call.name, 0) + 1
    if not counts:
        return "no tools called"
    items = [f"'{name}' ({count})" for name, count in counts.items()]
    more = f" … and {len(items) - 5} more" if len(items) > 5 else ""
    return "tools called: " + ", ".join(items[:5]) + more


def refused_clause(scope: Scope, tool: str) -> str:
    attempts = [call for _, call in scope.refused() if call.name == tool]
    if not attempts:
        return ""
    answer = attempts[0].result_text
    said = f': "{one_line(answer, 160)}"' if answer else ""
    return f"; '{tool}' was attempted {pluralize(len(attempts), 'time')} but refused{said}"
