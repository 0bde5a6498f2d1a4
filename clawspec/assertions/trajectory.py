"""Run-record assertions: what the agent did, judged on OpenClaw's own record of its runs.

The record (`clawspec.evidence.record`: the agent's trajectory store) holds each call's tool
and arguments, the messages sent through messaging tools and how each run ended. The scope is
the assertion's: a plain scenario's run or a turn's run, every turn's runs for a conversation's
`then`, each with the sub-agents it spawned. A record that cannot be read makes every type here
`error` with the reason, never a pass or a skip.

Refusals are decided as for the log (`clawspec.gateway.refusals`): a call the gateway answered
without running the tool is not a call. A failed call whose refusal cannot be told yet (the
plugin's records of its run were late) makes a verdict it could change `error`.

Tool Search's wrappers are already unwrapped by the reader; a code-mode call whose inner calls
are not recorded (`args_known` False) leaves its tool calls unknown: a verdict they could change
is `error` saying so, never a pass. So do a call OpenClaw recorded without its tool's name (an
event over its size limit) and a run with more events than ClawSpec reads (its later calls).

OpenClaw cuts and redacts what it records of a call's arguments (`ToolCall.cuts`: a string over
32,768 characters, a value 6 levels deep, the 65th key or item, secrets): the rest is compared
as sent, and a comparison that touches a cut part is not decided — `tool_called_with` is then
`error` naming the part, unless another call matches whole. `no_tool_loop` never counts calls
as the same through a cut part (a marker is not the value); when calls that could be the same
would make a loop longer than `max_repeats`, it is `error` saying so. `tool_call_count` counts
calls, whatever their arguments.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator, model_validator

from clawspec.assertions.arguments import (
    Matcher,
    check_args,
    cut_reason,
    search_each,
)
from clawspec.assertions.base import Assertion, EvalContext, Verdict
from clawspec.assertions.documents import same_value
from clawspec.assertions.patterns import check_pattern
from clawspec.assertions.registry import register
from clawspec.assertions.run_scope import (
    CODE_MODE,
    Run,
    Scope,
    call_place,
    capped_note,
    hidden_reasons,
    is_code_mode,
    judged,
    plain,
    refused_clause,
    scope_of,
    shown,
    times_called,
    tools_called,
)
from clawspec.text import clean, one_line, pluralize, quote_list, valid_unicode

# The record's reader is needed only to evaluate: `clawspec validate` builds these models without
# importing it (tests/test_startup.py).
if TYPE_CHECKING:
    from clawspec.gateway.trajectory.values import SentMessage, ToolCall, Trajectory

MAX_DIFFS = 6  # differing keys named in one message


# --- the types ----------------------------------------------------------------------------------


@register(
    category="run record",
    example='tool: write\nargs:\n  path: notes.md\n  content: {matches: "^# Notes"}',
)
class ToolCalledWith(Assertion):
    """A tool was called with the expected arguments (OpenClaw's run record)."""

    type: Literal["tool_called_with"]
    tool: str = Field(min_length=1, description="Tool name (exact, case-sensitive).")
    args: dict[str, Any] = Field(
        description="Expected arguments: literal values, or {matches: <regex>} (re.search on a "
        "string, on the JSON text of any other value); nested mappings match as a subset."
    )
    match: Literal["partial", "exact"] = Field(
        "partial",
        description="partial: the call may have more arguments; exact: no other keys, nested "
        "mappings included (but those in `ignore`).",
    )
    ignore: list[str] | None = Field(
        None,
        description="With match: exact, argument keys left out of the comparison (dotted for "
        "nested keys: options.verbose).",
    )

    @field_validator("args")
    @classmethod
    def _patterns_compile(cls, value: dict[str, Any]) -> dict[str, Any]:
        check_args(value)
        return value

    @model_validator(mode="after")
    def _ignore_with_exact(self) -> ToolCalledWith:
        if self.ignore is not None:
            if self.match != "exact":
                raise ValueError("'ignore' applies only with match: exact")
            both = [key for key in self.ignore if key in self.args]
            if both:
                raise ValueError(f"{quote_list(both)} in both 'args' and 'ignore'")
        return self

    def evaluate(self, ctx: EvalContext) -> Verdict:
        return judged(ctx, self._judge)

    def _judge(self, scope: Scope) -> Verdict:
        calls = [(run, call) for run, call in scope.calls() if call.name == self.tool]
        known = [(run, call) for run, call in calls if call.args_known]
        matcher = Matcher(self.match == "exact", frozenset(self.ignore or ()))
        for _, call in known:  # the first pass asks for the pattern searches
            matcher.compare(call.args, self.args)
        problem = matcher.decide()
        if problem is not None:
            return Verdict.errored(problem)
        compared = [(run, call, *matcher.compare(call.args, self.args)) for run, call in known]
        for run, call, problems, open_parts in compared:
            if not problems and not open_parts:
                return Verdict.passed(
                    f"'{self.tool}' called with the expected arguments ({call_place(run, call)}): "
                    f"{shown(call.args)}"
                )
        diffs = [(run, call, problems) for run, call, problems, _ in compared]
        undecided = [(run, call, parts) for run, call, problems, parts in compared if not problems]
        unknown = [call for _, call in calls if not call.args_known]
        code = [call for _, call in scope.calls() if is_code_mode(call)]
        why = self._unknown(unknown, code, scope)
        if undecided:
            run, call, parts = undecided[0]
            others = (
                f" (and {pluralize(len(undecided) - 1, 'other call')} alike)"
                if len(undecided) > 1
                else ""
            )
            return Verdict.errored(
                f"'{self.tool}' may have been called with the expected arguments, but in "
                f"{call_place(run, call)}{others} OpenClaw recorded {_diffs(parts)}: "
                f"{'it' if len(parts) == 1 else 'they'} cannot be compared"
            )
        if not calls:
            text = (
                f"'{self.tool}' not called in {scope.subject}{refused_clause(scope, self.tool)}; "
                f"{tools_called(scope)}"
            )
            return Verdict.errored(f"{text}, {why}") if why else Verdict.failed(text)
        run, call, problems = min(diffs, key=lambda d: len(d[2])) if diffs else (None, None, [])
        text = f"no call of '{self.tool}' with the expected arguments in {scope.subject}"
        if run is not None and call is not None:
            text += (
                f" ({times_called(len(calls))}); the closest, {call_place(run, call)}, "
                f"differs in {_diffs(problems)}"
            )
        if why:
            return Verdict.errored(f"{text}, {why}")
        return Verdict.failed(text)

    def _unknown(self, unknown: list[ToolCall], code: list[ToolCall], scope: Scope) -> str:
        """Why calls whose arguments (or tool) are not recorded leave the verdict open, else
        ""."""
        parts = []
        if unknown:
            notes = quote_list(list(dict.fromkeys(c.note or "not recorded" for c in unknown)))
            parts.append(
                f"{pluralize(len(unknown), 'call')} of '{self.tool}' whose arguments the "
                f"record does not hold ({notes}) could match"
            )
        if code:
            parts.append(
                f"{pluralize(len(code), 'Tool Search code-mode call')} ({CODE_MODE}) made calls "
                "the record does not hold one by one: they could include it"
            )
        parts.extend(hidden_reasons(scope, self.tool, code_mode=False))
        return "but " + " and ".join(parts) if parts else ""


def _diffs(problems: list[str]) -> str:
    text = "; ".join(problems[:MAX_DIFFS])
    more = len(problems) - MAX_DIFFS
    return text + (f"; and {more} more" if more > 0 else "")


@register(
    category="run record",
    example="tool: web_search\nmin: 1\nmax: 3",
)
class ToolCallCount(Assertion):
    """A tool was called (executed, refusals not counted) between min and max times."""

    one_of = (("min", "max"),)
    type: Literal["tool_call_count"]
    tool: str = Field(min_length=1, description="Tool name (exact, case-sensitive).")
    min: int | None = Field(None, ge=0, description="Fewest calls allowed.")
    max: int | None = Field(None, ge=0, description="Most calls allowed.")

    @model_validator(mode="after")
    def _min_not_over_max(self) -> ToolCallCount:
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"'min' ({self.min}) is greater than 'max' ({self.max})")
        return self

    def evaluate(self, ctx: EvalContext) -> Verdict:
        return judged(ctx, self._judge)

    def _bounds(self) -> str:
        if self.min is not None and self.max is not None:
            return f"{self.min} to {self.max}" if self.min != self.max else f"exactly {self.min}"
        return f"at least {self.min}" if self.min is not None else f"at most {self.max}"

    def _judge(self, scope: Scope) -> Verdict:
        count = sum(1 for _, call in scope.calls() if call.name == self.tool)
        hidden = hidden_reasons(scope, self.tool)
        limit = {"min": self.min, "max": self.max}
        text = (
            f"'{self.tool}' called {pluralize(count, 'time')} in {scope.subject}, expected "
            f"{self._bounds()}{refused_clause(scope, self.tool)}"
        )
        if self.max is not None and count > self.max:
            return Verdict.failed(text, count, limit)  # unknown calls only add to it
        low = self.min is not None and count < self.min
        if hidden and (low or self.max is not None):
            return Verdict.errored(f"{text}, but " + " and ".join(hidden))
        if low:
            return Verdict.failed(f"{text}; {tools_called(scope)}", count, limit)
        return Verdict.passed(text, count, limit)


@register(
    category="run record",
    example="max_repeats: 2",
)
class NoToolLoop(Assertion):
    """No run called the same tool with the same arguments more than max_repeats times in a row."""

    type: Literal["no_tool_loop"]
    max_repeats: int = Field(
        3, ge=1, description="Most identical calls in a row allowed (each run on its own)."
    )

    def evaluate(self, ctx: EvalContext) -> Verdict:
        return judged(ctx, self._judge)

    def _judge(self, scope: Scope) -> Verdict:
        longest: tuple[int, Run | None, ToolCall | None, int] = (0, None, None, 0)
        doubts: list[str] = []
        for run in scope.each():
            calls = run.run.calls
            streak = 0
            for index, call in enumerate(calls):
                same = index > 0 and _same_call(calls[index - 1], call)
                streak = streak + 1 if same else 1
                if streak > longest[0]:
                    longest = (streak, run, call, index + 1 - streak + 1)
            doubts.extend(self._doubts(run))
        streak, where, call, first = longest
        if where is not None and call is not None and streak > self.max_repeats:
            return Verdict.failed(
                f"{where.label} called '{call.name}' with the same arguments "
                f"{pluralize(streak, 'time')} in a row (calls {first} to {first + streak - 1}), "
                f"more than max_repeats {self.max_repeats}: {shown(call.args)}",
                streak,
                self.max_repeats,
            )
        runs = sum(1 for _ in scope.each())
        seen = (
            f"longest: '{call.name}' {pluralize(streak, 'time')} in {where.label}"
            if where is not None and call is not None
            else "no tool calls"
        )
        text = (
            f"no run repeated a call more than {self.max_repeats} times in a row "
            f"({pluralize(runs, 'run')}; {seen})"
        )
        if doubts:
            more = f"; and {len(doubts) - 3} more" if len(doubts) > 3 else ""
            return Verdict.errored(f"{text}, but {'; '.join(doubts[:3])}{more}")
        return Verdict.passed(text, streak, self.max_repeats)

    def _doubts(self, run: Run) -> list[str]:
        """Why calls of `run` the record does not hold whole could make a loop longer than
        max_repeats: a code-mode call hides any calls; calls that could be one call repeated
        (arguments not read, or cut by OpenClaw, or a call without its tool's name) in a row
        longer than max_repeats; calls past the bound on the events read."""
        calls = run.run.calls
        doubts = []
        if any(is_code_mode(call) for call in calls):
            doubts.append(
                f"in {run.label} a Tool Search code-mode call's calls, which the record does "
                "not hold one by one, could repeat"
            )
        start, last = 0, None  # the window of calls that could be one call repeated
        for index, call in enumerate((*calls, None)):
            if call is not None and (last is None or _maybe_same(last, call)):
                last = call if call.name_known or last is None else last
                continue
            window = calls[start:index]
            if len(window) > self.max_repeats and not all(
                _same_call(a, b) for a, b in itertools.pairwise(window)
            ):
                doubts.append(
                    f"in {run.label} calls {start + 1} to {index} could be one call repeated "
                    f"{len(window)} times: {_why_unsure(window)}"
                )
            start, last = index, call
        if run.run.capped:
            doubts.append(capped_note([run]) + ": they could repeat")
        return doubts


def _same_call(a: ToolCall, b: ToolCall) -> bool:
    return (
        a.name == b.name
        and a.name_known
        and a.args_known
        and b.args_known
        and not a.cuts
        and not b.cuts
        and same_value(a.args, b.args)
    )


def _maybe_same(a: ToolCall, b: ToolCall) -> bool:
    """Whether `a` and `b` could be the same call, as far as the record tells."""
    if not a.name_known or not b.name_known:
        return True
    if a.name != b.name:
        return False
    if not a.args_known or not b.args_known:
        return True
    return _maybe_equal(a.args, b.args)


def _maybe_equal(x: Any, y: Any) -> bool:
    """Whether values OpenClaw recorded could have been equal when sent: its markers stand for
    any value but one whose size they name otherwise."""
    from clawspec.evidence.record import ARRAY_SIZE_LIMIT, TRUNCATED_KEY

    cx, cy = cut_reason(x), cut_reason(y)
    if cx is not None or cy is not None:
        if cx == cy and isinstance(x, dict) and isinstance(y, dict):
            sizes = [
                (x.get(k), y.get(k))
                for k in ("originalChars", "originalLength", "originalKeys", "bytes")
            ]
            if any(type(a) is int and type(b) is int and a != b for a, b in sizes):
                return False  # OpenClaw says they were of different sizes
        return True
    if isinstance(x, dict) and isinstance(y, dict):
        cut_x, cut_y = TRUNCATED_KEY in x, TRUNCATED_KEY in y
        if cut_x and cut_y and not _maybe_equal(x[TRUNCATED_KEY], y[TRUNCATED_KEY]):
            return False
        keys_x, keys_y = set(x) - {TRUNCATED_KEY}, set(y) - {TRUNCATED_KEY}
        if not cut_x and not cut_y and keys_x != keys_y:
            return False
        return all(_maybe_equal(x[k], y[k]) for k in keys_x & keys_y)
    if isinstance(x, list) and isinstance(y, list):
        cut_x = bool(x) and cut_reason(x[-1]) == ARRAY_SIZE_LIMIT
        cut_y = bool(y) and cut_reason(y[-1]) == ARRAY_SIZE_LIMIT
        if cut_x or cut_y:
            if cut_x and cut_y and not _maybe_equal(x[-1], y[-1]):
                return False
            known_x, known_y = x[:-1] if cut_x else x, y[:-1] if cut_y else y
            return all(_maybe_equal(a, b) for a, b in zip(known_x, known_y, strict=False))
        return len(x) == len(y) and all(_maybe_equal(a, b) for a, b in zip(x, y, strict=True))
    return bool(same_value(x, y))


def _why_unsure(window: tuple[ToolCall, ...]) -> str:
    """What keeps calls that could be one call repeated from being told apart."""
    for call in window:
        if not call.name_known:
            return f"OpenClaw recorded one without the tool's name ({call.note})"
    for call in window:
        if not call.args_known:
            return (
                "the record does not hold the arguments of some (arguments too large to read: "
                f"{call.note or 'not recorded'})"
            )
    cut = next(cut for call in window for cut in call.cuts)
    return (
        f"OpenClaw recorded their '{window[0].name}' argument '{cut.where}' {cut.detail}: "
        "whether they were the same cannot be told"
    )


# --- messages sent ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Seen:
    """The messages a scope's runs sent, the runs whose record does not tell, and the matches."""

    scope: Scope
    sent: list[tuple[Run, SentMessage]]
    unknown: list[str]
    found: list[tuple[Run, SentMessage]]


class _MessageFields(Assertion):
    """The fields `message_sent` and `message_not_sent` share."""

    to: str | None = Field(
        None, min_length=1, description="Target the message went to (exact, as recorded)."
    )
    text: str | None = Field(
        None,
        min_length=1,
        description="Text the message contains (whitespace collapsed, case-folded).",
    )
    pattern: str | None = Field(
        None, min_length=1, description="Python regular expression searched for in the message."
    )

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None and "{{" not in value:
            check_pattern(value)
        return value

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("'text' must not be blank")
        return value

    @model_validator(mode="after")
    def _text_or_pattern(self) -> _MessageFields:
        if self.text is not None and self.pattern is not None:
            raise ValueError("give either 'text' or 'pattern', not both")
        return self

    def _wanted(self) -> str:
        parts = ["a message"]
        if self.to is not None:
            parts.append(f"to '{self.to}'")
        if self.text is not None:
            parts.append(f"containing '{self.text}'")
        if self.pattern is not None:
            parts.append(f"matching '{self.pattern}'")
        return " ".join(parts)

    def _look(self, ctx: EvalContext) -> _Seen | Verdict:
        """What the scope's runs sent and which of it matches, or why it cannot be told."""
        scope = scope_of(ctx)
        if isinstance(scope, Verdict):
            return scope
        sent, unknown = self._messages(scope)
        found = self._matching(sent)
        if isinstance(found, str):
            return Verdict.errored(found)
        return _Seen(scope, sent, unknown, found)

    def _messages(self, scope: Scope) -> tuple[list[tuple[Run, SentMessage]], list[str]]:
        """The messages the scope's runs sent, and the runs whose record does not tell."""
        from clawspec.evidence.record import SentMessage

        sent: list[tuple[Run, SentMessage]] = []
        unknown: list[str] = []
        for run in scope.each():
            record = run.run
            if record.final_status is None or any("trace.artifacts" in n for n in record.cut):
                unknown.append(run.label)  # no readable trace.artifacts: nothing is known
                continue
            sent.extend((run, message) for message in record.sent)
            targeted = {m.text for m in record.sent if m.text is not None}
            for text in record.sent_texts:  # a text recorded without its target
                if text not in targeted:
                    sent.append((run, SentMessage(None, None, None, text)))
        return sent, unknown

    def _matching(self, sent: list[tuple[Run, SentMessage]]) -> list[tuple[Run, SentMessage]] | str:
        """The messages that match, or why it could not be decided (a message whose text
        OpenClaw kept only as its marker might hold what is asked for)."""
        found = [(r, m) for r, m in sent if self.to is None or m.to == self.to]
        # A message whose target is not known either might be the one asked for.
        cut = [
            (r, m)
            for r, m in sent
            if m.text_cut is not None and (self.to is None or m.to in (self.to, None))
        ]
        if self.text is not None:
            want = " ".join(self.text.split()).casefold()
            found = [
                (r, m)
                for r, m in found
                if m.text is not None and want in " ".join(m.text.split()).casefold()
            ]
        if self.pattern is not None:
            texts = [(r, m) for r, m in found if m.text is not None]
            results = (
                search_each([(self.pattern, m.text or "") for _, m in texts], "the messages sent")
                if texts
                else []
            )
            if isinstance(results, str):
                return results
            found = [pair for pair, hit in zip(texts, results, strict=True) if hit]
        if not found and cut and (self.text is not None or self.pattern is not None):
            run, message = cut[0]
            assert message.text_cut is not None
            return (
                f"{self._wanted()}: cannot be told, OpenClaw kept no text of a message "
                f"{run.label} sent ({message.text_cut.detail})"
            )
        return found


def _message(run: Run, message: SentMessage) -> str:
    to = f" to '{one_line(clean(valid_unicode(message.to)), 80)}'" if message.to else ""
    via = f" via {message.tool}" if message.tool else ""
    text = shown(message.text) if message.text is not None else "(no text recorded)"
    return f"{run.label}{via}{to}: {text}"


def _sent_list(sent: list[tuple[Run, SentMessage]]) -> str:
    if not sent:
        return "no message sent"
    items = [_message(r, m) for r, m in sent[:3]]
    more = f"; and {len(sent) - 3} more" if len(sent) > 3 else ""
    return f"{pluralize(len(sent), 'message')} sent: " + "; ".join(items) + more


@register(
    category="run record",
    example='to: "telegram:123456789"\ntext: "ready for pickup"',
)
class MessageSent(_MessageFields):
    """The agent sent a message through a messaging tool (to a target, with a text)."""

    type: Literal["message_sent"]

    def evaluate(self, ctx: EvalContext) -> Verdict:
        seen = self._look(ctx)
        if isinstance(seen, Verdict):
            return seen
        if seen.found:
            return Verdict.passed(f"{self._wanted()} was sent: {_message(*seen.found[0])}")
        text = f"{self._wanted()} was not sent in {seen.scope.subject} ({_sent_list(seen.sent)})"
        if seen.unknown:
            return Verdict.errored(f"{text}, but {_no_artifacts(seen.unknown)}")
        return Verdict.failed(text)


@register(
    category="run record",
    example='to: "telegram:123456789"',
    negative=True,
)
class MessageNotSent(_MessageFields):
    """The agent sent no message (or none to a target, with a text) through a messaging tool."""

    type: Literal["message_not_sent"]

    def evaluate(self, ctx: EvalContext) -> Verdict:
        seen = self._look(ctx)
        if isinstance(seen, Verdict):
            return seen
        if seen.found:
            found = seen.found
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            return Verdict.failed(f"{self._wanted()} was sent: {_message(*found[0])}{more}")
        if seen.unknown:
            return Verdict.errored(
                f"cannot tell that {self._wanted()} was not sent: {_no_artifacts(seen.unknown)}"
            )
        runs = sum(1 for _ in seen.scope.each())
        return Verdict.passed(
            f"{self._wanted()} was not sent in {seen.scope.subject} ({pluralize(runs, 'run')}; "
            f"{_sent_list(seen.sent)})"
        )


def _no_artifacts(labels: list[str]) -> str:
    return (
        f"the record of {quote_list(labels)} has no readable trace.artifacts event, where "
        "OpenClaw writes the messages a run sent"
    )


# --- how the runs ended -------------------------------------------------------------------------


@register(
    category="run record",
    example="{}",
)
class RunCompleted(Assertion):
    """Every run in scope, sub-agents included, ended with stop reason `stop`."""

    type: Literal["run_completed"]

    def evaluate(self, ctx: EvalContext) -> Verdict:
        scope = scope_of(ctx)
        if isinstance(scope, Verdict):
            return scope
        problems = []
        runs = list(scope.each())
        for run in runs:
            why = _not_completed(run.run)
            if why:
                problems.append(f"{run.label}: {why}")
        if problems:
            shown_problems = "; ".join(problems[:5])
            more = f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
            return Verdict.failed(
                f"{pluralize(len(problems), 'run')} of {len(runs)} did not complete: "
                f"{shown_problems}{more}",
                len(problems),
                0,
            )
        labels = ", ".join(r.label for r in runs[:5])
        more = f" and {len(runs) - 5} more" if len(runs) > 5 else ""
        return Verdict.passed(
            f"{pluralize(len(runs), 'run')} ended with stop reason 'stop' ({labels}{more})", 0, 0
        )


# What OpenClaw's stop reasons other than `stop` mean (its model layer's values): said beside
# the reason, since a cut answer is recorded with a final status of success.
_STOP_REASONS = {
    "length": "the model's answer was cut at its output limit",
    "error": "the model call failed",
    "aborted": "the run was stopped before the model answered",
    "timeout": "the run timed out",
    "cancelled": "the run was cancelled",
    "toolUse": "the model's last answer asked for a tool and the run ended there",
}


def _not_completed(run: Trajectory) -> str:
    """How the run did not end normally, else ""."""
    problems = []
    if run.timed_out:
        problems.append("timed out")
    if run.aborted:
        problems.append("aborted")
    if run.stop_reason != "stop":
        reason = "none recorded" if run.stop_reason is None else f"'{plain(run.stop_reason)}'"
        meaning = _STOP_REASONS.get(run.stop_reason or "")
        problems.append(
            f"stop reason {reason}{f' ({meaning})' if meaning else ''}, expected 'stop'"
        )
    if not run.has_ended:
        problems.append("its record has no session.ended (the run did not end)")
    if run.pending_children:
        problems.append(f"{pluralize(len(run.pending_children), 'sub-agent run')} did not end")
    if problems and run.final_status is not None:
        problems.append(f"final status '{plain(run.final_status)}'")
    return ", ".join(problems)
